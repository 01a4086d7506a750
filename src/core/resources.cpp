#include "hopper/resources.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "hopper/network.h"
#include "hopper/optimizer.h"
#include "hopper/state_format.h"
#include "layers.h"

namespace hopper {

namespace {

// Floats of the training workspace (GradientWorkspace) for minibatches of `batch` rows: per row,
// each layer's activations, dropout masks and max pooling's argmax (4 bytes each), and the two
// scratch buffers of the backward pass; per Conv2D layer, its patch buffer (a chunk of images).
std::size_t workspace_floats(const Architecture& a, std::size_t batch) {
    std::size_t per_row = 0, fixed = 0, widest = std::size_t(a.input_dim);
    TensorShape in = a.input_shape();
    for (const Layer& l : a.layers) {
        const TensorShape out = layers::output_shape(l, in);
        const std::size_t size = std::size_t(out.size());
        per_row += size * (l.dropout > 0.0f ? 2 : 1);
        per_row += std::size_t(layers::layer_type(l.kind).argmax_per_row(l, out));
        fixed += std::size_t(layers::patch_buffer_floats(l, in, batch));
        widest = std::max(widest, size);
        in = out;
    }
    // A standardized target: the workspace's standardized targets and outputs in own units.
    if (!a.target_scaling.identity()) per_row += 2 * std::size_t(std::max(0, a.output_dim()));
    return (per_row + 2 * widest) * batch + fixed;
}

// Floats of a forward pass over `rows` rows: Network::predict ping-pongs between two buffers of the
// widest layer and shares one argmax buffer and one patch buffer between its layers.
std::size_t forward_floats(const Architecture& a, std::size_t rows) {
    std::size_t widest = 0, argmax = 0, patches = 0;
    TensorShape in = a.input_shape();
    for (const Layer& l : a.layers) {
        const TensorShape out = layers::output_shape(l, in);
        widest = std::max(widest, std::size_t(out.size()));
        argmax = std::max(argmax, std::size_t(layers::layer_type(l.kind).argmax_per_row(l, out)));
        patches = std::max(patches, std::size_t(layers::patch_buffer_floats(l, in, rows)));
        in = out;
    }
    return (2 * widest + argmax) * rows + patches;
}

std::size_t buffer_bytes(const Architecture& a, int rows) {
    return std::size_t(rows) * (std::size_t(a.input_dim) + std::size_t(a.output_dim())) * sizeof(float);
}

}  // namespace

std::size_t training_bytes(const ModelConfig& config, int buffer_rows) {
    const std::size_t p = config.arch.num_params();
    const std::size_t k = std::size_t(Optimizer::slots_for(config.compile.optimizer.kind));
    const int batch = config.fit.step_rows(buffer_rows);
    // params, gradient, last-good copy, slots (over the trainable parameters)
    const std::size_t trainer = (3 * p + k * config.arch.num_trainable_params()) * sizeof(float);
    return 2 * state_size(config) + trainer + workspace_floats(config.arch, std::size_t(batch)) * sizeof(float) +
           buffer_bytes(config.arch, buffer_rows);
}

std::size_t evaluation_bytes(const std::vector<ModelConfig>& configs, int buffer_rows) {
    std::size_t params = 0, widest_pass = 0, widest_buffer = 0;
    for (const ModelConfig& c : configs) {
        params += c.arch.num_params() * sizeof(float) + state_size(c);
        widest_pass =
            std::max(widest_pass, forward_floats(c.arch, std::size_t(std::max(1, buffer_rows))) * sizeof(float));
        widest_buffer = std::max(widest_buffer, buffer_bytes(c.arch, buffer_rows));
    }
    return params + widest_pass + widest_buffer;
}

std::size_t inference_bytes(const ModelConfig& config, int rows) {
    return state_size(config) + config.arch.num_params() * sizeof(float) +
           forward_floats(config.arch, std::size_t(std::max(1, rows))) * sizeof(float) +
           buffer_bytes(config.arch, rows);
}

uint64_t packed_table_bytes(uint64_t rows, int x_dim, int y_dim, int buffer_size) {
    const uint64_t buffers = buffer_size > 0 ? (rows + uint64_t(buffer_size) - 1) / uint64_t(buffer_size) : rows;
    // Two float4 arrays per buffer (each with a 24-byte array header), two small shape arrays,
    // a tuple and its TOAST pointers: about 200 bytes of overhead per buffer.
    return rows * (uint64_t(std::max(0, x_dim)) + uint64_t(std::max(0, y_dim))) * sizeof(float) + buffers * 200;
}

uint64_t packing_bytes(const PackingShape& s) {
    const uint64_t n = uint64_t(std::max(0, s.buffer_rows));
    const uint64_t floats = n * (uint64_t(std::max(0, s.x_dim)) + uint64_t(std::max(0, s.y_dim))) * sizeof(float);
    // Reading: about 100 bytes a row (measured: the identifier array of the fetch and its elements,
    // the TID scan's sorted list, the hashed lookup of each row's place in the buffer).
    const uint64_t rows_read = n * 100;
    // Catalog caches, plans and executor state of the statements: a few megabytes whatever the data.
    const uint64_t fixed = uint64_t(3) << 20;
    const uint64_t shuffling = s.rows * s.row_id_bytes;
    uint64_t packing = s.rows * s.kept_row_id_bytes;
    if (s.workers <= 0) {
        // Reading fills the two arrays; writing forms a tuple of them, the arrays' second copy.
        packing += std::max(rows_read + floats, 2 * floats);
    } else {
        packing += uint64_t(std::max(0, s.slots)) * floats + floats + uint64_t(s.workers) * (rows_read + fixed);
    }
    return std::max(shuffling, packing) + fixed;
}

std::string format_bytes(uint64_t bytes) {
    char buf[32];
    if (bytes >= (uint64_t(1) << 30))
        std::snprintf(buf, sizeof buf, "%.1f GB", double(bytes) / double(uint64_t(1) << 30));
    else if (bytes >= (uint64_t(1) << 20))
        std::snprintf(buf, sizeof buf, "%.0f MB", double(bytes) / double(uint64_t(1) << 20));
    else std::snprintf(buf, sizeof buf, "%.0f kB", double(bytes) / 1024.0);
    return buf;
}

BytesApart format_bytes_apart(uint64_t need, uint64_t limit) {
    const uint64_t larger = std::max(need, limit);
    // Plain variables, not a structured binding: C++17 lambdas may not capture those (clang refuses).
    double unit = 1024.0;
    const char* name = "kB";
    if (larger >= (uint64_t(1) << 30)) {
        unit = double(uint64_t(1) << 30);
        name = "GB";
    } else if (larger >= (uint64_t(1) << 20)) {
        unit = double(uint64_t(1) << 20);
        name = "MB";
    }
    auto at = [&](uint64_t bytes, int digits) {
        char buf[48];
        std::snprintf(buf, sizeof buf, "%.*f %s", digits, double(bytes) / unit, name);
        return std::string(buf);
    };
    if (need == limit || format_bytes(need) != format_bytes(limit)) return {format_bytes(need), format_bytes(limit)};
    for (int digits = 1; digits <= 4; ++digits)
        if (at(need, digits) != at(limit, digits)) return {at(need, digits), at(limit, digits)};
    return {std::to_string(need) + " bytes", std::to_string(limit) + " bytes"};
}

}  // namespace hopper
