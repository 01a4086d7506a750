// hopper_gemm_bench: the machine's float32 matrix-product limit on the layer shapes of the
// benchmark's MLP (784-128-10, minibatch 256), measured with Google Benchmark, compiled with the
// extension's flags (HOPPER_OPT, -O3 -march=native) and computed with Eigen exactly as the core
// computes them (column-major, unaligned maps over packed buffers; see src/core/network.cpp):
//
//   fwd1   Z1 (128 x n)  = W1 (128 x 784) * X (784 x n)
//   fwd2   Z2 (10 x n)   = W2 (10 x 128)  * A1 (128 x n)
//   bwd2w  gW2 (10 x 128)  = dZ2 (10 x n) * A1^T (n x 128)
//   bwd2x  dA1 (128 x n) = W2^T (128 x 10) * dZ2 (10 x n)
//   bwd1w  gW1 (128 x 784) = dZ1 (128 x n) * X^T (n x 784)
// (the core, like PyTorch and scikit-learn, never computes the input gradient W1^T * dZ1).
// "step" runs all five in sequence: the GEMM time of one minibatch step. "square1024" is a large
// square product, for reference. Each reports FLOP/s in the "FLOPS" counter (2 m n k per product).
//
// The same shapes with the other float32 GEMMs Debian packages, to choose the core's backend by
// measurement (issue 15): "<shape>@openblas" and "@blis" (cblas_sgemm, dlopen'ed so the program
// builds and runs without them), and "@onednn" (dnnl_sgemm). Each is asked for one thread; a backend that
// is not installed is skipped with a line on stderr. (libxsmm is not among them: Debian ships it as
// a static library that hands products of these sizes to a BLAS -- 2.6 GFLOP/s without one.)
//
//   hopper_gemm_bench [--batch N] [Google Benchmark flags, e.g. --benchmark_format=json]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <dlfcn.h>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

namespace {

using MatrixF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
using ConstMap = Eigen::Map<const MatrixF, Eigen::Unaligned>;
using Map = Eigen::Map<MatrixF, Eigen::Unaligned>;

int batch = 256;
constexpr int kIn = 784, kHidden = 128, kOut = 10;

// A buffer with values in [-0.5, 0.5) (dense data; the products do not depend on values).
std::vector<float> filled(std::size_t n) {
    std::vector<float> v(n);
    uint32_t s = 12345;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = float(s >> 8) / float(1 << 24) - 0.5f;
    }
    return v;
}

struct Mlp {
    std::vector<float> x = filled(std::size_t(kIn) * batch), w1 = filled(std::size_t(kHidden) * kIn),
                       w2 = filled(std::size_t(kOut) * kHidden), a1 = filled(std::size_t(kHidden) * batch),
                       dz2 = filled(std::size_t(kOut) * batch), dz1 = filled(std::size_t(kHidden) * batch),
                       z1 = std::vector<float>(std::size_t(kHidden) * batch),
                       z2 = std::vector<float>(std::size_t(kOut) * batch),
                       gw1 = std::vector<float>(std::size_t(kHidden) * kIn),
                       gw2 = std::vector<float>(std::size_t(kOut) * kHidden),
                       da1 = std::vector<float>(std::size_t(kHidden) * batch);
    void fwd1() {
        Map(z1.data(), kHidden, batch).noalias() = ConstMap(w1.data(), kHidden, kIn) * ConstMap(x.data(), kIn, batch);
    }
    void fwd2() {
        Map(z2.data(), kOut, batch).noalias() =
            ConstMap(w2.data(), kOut, kHidden) * ConstMap(a1.data(), kHidden, batch);
    }
    void bwd2w() {
        Map(gw2.data(), kOut, kHidden).noalias() =
            ConstMap(dz2.data(), kOut, batch) * ConstMap(a1.data(), kHidden, batch).transpose();
    }
    void bwd2x() {
        Map(da1.data(), kHidden, batch).noalias() =
            ConstMap(w2.data(), kOut, kHidden).transpose() * ConstMap(dz2.data(), kOut, batch);
    }
    void bwd1w() {
        Map(gw1.data(), kHidden, kIn).noalias() =
            ConstMap(dz1.data(), kHidden, batch) * ConstMap(x.data(), kIn, batch).transpose();
    }
};

double flops(int m, int n, int k) { return 2.0 * m * n * k; }

template <void (Mlp::*Product)()>
void run(benchmark::State& state, double f) {
    Mlp mlp;
    for (auto _ : state) {
        (mlp.*Product)();
        benchmark::ClobberMemory();
    }
    state.counters["FLOPS"] = benchmark::Counter(f, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_fwd1(benchmark::State& s) { run<&Mlp::fwd1>(s, flops(kHidden, batch, kIn)); }
void BM_fwd2(benchmark::State& s) { run<&Mlp::fwd2>(s, flops(kOut, batch, kHidden)); }
void BM_bwd2w(benchmark::State& s) { run<&Mlp::bwd2w>(s, flops(kOut, kHidden, batch)); }
void BM_bwd2x(benchmark::State& s) { run<&Mlp::bwd2x>(s, flops(kHidden, batch, kOut)); }
void BM_bwd1w(benchmark::State& s) { run<&Mlp::bwd1w>(s, flops(kHidden, kIn, batch)); }

void BM_step(benchmark::State& state) {
    Mlp mlp;
    for (auto _ : state) {
        mlp.fwd1();
        mlp.fwd2();
        mlp.bwd2w();
        mlp.bwd2x();
        mlp.bwd1w();
        benchmark::ClobberMemory();
    }
    const double f = 2 * flops(kHidden, batch, kIn) + 2 * flops(kOut, batch, kHidden) + flops(kHidden, batch, kOut);
    state.counters["FLOPS"] = benchmark::Counter(f, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_square1024(benchmark::State& state) {
    const int n = 1024;
    std::vector<float> a = filled(std::size_t(n) * n), b = filled(std::size_t(n) * n), c(std::size_t(n) * n);
    for (auto _ : state) {
        Map(c.data(), n, n).noalias() = ConstMap(a.data(), n, n) * ConstMap(b.data(), n, n);
        benchmark::ClobberMemory();
    }
    state.counters["FLOPS"] = benchmark::Counter(flops(n, n, n), benchmark::Counter::kIsIterationInvariantRate);
}

// Another GEMM behind one column-major signature: C (m x n) = op(A) (m x k) * op(B) (k x n).
using Gemm = std::function<void(bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                                float* c, int ldc)>;

struct Backend {
    std::string name;
    Gemm gemm;
};

void* open_first(std::initializer_list<const char*> paths) {
    for (const char* p : paths)
        if (void* h = dlopen(p, RTLD_NOW | RTLD_LOCAL)) return h;
    return nullptr;
}

// cblas_sgemm from a library loaded on its own (RTLD_LOCAL), so two BLAS never mix symbols.
Backend cblas_backend(const char* name, std::initializer_list<const char*> paths, const char* set_threads) {
    void* h = open_first(paths);
    if (!h) return {name, nullptr};
    using Fn = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
    auto fn = reinterpret_cast<Fn>(dlsym(h, "cblas_sgemm"));
    if (!fn) return {name, nullptr};
    if (auto threads = reinterpret_cast<void (*)(int)>(dlsym(h, set_threads))) threads(1);
    constexpr int kColMajor = 102, kNoTrans = 111, kTrans = 112;
    return {name, [fn](bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb,
                       float* c, int ldc) {
                fn(kColMajor, ta ? kTrans : kNoTrans, tb ? kTrans : kNoTrans, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
                   ldc);
            }};
}

// oneDNN's dnnl_sgemm is row-major: a column-major C is the row-major C^T = op(B)^T op(A)^T.
Backend onednn_backend() {
    void* h = open_first({"libdnnl.so.2", "libdnnl.so.3", "libdnnl.so"});
    if (!h) return {"onednn", nullptr};
    using Fn =
        int (*)(char, char, long, long, long, float, const float*, long, const float*, long, float, float*, long);
    auto fn = reinterpret_cast<Fn>(dlsym(h, "dnnl_sgemm"));
    if (!fn) return {"onednn", nullptr};
    return {"onednn",
            [fn](bool ta, bool tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
                 int ldc) { fn(tb ? 'T' : 'N', ta ? 'T' : 'N', n, m, k, 1.0f, b, ldb, a, lda, 0.0f, c, ldc); }};
}

// The five products of bench's MLP step, through a backend.
struct MlpProducts {
    Mlp m;
    Gemm g;
    void fwd1() { g(false, false, kHidden, batch, kIn, m.w1.data(), kHidden, m.x.data(), kIn, m.z1.data(), kHidden); }
    void fwd2() { g(false, false, kOut, batch, kHidden, m.w2.data(), kOut, m.a1.data(), kHidden, m.z2.data(), kOut); }
    void bwd2w() { g(false, true, kOut, kHidden, batch, m.dz2.data(), kOut, m.a1.data(), kHidden, m.gw2.data(), kOut); }
    void bwd2x() { g(true, false, kHidden, batch, kOut, m.w2.data(), kOut, m.dz2.data(), kOut, m.da1.data(), kHidden); }
    void bwd1w() { g(false, true, kHidden, kIn, batch, m.dz1.data(), kHidden, m.x.data(), kIn, m.gw1.data(), kHidden); }
};

void register_backend(const Backend& be) {
    struct Shape {
        const char* name;
        void (MlpProducts::*product)();
        double flop;
    };
    const Shape shapes[] = {{"fwd1", &MlpProducts::fwd1, flops(kHidden, batch, kIn)},
                            {"fwd2", &MlpProducts::fwd2, flops(kOut, batch, kHidden)},
                            {"bwd2w", &MlpProducts::bwd2w, flops(kOut, kHidden, batch)},
                            {"bwd2x", &MlpProducts::bwd2x, flops(kHidden, batch, kOut)},
                            {"bwd1w", &MlpProducts::bwd1w, flops(kHidden, kIn, batch)}};
    for (const Shape& sh : shapes) {
        benchmark::RegisterBenchmark((std::string(sh.name) + "@" + be.name).c_str(), [be, sh](benchmark::State& state) {
            MlpProducts p{Mlp{}, be.gemm};
            for (auto _ : state) {
                (p.*sh.product)();
                benchmark::ClobberMemory();
            }
            state.counters["FLOPS"] = benchmark::Counter(sh.flop, benchmark::Counter::kIsIterationInvariantRate);
        });
    }
    benchmark::RegisterBenchmark(("step@" + be.name).c_str(), [be](benchmark::State& state) {
        MlpProducts p{Mlp{}, be.gemm};
        for (auto _ : state) {
            p.fwd1();
            p.fwd2();
            p.bwd2w();
            p.bwd2x();
            p.bwd1w();
            benchmark::ClobberMemory();
        }
        const double f = 2 * flops(kHidden, batch, kIn) + 2 * flops(kOut, batch, kHidden) + flops(kHidden, batch, kOut);
        state.counters["FLOPS"] = benchmark::Counter(f, benchmark::Counter::kIsIterationInvariantRate);
    });
}

}  // namespace

int main(int argc, char** argv) {
    // --batch N (ours) before Google Benchmark's own flags.
    std::vector<char*> rest;
    for (int i = 0; i < argc; ++i) {
        if (std::strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
            batch = std::stoi(argv[++i]);
            continue;
        }
        rest.push_back(argv[i]);
    }
    int n = int(rest.size());
    benchmark::RegisterBenchmark("fwd1", BM_fwd1);
    benchmark::RegisterBenchmark("fwd2", BM_fwd2);
    benchmark::RegisterBenchmark("bwd2w", BM_bwd2w);
    benchmark::RegisterBenchmark("bwd2x", BM_bwd2x);
    benchmark::RegisterBenchmark("bwd1w", BM_bwd1w);
    benchmark::RegisterBenchmark("step", BM_step);
    benchmark::RegisterBenchmark("square1024", BM_square1024);
    // One thread for every backend, whatever the environment says (bench.py sets these too).
    setenv("OMP_NUM_THREADS", "1", 1);
    setenv("OPENBLAS_NUM_THREADS", "1", 1);
    setenv("BLIS_NUM_THREADS", "1", 1);
    for (const Backend& be :
         {cblas_backend("openblas", {"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "libopenblas.so.0"},
                        "openblas_set_num_threads"),
          cblas_backend("blis",
                        {"/usr/lib/x86_64-linux-gnu/blis-serial/libblis.so.4",
                         "/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4", "libblis.so.4"},
                        "bli_thread_set_num_threads"),
          onednn_backend()}) {
        if (be.gemm) register_backend(be);
        else std::fprintf(stderr, "hopper_gemm_bench: %s is not installed, skipped\n", be.name.c_str());
    }
    benchmark::Initialize(&n, rest.data());
    if (benchmark::ReportUnrecognizedArguments(n, rest.data())) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
