#include "hopper/buffer_check.h"

#include <cmath>
#include <string>

#include <Eigen/Core>

#include "hopper/error.h"

namespace hopper {

BufferShape buffer_shape(int ndim, const int* dims, std::size_t n_values, const char* what) {
    if (ndim < 0 || ndim > 2)
        fail(ErrorKind::Data, std::string(what) + " must be a 1-D or 2-D array",
             "It has " + std::to_string(ndim) + " dimensions.");
    BufferShape s;
    if (ndim == 0) {
        if (n_values != 0) fail(ErrorKind::Data, std::string(what) + " has values but no dimensions");
        return s;
    }
    for (int i = 0; i < ndim; ++i)
        if (dims[i] < 0)
            fail(ErrorKind::Data, std::string(what) + " has a negative dimension",
                 "Dimension " + std::to_string(i + 1) + " is " + std::to_string(dims[i]) + ".");
    s.rows = ndim == 2 ? dims[0] : 1;
    s.cols = ndim == 2 ? dims[1] : dims[0];
    if (uint64_t(s.rows) * uint64_t(s.cols) != n_values)
        fail(ErrorKind::Data, std::string(what) + " dimensions do not match its data",
             std::to_string(s.rows) + " x " + std::to_string(s.cols) + " does not make " + std::to_string(n_values) +
                 " values.");
    return s;
}

void check_training_buffers(BufferShape x, BufferShape y, int input_dim, int output_dim) {
    if (x.rows != y.rows || x.rows == 0)
        fail(ErrorKind::Data, "packed buffer has inconsistent row counts",
             "independent_var has " + std::to_string(x.rows) + " rows and dependent_var " + std::to_string(y.rows) +
                 ".");
    if (x.cols != input_dim)
        fail(ErrorKind::Data, "packed data has " + std::to_string(x.cols) + " features but the model expects " +
                                  std::to_string(input_dim));
    if (y.cols != output_dim)
        fail(ErrorKind::Data, "packed data has " + std::to_string(y.cols) + " targets per row but the model has " +
                                  std::to_string(output_dim) + " outputs");
}

void check_finite_buffer(const float* data, BufferShape shape, const char* what) {
    const std::size_t n = std::size_t(shape.rows) * std::size_t(shape.cols);
    // Fast path, vectorized: x * 0 is 0 for every finite x and NaN otherwise. This runs on every
    // buffer of every epoch, where a per-value branch cost about a tenth of the training time.
    if (n == 0 || (Eigen::Map<const Eigen::ArrayXf, Eigen::Unaligned>(data, Eigen::Index(n)) * 0.0f).sum() == 0.0f)
        return;
    for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(data[i]))
            fail(ErrorKind::Data, std::string(what) + " contains NaN or infinite values",
                 "Row " + std::to_string(i / std::size_t(shape.cols) + 1) + ", column " +
                     std::to_string(i % std::size_t(shape.cols) + 1) + " is " +
                     (std::isnan(data[i]) ? "NaN"
                      : data[i] > 0       ? "Infinity"
                                          : "-Infinity") +
                     ".",
                 "Pack the data with hopper.preprocess, which refuses non-finite values.");
}

}  // namespace hopper
