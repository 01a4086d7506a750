// Memory hopper plans before it allocates. Each figure is what one process (a backend or a parallel
// worker) holds at its peak for one job, computed from the configuration alone, so that a call can
// refuse an absurd model or packing before it starts instead of driving a backend to gigabytes
// (a 16000x16000 SGD model, within the 1 GB state limit, took 7 GB while training).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hopper/config.h"

namespace hopper {

// Training one model on buffers of up to `buffer_rows` rows: the incoming and outgoing serialized
// states, parameters, gradient, last-good copy, optimizer slots, the forward and backward
// workspace of one minibatch (activations, dropout masks, max pooling's argmax, a chunk of Conv2D
// patches per convolution), and the buffer itself.
std::size_t training_bytes(const ModelConfig& config, int buffer_rows);

// Evaluating `configs` over buffers of up to `buffer_rows` rows in one scan: every model's
// parameters are loaded at once, and one model's forward pass over a buffer runs at a time.
std::size_t evaluation_bytes(const std::vector<ModelConfig>& configs, int buffer_rows);

// Scoring `rows` rows with one model (predict, model_forward).
std::size_t inference_bytes(const ModelConfig& config, int rows);

// Bytes a packed table of `rows` rows of `x_dim` features and `y_dim` dependent values takes on
// disk (uncompressed float32 arrays and their row overhead).
uint64_t packed_table_bytes(uint64_t rows, int x_dim, int y_dim, int buffer_size);

// Packing rows into minibatch buffers (hopper.preprocess). It shuffles the row identifiers of the
// whole table (rows * row_id_bytes: the identifiers and their shuffled order), then keeps them in
// packed order (rows * kept_row_id_bytes) while it packs each buffer. For the largest buffer that is
// two steps: reading its rows (streamed from the fetch one at a time, so only what keeps track
// of them: their identifiers, as the fetch's parameter and its TID scan's list, and each one's place
// in the buffer) into the buffer's two float arrays, and writing them (the arrays and the tuple an
// insert makes of them). In one backend the larger of the two; with parallel workers, each worker
// reads a buffer (that bookkeeping, its own caches and plans) into one of `slots` buffers in shared
// memory while the backend writes another. Figures measured against the backend's peak resident
// memory in test/scripts/preprocess_memory.sh.
struct PackingShape {
    uint64_t rows = 0;
    int buffer_rows = 0;  // rows of the largest buffer
    int x_dim = 0;
    int y_dim = 0;
    uint64_t row_id_bytes = 0;
    uint64_t kept_row_id_bytes = 0;
    int workers = 0;  // parallel workers reading rows (0: the backend alone)
    int slots = 0;    // buffers in shared memory, with workers
};
uint64_t packing_bytes(const PackingShape& shape);

// "1.2 GB", "340 MB", "12 kB" for messages.
std::string format_bytes(uint64_t bytes);
// A need and a limit in the same unit, with as many more digits as it takes to tell them apart: a
// need just above its limit reads "1.02 MB" against "1.00 MB", not "1 MB" against "1 MB".
struct BytesApart {
    std::string need, limit;
};
BytesApart format_bytes_apart(uint64_t need, uint64_t limit);

}  // namespace hopper
