// Reading the rows of a packed table's buffers from its source and writing the buffers
// (hopper.preprocess, preprocess.cpp): in the backend alone, or with parallel workers reading and
// converting rows while the backend writes what they read, buffer after buffer, in order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hopper/packing.h"
#include "pg/common/spi.h"
#include "pg/engine/engine.h"

namespace hopper::pg {

// What reading a buffer's rows takes, the same in the backend and in its workers.
struct ReadPlan {
    // SELECT ctid, <features as an array>, <dependent value> FROM <source> WHERE ctid = ANY ($1)
    std::string fetch_sql;
    std::string recipe_json;  // "" or the feature recipe, parameter $2 of fetch_sql
    std::string dependent;    // the dependent column's name, for errors
    bool classification = true;
    std::vector<std::string> class_values;  // classification: one-hot position k is class_values[k]
    int x_dim = 0;
    int y_dim = 0;
    FeatureScaling scaling;
};

// A source row's identifier (ctid) as one number: block << 16 | offset.
uint64_t row_key(const ItemPointerData& tid);

// How the buffers of `plan` are made: their rows are `keys` (row_key of each row, in packed order:
// buffer 0's rows first), read by `read`, written by `writer` with the dist_key of their segment.
struct PackJob {
    const ReadPlan* read = nullptr;
    const BufferPlan* plan = nullptr;
    std::vector<int32_t> dist_keys;
    int max_rows = 0;  // rows of the largest buffer
};

// Reads and writes every buffer, in buffer order. `workers` parallel workers read while the backend
// writes (0: the backend reads too); the caller checked that the writer needs no statements, that
// workers may read the source, and the memory this takes (packing_bytes with workers and
// pack_slots(workers)). Errors are those of reading in the backend: a worker's error in buffer b is
// raised by the backend once every buffer before b is written, as the backend alone would have.
// Frees `keys`. Returns the largest magnitude of a packed (scaled) feature.
float pack_buffers(Spi& spi, const PackJob& job, std::vector<uint64_t>& keys, PackedWriter& writer, int workers);

// Buffers read ahead and waiting to be written, shared by the backend and its workers.
int pack_slots(int workers);

}  // namespace hopper::pg
