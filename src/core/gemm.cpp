#include "gemm.h"

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#ifdef HOPPER_WITH_ONEDNN
#include <cpuid.h>
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

// oneDNN runs its products on OpenMP threads. hopper's parallelism is one process (or thread) per
// segment, so each thread that multiplies asks for one: no thread pool inside a PostgreSQL backend,
// and the same kernels, hence the same bits, in every process.
void one_openmp_thread() {
    thread_local const bool once = (omp_set_num_threads(1), true);
    (void)once;
}

// Signals wait while oneDNN multiplies (onednn_gemm says why).
class SignalsHeld {
public:
    SignalsHeld() {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &previous_);
    }
    ~SignalsHeld() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
    SignalsHeld(const SignalsHeld&) = delete;
    SignalsHeld& operator=(const SignalsHeld&) = delete;

private:
    sigset_t previous_;
};

void onednn_gemm(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k, const float* a, const float* b,
                 float* c, bool accumulate) {
    one_openmp_thread();
    // oneDNN up to 3.10 points rsp at a heap workspace inside its AVX2/AVX-512 sgemm kernels, so a
    // signal handled meanwhile writes its frame over the heap (oneDNN issue #4845, fixed in 3.11;
    // Debian 12 has 2.6). A PostgreSQL backend gets signals all the time (a parallel worker's
    // SIGUSR1, timeouts, cancel): fit_multiple on two segments aborted with "corrupted size vs.
    // prev_size" in about half of the runs. So signals wait until the product is done (<1 ms; two
    // system calls per product, ~1 us against ~300 us of arithmetic) and are handled then.
    dnnl_status_t st;
    {
        SignalsHeld held;
        // dnnl_sgemm is row-major: the column-major C is the row-major C^T = op(B)^T op(A)^T.
        st = dnnl_sgemm(tb ? 'T' : 'N', ta ? 'T' : 'N', n, m, k, 1.0f, b, tb ? n : k, a, ta ? k : m,
                        accumulate ? 1.0f : 0.0f, c, m);
    }
    if (st == dnnl_out_of_memory) throw Error(ErrorKind::OutOfMemory, "out of memory in a matrix product (oneDNN)");
    if (st != dnnl_success)
        throw Error(ErrorKind::Internal, "oneDNN matrix product failed (status " + std::to_string(int(st)) + ")");
}

void check(dnnl_status_t st, const char* what) {
    if (st == dnnl_success) return;
    if (st == dnnl_out_of_memory) throw Error(ErrorKind::OutOfMemory, "out of memory in a matrix product (oneDNN)");
    throw Error(ErrorKind::Internal,
                std::string("oneDNN ") + what + " failed (status " + std::to_string(int(st)) + ")");
}

// float32 -> bfloat16, rounded to nearest even (NaN stays NaN), as oneDNN and PyTorch convert.
void to_bfloat16(const float* src, std::size_t n, std::vector<uint16_t>& dst) {
    dst.resize(n);
    uint16_t* out = dst.data();
    for (std::size_t i = 0; i < n; ++i) {
        uint32_t u;
        std::memcpy(&u, src + i, sizeof u);
        out[i] = (u & 0x7fffffffu) > 0x7f800000u ? uint16_t((u >> 16) | 0x40u)
                                                 : uint16_t((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
}

// One oneDNN matmul per product shape on a thread, kept for the thread's life (creating one costs
// tens of microseconds; a step makes a few products of the same shapes).
struct BFloat16Matmul {
    dnnl_primitive_t primitive = nullptr;
    dnnl_memory_t src = nullptr, weights = nullptr, dst = nullptr;
};

class BFloat16Kernels {
public:
    BFloat16Kernels() {
        check(dnnl_engine_create(&engine_, dnnl_cpu, 0), "engine");
        check(dnnl_stream_create(&stream_, engine_, dnnl_stream_default_flags), "stream");
    }
    ~BFloat16Kernels() {
        for (auto& [shape, mm] : kernels_) {
            dnnl_memory_destroy(mm.src);
            dnnl_memory_destroy(mm.weights);
            dnnl_memory_destroy(mm.dst);
            dnnl_primitive_destroy(mm.primitive);
        }
        dnnl_stream_destroy(stream_);
        dnnl_engine_destroy(engine_);
    }

    // The column-major C (m x n) is the row-major C^T = op(B)^T op(A)^T: source op(B)^T (n x k),
    // weights op(A)^T (k x m), destination n x m, each described by its strides over the given
    // storage (so the bfloat16 copies keep A's and B's layouts).
    void multiply(bool ta, bool tb, dnnl_dim_t m, dnnl_dim_t n, dnnl_dim_t k, const uint16_t* a, const uint16_t* b,
                  float* c, bool accumulate) {
        const auto key = std::make_tuple(ta, tb, m, n, k, accumulate);
        auto it = kernels_.find(key);
        if (it == kernels_.end()) it = kernels_.emplace(key, create(ta, tb, m, n, k, accumulate)).first;
        const BFloat16Matmul& mm = it->second;
        check(dnnl_memory_set_data_handle(mm.src, const_cast<uint16_t*>(b)), "memory");
        check(dnnl_memory_set_data_handle(mm.weights, const_cast<uint16_t*>(a)), "memory");
        check(dnnl_memory_set_data_handle(mm.dst, c), "memory");
        const dnnl_exec_arg_t args[3] = {{DNNL_ARG_SRC, mm.src},
                                         {DNNL_ARG_WEIGHTS, mm.weights},
                                         {DNNL_ARG_DST, mm.dst}};
        SignalsHeld held;
        check(dnnl_primitive_execute(mm.primitive, stream_, 3, args), "matmul");
        check(dnnl_stream_wait(stream_), "matmul");
    }

private:
    BFloat16Matmul create(bool ta, bool tb, dnnl_dim_t m, dnnl_dim_t n, dnnl_dim_t k, bool accumulate) {
        dnnl_memory_desc_t src_md, weights_md, dst_md;
        const dnnl_dims_t src_dims = {n, k}, weights_dims = {k, m}, dst_dims = {n, m};
        const dnnl_dims_t src_strides = {tb ? 1 : k, tb ? n : 1};
        const dnnl_dims_t weights_strides = {ta ? 1 : m, ta ? k : 1};
        const dnnl_dims_t dst_strides = {m, 1};
        check(dnnl_memory_desc_init_by_strides(&src_md, 2, src_dims, dnnl_bf16, src_strides), "memory descriptor");
        check(dnnl_memory_desc_init_by_strides(&weights_md, 2, weights_dims, dnnl_bf16, weights_strides),
              "memory descriptor");
        check(dnnl_memory_desc_init_by_strides(&dst_md, 2, dst_dims, dnnl_f32, dst_strides), "memory descriptor");
        dnnl_matmul_desc_t desc;
        check(dnnl_matmul_desc_init(&desc, &src_md, &weights_md, nullptr, &dst_md), "matmul descriptor");
        dnnl_primitive_attr_t attr = nullptr;
        dnnl_post_ops_t post_ops = nullptr;
        if (accumulate) {  // C += ...: the sum post-op adds what C held
            check(dnnl_primitive_attr_create(&attr), "attributes");
            check(dnnl_post_ops_create(&post_ops), "post-ops");
            check(dnnl_post_ops_append_sum(post_ops, 1.0f), "post-ops");
            check(dnnl_primitive_attr_set_post_ops(attr, post_ops), "attributes");
        }
        dnnl_primitive_desc_t pd = nullptr;
        const dnnl_status_t st = dnnl_primitive_desc_create(&pd, &desc, attr, engine_, nullptr);
        if (post_ops) dnnl_post_ops_destroy(post_ops);
        if (attr) dnnl_primitive_attr_destroy(attr);
        check(st, "matmul descriptor");
        BFloat16Matmul mm;
        const dnnl_status_t made = dnnl_primitive_create(&mm.primitive, pd);
        dnnl_primitive_desc_destroy(pd);
        check(made, "matmul");
        check(dnnl_memory_create(&mm.src, &src_md, engine_, DNNL_MEMORY_NONE), "memory");
        check(dnnl_memory_create(&mm.weights, &weights_md, engine_, DNNL_MEMORY_NONE), "memory");
        check(dnnl_memory_create(&mm.dst, &dst_md, engine_, DNNL_MEMORY_NONE), "memory");
        return mm;
    }

    dnnl_engine_t engine_ = nullptr;
    dnnl_stream_t stream_ = nullptr;
    std::map<std::tuple<bool, bool, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, bool>, BFloat16Matmul> kernels_;
};

void bfloat16_gemm(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k, const float* a, const float* b,
                   float* c, bool accumulate) {
    one_openmp_thread();
    thread_local BFloat16Kernels kernels;
    thread_local std::vector<uint16_t> a16, b16;
    to_bfloat16(a, std::size_t(m) * std::size_t(k), a16);
    to_bfloat16(b, std::size_t(k) * std::size_t(n), b16);
    kernels.multiply(ta, tb, m, n, k, a16.data(), b16.data(), c, accumulate);
}

bool cpu_has_avx512_bf16() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    // CPUID leaf 7, sub-leaf 1: EAX bit 5 is AVX512_BF16.
    if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) == 0) return false;
    return (eax & (1u << 5)) != 0;
}
#endif

thread_local bool bfloat16_on = false;

}  // namespace

int bfloat16_support_override = -1;

bool bfloat16_products_supported() noexcept {
    if (bfloat16_support_override >= 0) return bfloat16_support_override == 1;
#ifdef HOPPER_WITH_ONEDNN
    static const bool supported = cpu_has_avx512_bf16();
    return supported;
#else
    return false;
#endif
}

std::string bfloat16_products_missing() {
#ifdef HOPPER_WITH_ONEDNN
    return "This CPU has no AVX512_BF16 instructions.";
#else
    return "This build of hopper has no oneDNN (libdnnl-dev), whose matmul multiplies in bfloat16.";
#endif
}

BFloat16Products::BFloat16Products(bool on) : previous_(bfloat16_on) {
    if (on && !bfloat16_products_supported())
        throw Error(ErrorKind::FeatureNotSupported, "precision 'bfloat16' is not supported on this machine",
                    bfloat16_products_missing(), "Train with precision='float32' (the default).");
    bfloat16_on = on;
}

BFloat16Products::~BFloat16Products() { bfloat16_on = previous_; }

void gemm(bool ta, bool tb, Eigen::Index m, Eigen::Index n, Eigen::Index k, const float* a, const float* b, float* c,
          bool accumulate) {
    if (m == 0 || n == 0) return;
#ifdef HOPPER_WITH_ONEDNN
    if (k > 0 && double(m) * double(n) * double(k) >= kOneDnnMinMultiplyAdds) {
        if (bfloat16_on && bfloat16_products_supported()) bfloat16_gemm(ta, tb, m, n, k, a, b, c, accumulate);
        else onednn_gemm(ta, tb, m, n, k, a, b, c, accumulate);
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
