// The core's matrix-product seam (src/core/gemm.h): every transpose combination and accumulation,
// on shapes below and above the size where a build with oneDNN hands products to it, against a
// plain double-precision product. Float sums differ in the last bits between libraries, so the
// tolerance is relative to the size of the dot products.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <pthread.h>
#include <signal.h>

#include <gtest/gtest.h>

#include "gemm.h"
#include "hopper/error.h"
#include "hopper/matrix_products.h"

namespace {

std::vector<float> values(std::size_t n, uint32_t seed) {
    std::vector<float> v(n);
    for (auto& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = float(seed >> 8) / float(1 << 24) - 0.5f;
    }
    return v;
}

// Element (i, j) of op(M) where M is stored column-major with the given rows.
float at(const std::vector<float>& m, long rows, bool transposed, long i, long j) {
    return transposed ? m[std::size_t(j + i * rows)] : m[std::size_t(i + j * rows)];
}

class Gemm : public ::testing::TestWithParam<std::tuple<bool, bool, bool, int>> {};

TEST_P(Gemm, MatchesADoublePrecisionProduct) {
    const auto [ta, tb, accumulate, size] = GetParam();
    // size 0: tiny (Eigen in every build); 1: the MLP's first layer (above the oneDNN cut).
    // size 2: odd sizes (a buffer of 255 rows), above the cut too.
    const long m = size == 1   ? 128
                   : size == 2 ? 131
                               : 7,
               n = size == 1   ? 256
                   : size == 2 ? 255
                               : 5,
               k = size == 1   ? 784
                   : size == 2 ? 781
                               : 3;
    const std::vector<float> a = values(std::size_t(m * k), 1), b = values(std::size_t(k * n), 2);
    std::vector<float> c = values(std::size_t(m * n), 3);
    const std::vector<float> c0 = c;
    hopper::detail::gemm(ta, tb, m, n, k, a.data(), b.data(), c.data(), accumulate);
    const long a_rows = ta ? k : m, b_rows = tb ? n : k;
    for (long j = 0; j < n; ++j)
        for (long i = 0; i < m; ++i) {
            double want = accumulate ? c0[std::size_t(i + j * m)] : 0.0;
            for (long p = 0; p < k; ++p) want += double(at(a, a_rows, ta, i, p)) * double(at(b, b_rows, tb, p, j));
            ASSERT_NEAR(c[std::size_t(i + j * m)], want, 1e-5 * std::sqrt(double(k)))
                << "C(" << i << "," << j << ") with " << hopper::matrix_product_backend();
        }
}

INSTANTIATE_TEST_SUITE_P(AllForms, Gemm,
                         ::testing::Combine(::testing::Bool(), ::testing::Bool(), ::testing::Bool(),
                                            ::testing::Values(0, 1, 2)));

TEST(Gemm, EmptyProductsWriteNothing) {
    std::vector<float> c{1.0f, 2.0f};
    hopper::detail::gemm(false, false, 0, 2, 3, nullptr, nullptr, c.data());
    hopper::detail::gemm(false, false, 2, 0, 3, nullptr, nullptr, c.data());
    EXPECT_EQ(c, (std::vector<float>{1.0f, 2.0f}));
    // k = 0: C = 0 (a sum of nothing), or left as it is when accumulating.
    hopper::detail::gemm(false, false, 2, 1, 0, nullptr, nullptr, c.data(), true);
    EXPECT_EQ(c, (std::vector<float>{1.0f, 2.0f}));
    hopper::detail::gemm(false, false, 2, 1, 0, nullptr, nullptr, c.data());
    EXPECT_EQ(c, (std::vector<float>{0.0f, 0.0f}));
}

// Mixed precision: the products oneDNN takes multiply bfloat16 copies (8 bits of mantissa), so each
// product of two inputs is off by up to 2^-8 relative, and the dot product by about that times the
// root of its length times the inputs' sizes; small products stay float32, bit for bit.
TEST_P(Gemm, BFloat16ProductsAreCloseToTheExactProduct) {
    const auto [ta, tb, accumulate, size] = GetParam();
    if (!hopper::detail::bfloat16_products_supported()) GTEST_SKIP() << hopper::detail::bfloat16_products_missing();
    const long m = size == 0 ? 7 : 131, n = size == 0 ? 5 : 255, k = size == 0 ? 3 : 781;
    const std::vector<float> a = values(std::size_t(m * k), 1), b = values(std::size_t(k * n), 2);
    std::vector<float> c = values(std::size_t(m * n), 3), exact = c;
    const std::vector<float> c0 = c;
    {
        const hopper::detail::BFloat16Products on(true);
        hopper::detail::gemm(ta, tb, m, n, k, a.data(), b.data(), c.data(), accumulate);
    }
    hopper::detail::gemm(ta, tb, m, n, k, a.data(), b.data(), exact.data(), accumulate);
    if (size == 0) {
        EXPECT_EQ(c, exact) << "a product below oneDNN's cut stays float32";
        return;
    }
    const long a_rows = ta ? k : m, b_rows = tb ? n : k;
    double worst = 0;
    for (long j = 0; j < n; ++j)
        for (long i = 0; i < m; ++i) {
            double want = accumulate ? c0[std::size_t(i + j * m)] : 0.0;
            for (long p = 0; p < k; ++p) want += double(at(a, a_rows, ta, i, p)) * double(at(b, b_rows, tb, p, j));
            worst = std::max(worst, std::abs(c[std::size_t(i + j * m)] - want));
        }
    // Inputs in [-0.5, 0.5): products below 0.25, errors of 2^-8 relative, random signs.
    EXPECT_LT(worst, 0.25 * std::ldexp(1.0, -8) * 4 * std::sqrt(double(k)));
    EXPECT_GT(worst, 1e-5 * std::sqrt(double(k))) << "the product did not go through bfloat16";
}

TEST(Gemm, BFloat16IsRefusedWithoutSupport) {
    hopper::detail::bfloat16_support_override = 0;
    try {
        const hopper::detail::BFloat16Products on(true);
        ADD_FAILURE() << "no error";
    } catch (const hopper::Error& e) { EXPECT_EQ(e.kind(), hopper::ErrorKind::FeatureNotSupported); }
    { const hopper::detail::BFloat16Products off(false); }  // float32 needs nothing
    hopper::detail::bfloat16_support_override = -1;
}

TEST(Gemm, BFloat16ProductsAreDeterministic) {
    if (!hopper::detail::bfloat16_products_supported()) GTEST_SKIP() << hopper::detail::bfloat16_products_missing();
    const long m = 128, n = 256, k = 784;
    const std::vector<float> a = values(std::size_t(m * k), 7), b = values(std::size_t(k * n), 8);
    std::vector<float> first(std::size_t(m * n)), second(std::size_t(m * n));
    const hopper::detail::BFloat16Products on(true);
    hopper::detail::gemm(false, true, m, n, k, a.data(), b.data(), first.data());
    hopper::detail::gemm(false, true, m, n, k, a.data(), b.data(), second.data());
    EXPECT_EQ(first, second);
}

TEST(Gemm, NamesItsBackend) {
    const std::string b = hopper::matrix_product_backend();
#ifdef HOPPER_WITH_ONEDNN
    EXPECT_EQ(b, "onednn");
#else
    EXPECT_EQ(b, "eigen");
#endif
}

}  // namespace

// Signals during large products (a PostgreSQL backend gets them all the time) must not corrupt the
// heap: oneDNN 2.6's sgemm kernels point rsp at the heap while they run (src/core/gemm.cpp). One
// thread multiplies and allocates while another signals it every few microseconds; a corrupted
// heap aborts the process (glibc's checks) or changes the products.
namespace {
std::atomic<long> signals_handled{0};
void count_signal(int) { signals_handled.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

TEST(Gemm, SignalsDuringProductsLeaveTheHeapIntact) {
    struct sigaction sa = {}, old = {};
    sa.sa_handler = count_signal;
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);
    const long m = 128, n = 256, k = 784;
    const std::vector<float> a = values(std::size_t(m * k), 1), b = values(std::size_t(k * n), 2);
    std::atomic<bool> done{false};
    std::vector<float> first;
    std::thread worker([&] {
        for (int i = 0; i < 400; ++i) {
            std::vector<std::vector<float>> churn;  // allocations beside the product's workspace
            for (int j = 0; j < 8; ++j) churn.emplace_back(std::size_t(64 + 97 * j), float(j));
            std::vector<float> c(std::size_t(m * n));
            hopper::detail::gemm(false, false, m, n, k, a.data(), b.data(), c.data());
            if (first.empty()) first = c;
            ASSERT_EQ(c, first) << "product " << i;
        }
        done = true;
    });
    const pthread_t target = worker.native_handle();
    while (!done) {
        pthread_kill(target, SIGUSR2);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    worker.join();
    sigaction(SIGUSR2, &old, nullptr);
    EXPECT_GT(signals_handled.load(), 0);
}

TEST(Gemm, WarmUpLeavesProductsAsTheyWere) {
    // The postmaster warms the kernels up before it forks; products afterwards are the same.
    const long m = 128, n = 256, k = 784;
    const std::vector<float> a = values(std::size_t(m * k), 5), b = values(std::size_t(k * n), 6);
    std::vector<float> before(std::size_t(m * n)), after(std::size_t(m * n));
    hopper::detail::gemm(false, false, m, n, k, a.data(), b.data(), before.data());
    hopper::warm_up_matrix_products();
    hopper::warm_up_matrix_products();
    hopper::detail::gemm(false, false, m, n, k, a.data(), b.data(), after.data());
    EXPECT_EQ(before, after);
}
