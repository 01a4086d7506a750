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

#include <Eigen/Core>

namespace hopper::detail {

// C (m x n) = op(A) (m x k) * op(B) (k x n), or C += ... when accumulate. Column-major, contiguous:
// A is stored m x k (k x m when transposed), B k x n (n x k when transposed), C m x n.
void gemm(bool transpose_a, bool transpose_b, Eigen::Index m, Eigen::Index n, Eigen::Index k, const float* a,
          const float* b, float* c, bool accumulate = false);

}  // namespace hopper::detail
