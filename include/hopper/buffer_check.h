// Checks of packed buffers (float32 arrays, rows x cols) before a model trains or is evaluated on
// them. The PostgreSQL port hands over an array's dimensions and data; these checks decide whether
// it is a usable buffer. Pure functions, fuzzed by test/fuzz/fuzz_buffer.cpp.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hopper {

struct BufferShape {
    int rows = 0;
    int cols = 0;
};

// The shape of an array with `ndim` dimensions of sizes dims[0..ndim) holding `n_values` floats:
// 2-D is rows x cols, 1-D is one row, 0-D (an empty array) is 0 x 0. Raises Error(Data) for more
// than two dimensions, negative sizes, or sizes whose product is not n_values. `what` names the
// array in messages ("independent_var").
BufferShape buffer_shape(int ndim, const int* dims, std::size_t n_values, const char* what);

// A training buffer pair against a model's widths: the same positive number of rows, input_dim
// features and output_dim targets per row. Raises Error(Data).
void check_training_buffers(BufferShape x, BufferShape y, int input_dim, int output_dim);

// Every value finite; Error(Data) naming the array, the row and column of the first bad value.
void check_finite_buffer(const float* data, BufferShape shape, const char* what);

}  // namespace hopper
