// The core's matrix-product seam (src/core/gemm.h): every transpose combination and accumulation,
// on shapes below and above the size where a build with oneDNN hands products to it, against a
// plain double-precision product. Float sums differ in the last bits between libraries, so the
// tolerance is relative to the size of the dot products.
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
