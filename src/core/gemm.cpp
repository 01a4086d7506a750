#include "gemm.h"

#include <string>
#include <vector>

#ifdef HOPPER_WITH_ONEDNN
#include <pthread.h>
#include <signal.h>

#include <dnnl.h>
// libgomp's, declared here rather than through omp.h, which clang (the sanitizer and fuzz builds)
// does not find without libomp-dev.
extern "C" void omp_set_num_threads(int);
#endif

#include "hopper/error.h"
#include "hopper/matrix_products.h"

namespace hopper::detail {

namespace {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using ConstMap = Eigen::Map<const MatrixF, Eigen::Unaligned>;
using Map = Eigen::Map<MatrixF, Eigen::Unaligned>;

template <typename L, typename R>
void assign(Map c, const L& l, const R& r, bool accumulate) {
    if (accumulate) c.noalias() += l * r;
    else c.noalias() = l * r;
}

void eigen_gemm(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k, const float* a, const float* b,
                float* c, bool accumulate) {
    Map cm(c, m, n);
    const ConstMap am(a, ta ? k : m, ta ? m : k), bm(b, tb ? n : k, tb ? k : n);
    if (!ta && !tb) assign(cm, am, bm, accumulate);
    else if (!ta) assign(cm, am, bm.transpose(), accumulate);
    else if (!tb) assign(cm, am.transpose(), bm, accumulate);
    else assign(cm, am.transpose(), bm.transpose(), accumulate);
}

#ifdef HOPPER_WITH_ONEDNN
// Below this many multiply-adds Eigen is as fast or faster (see gemm.h) and has no call overhead.
constexpr double kOneDnnMinMultiplyAdds = 1 << 20;

void onednn_gemm(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k, const float* a, const float* b,
                 float* c, bool accumulate) {
    // oneDNN runs its products on OpenMP threads. hopper's parallelism is one process (or thread)
    // per segment, so each thread that multiplies asks for one: no thread pool inside a
    // PostgreSQL backend, and the same kernels, hence the same bits, in every process.
    thread_local const bool one_thread = (omp_set_num_threads(1), true);
    (void)one_thread;
    // oneDNN up to 3.10 points rsp at a heap workspace inside its AVX2/AVX-512 sgemm kernels, so a
    // signal handled meanwhile writes its frame over the heap (oneDNN issue #4845, fixed in 3.11;
    // Debian 12 has 2.6). A PostgreSQL backend gets signals all the time (a parallel worker's
    // SIGUSR1, timeouts, cancel): fit_multiple on two segments aborted with "corrupted size vs.
    // prev_size" in about half of the runs. So signals wait until the product is done (<1 ms; two
    // system calls per product, ~1 us against ~300 us of arithmetic) and are handled then.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    // dnnl_sgemm is row-major: the column-major C is the row-major C^T = op(B)^T op(A)^T.
    const dnnl_status_t st = dnnl_sgemm(tb ? 'T' : 'N', ta ? 'T' : 'N', n, m, k, 1.0f, b, tb ? n : k, a, ta ? k : m,
                                        accumulate ? 1.0f : 0.0f, c, m);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (st == dnnl_out_of_memory) throw Error(ErrorKind::OutOfMemory, "out of memory in a matrix product (oneDNN)");
    if (st != dnnl_success)
        throw Error(ErrorKind::Internal, "oneDNN matrix product failed (status " + std::to_string(int(st)) + ")");
}
#endif

}  // namespace

void gemm(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k, const float* a, const float* b, float* c,
          bool accumulate) {
    if (m == 0 || n == 0) return;
#ifdef HOPPER_WITH_ONEDNN
    if (k > 0 && double(m) * double(n) * double(k) >= kOneDnnMinMultiplyAdds) {
        onednn_gemm(ta, tb, m, n, k, a, b, c, accumulate);
        return;
    }
#endif
    eigen_gemm(ta, tb, m, n, k, a, b, c, accumulate);
}

}  // namespace hopper::detail

namespace hopper {

void warm_up_matrix_products() noexcept {
#ifdef HOPPER_WITH_ONEDNN
    try {
        // One product above the cut makes oneDNN generate its kernels for this machine's ISA.
        constexpr Eigen::Index m = 128, n = 128, k = 64;
        static_assert(double(m * n * k) >= detail::kOneDnnMinMultiplyAdds, "the warm-up product must go to oneDNN");
        std::vector<float> a(std::size_t(m * k), 0.0f), b(std::size_t(k * n), 0.0f), c(std::size_t(m * n));
        detail::gemm(false, false, m, n, k, a.data(), b.data(), c.data());
    } catch (...) {
        // Only a head start: a product that fails later fails with its own error.
    }
#endif
}

const char* matrix_product_backend() noexcept {
#ifdef HOPPER_WITH_ONEDNN
    return "onednn";
#else
    return "eigen";
#endif
}

}  // namespace hopper
