// The core's one float32 matrix product, so the library doing it is chosen in one place.
//
// With oneDNN (libdnnl-dev installed when the core is built: HOPPER_WITH_ONEDNN) the products large
// enough to matter go to dnnl_sgemm, the rest to Eigen. Measured with bench/gemm.cpp on a 2-core AMD
// EPYC (AVX-512), one thread, the MLP's step (784-128-10, minibatch 256): Eigen 82, OpenBLAS 101,
// BLIS 98, oneDNN 113 GFLOP/s; on the two large products (128x784x256) oneDNN 115 vs Eigen 84, on
// the small ones (10x128x256) Eigen 58 vs oneDNN 50. Hence the cut at kOneDnnMinMultiplyAdds.
// Results are deterministic for a build and machine (single-threaded, fixed kernels), so training
// stays bit-identical whatever the number of segments.
#pragma once

#include <string>

#include <Eigen/Core>

namespace hopper::detail {

// C (m x n) = op(A) (m x k) * op(B) (k x n), or C += ... when accumulate. Column-major, contiguous:
// A is stored m x k (k x m when transposed), B k x n (n x k when transposed), C m x n.
void gemm(bool transpose_a, bool transpose_b, Eigen::Index m, Eigen::Index n, Eigen::Index k, const float* a,
          const float* b, float* c, bool accumulate = false);

// Mixed precision (fit_params precision='bfloat16'): while one is alive on a thread, the products
// that go to oneDNN multiply bfloat16 copies of A and B (rounded to nearest even) with oneDNN's
// matmul, accumulating in float32; the small ones stay float32 in Eigen. Refuses (0A000) where
// bfloat16_products_supported() is false.
class BFloat16Products {
public:
    explicit BFloat16Products(bool on);
    ~BFloat16Products();
    BFloat16Products(const BFloat16Products&) = delete;
    BFloat16Products& operator=(const BFloat16Products&) = delete;

private:
    bool previous_;
};

// This build has oneDNN and this CPU AVX512_BF16 (else bfloat16_products_missing() says which).
bool bfloat16_products_supported() noexcept;
std::string bfloat16_products_missing();
// Tests: -1 detects (the default), 0 or 1 pretend.
extern int bfloat16_support_override;

}  // namespace hopper::detail
