// Deterministic random numbers, identical on every platform and standard library (std::
// distributions are not), so a seed reproduces a shuffle or an initialisation anywhere.
#pragma once

#include <cmath>
#include <cstdint>

namespace hopper {

// SplitMix64: a tiny, well-mixed 64-bit generator; also used as a hash of (seed, counters).
inline uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

// Mixes several values into one seed, for counter-based streams (e.g. seed, step, layer).
inline uint64_t mix_seed(uint64_t a, uint64_t b, uint64_t c = 0) {
    uint64_t s = a ^ 0x6A09E667F3BCC909ULL;
    splitmix64(s);
    s ^= b;
    splitmix64(s);
    s ^= c;
    return splitmix64(s);
}

class Rng {
public:
    explicit Rng(uint64_t seed) : state_(seed) {}
    uint64_t next_u64() { return splitmix64(state_); }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
    // Uniform integer in [0, n) without modulo bias (Lemire's method with rejection).
    uint64_t below(uint64_t n) {
        if (n <= 1) return 0;
        uint64_t threshold = (0 - n) % n;
        for (;;) {
            uint64_t r = next_u64();
            if (r >= threshold) return r % n;
        }
    }
    // Standard normal (Box-Muller; one value per call, the twin is discarded for simplicity).
    double normal() {
        double u1 = uniform();
        double u2 = uniform();
        if (u1 < 1e-300) u1 = 1e-300;
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }

private:
    uint64_t state_;
};

}  // namespace hopper
