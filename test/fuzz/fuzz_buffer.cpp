// Packed buffers: the checks the PostgreSQL port applies to the independent_var/dependent_var
// arrays before training or evaluating (hopper/buffer_check.h), then training and evaluation of a
// small model on whatever passed -- and, for one input bit, on non-finite data too, which the
// trainer must survive (it marks the model diverged) without undefined behaviour. One mode bit
// makes the model a small CNN.
//
// Input: byte 0 ndim of x, byte 1 ndim of y, byte 2 number of floats that belong to x, byte 3
// model and mode bits, then 4 int32 dimensions (x0, x1, y0, y1), then float data (x then y).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "hopper/buffer_check.h"
#include "hopper/config.h"
#include "hopper/metrics.h"
#include "hopper/network.h"
#include "hopper/trainer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    using namespace hopper;
    using hopper_fuzz::accepts;
    using hopper_fuzz::require;
    if (size < 20) return 0;
    const int ndim_x = int(data[0] % 4), ndim_y = int(data[1] % 4);
    const uint8_t mode = data[3];
    int dims[4];
    std::memcpy(dims, data + 4, sizeof dims);
    const std::size_t floats = (size - 20) / 4;
    std::vector<float> values(floats);
    if (floats) std::memcpy(values.data(), data + 20, floats * 4);
    const std::size_t nx = std::min<std::size_t>(data[2], floats);
    const std::size_t ny = floats - nx;

    BufferShape xs, ys;
    if (!accepts([&] { xs = buffer_shape(ndim_x, dims, nx, "independent_var"); })) return 0;
    if (!accepts([&] { ys = buffer_shape(ndim_y, dims + 2, ny, "dependent_var"); })) return 0;
    require(std::size_t(xs.rows) * std::size_t(xs.cols) == nx, "accepted x shape does not cover its data");
    require(std::size_t(ys.rows) * std::size_t(ys.cols) == ny, "accepted y shape does not cover its data");

    // A small model whose widths come from the input's mode bits: a dense network, or (bit 128) a
    // CNN on 1 x input_dim x 1 images with convolution, batch normalization and pooling ("same"
    // padding, so that even a 1x1 image passes), whose batch statistics see whatever data passed.
    const int input_dim = 1 + (mode & 3);
    const int output_dim = 1 + ((mode >> 2) & 3);
    const bool regression = output_dim > 1 && (mode & 16);
    const std::string output = "{\"units\": " + std::to_string(output_dim) + ", \"activation\": \"" +
                               (output_dim == 1 ? "sigmoid"
                                : regression    ? "linear"
                                                : "softmax") +
                               "\"}";
    std::string arch =
        (mode & 128)
            ? "{\"input_shape\": [1, " + std::to_string(input_dim) +
                  ", 1], \"layers\": [{\"type\": \"conv2d\", \"filters\": 2, \"kernel_size\": [1, 2], "
                  "\"padding\": \"same\", \"activation\": \"tanh\", \"dropout\": 0.25}, "
                  "{\"type\": \"batch_normalization\"}, {\"type\": \"max_pooling2d\", \"pool_size\": [1, 2], "
                  "\"padding\": \"same\"}, {\"type\": \"flatten\"}, " +
                  output + "]}"
            : "{\"input_dim\": " + std::to_string(input_dim) +
                  ", \"layers\": [{\"units\": 3, \"activation\": \"tanh\", \"dropout\": 0.25}, " + output + "]}";
    std::string compile =
        (mode & 32) ? "optimizer='Adam(lr=0.01)'" : "optimizer='SGD(lr=0.1, momentum=0.9, nesterov=True)'";
    if (regression) compile += ", metrics=['mae', 'mse']";
    else if (output_dim > 1) compile += ", metrics=['accuracy', 'top_k_categorical_accuracy'], top_k=1";
    else compile += ", metrics=['accuracy', 'mse']";
    ModelConfig config;
    try {
        config =
            resolve_config(parse_architecture(arch), parse_compile_params(compile), parse_fit_params("batch_size=2"));
    } catch (const Error& e) {
        hopper_fuzz::finding("the fuzzer's own model does not resolve:", arch + " " + compile + ": " + e.message());
    }

    if (!accepts([&] { check_training_buffers(xs, ys, input_dim, output_dim); })) return 0;
    const bool finite = accepts([&] {
        check_finite_buffer(values.data(), xs, "independent_var");
        check_finite_buffer(values.data() + nx, ys, "dependent_var");
    });
    if (!finite && !(mode & 64)) return 0;

    Trainer trainer(config);
    trainer.begin_visit();
    require(accepts([&] { trainer.train_buffer(values.data(), values.data() + nx, xs.rows); }), "training failed");
    trainer.finish_visit();
    Network net(config.arch);
    ConstMatrixMap xm(values.data(), xs.cols, xs.rows), ym(values.data() + nx, ys.cols, ys.rows);
    EvalTotals totals;
    totals.metric_sums.assign(config.compile.metrics.size(), 0.0);
    MatrixF scratch;
    evaluate_batch(net, trainer.params().data(), xm, ym, config.compile, totals, scratch);
    require(totals.count == double(xs.rows), "evaluation counted the wrong number of rows");
    if (finite && !trainer.counters().diverged)
        require(trainer.counters().samples_seen == uint64_t(xs.rows), "training skipped rows");
    return 0;
}
