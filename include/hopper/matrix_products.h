// The core's matrix products, as the port needs to know them (the products themselves are internal:
// src/core/gemm.h).
#pragma once

namespace hopper {

// oneDNN generates its product kernels on the first product a process makes (38 ms measured on a
// 2-core AMD EPYC, against 0.5 ms for the product itself). Called once where processes are forked
// from -- the postmaster, when hopper is preloaded -- every backend and parallel worker starts with
// them; otherwise a model hop's fresh worker would pay that at every hop. Never throws; without
// oneDNN it does nothing.
void warm_up_matrix_products() noexcept;

// Which library multiplies the large products in this build: "onednn" or "eigen".
const char* matrix_product_backend() noexcept;

}  // namespace hopper
