// Memory plans (include/hopper/resources.h): what refusing absurd models rests on.
#include <gtest/gtest.h>

#include "hopper/resources.h"
#include "hopper/state_format.h"

using namespace hopper;

namespace {

ModelConfig dense(int input, std::vector<int> units, OptimizerKind kind, int batch = 32) {
    Architecture a;
    a.input_dim = input;
    for (std::size_t i = 0; i < units.size(); ++i) {
        DenseLayer l;
        l.units = units[i];
        l.activation = i + 1 == units.size() ? Activation::Softmax : Activation::Relu;
        a.layers.push_back(l);
    }
    CompileParams c;
    c.optimizer.kind = kind;
    FitParams f;
    f.batch_size = batch;
    return resolve_config(a, c, f);
}

}  // namespace

// The review's case: a 16000 x 16000 SGD model has a state just under 1 GB but trains in
// several: the plan must count the gradient, the last-good copy and both serialized states.
TEST(Resources, LargeDenseModelNeedsSeveralTimesItsState) {
    const ModelConfig big = dense(16000, {16000, 2}, OptimizerKind::SGD);
    const std::size_t state = state_size(big);
    EXPECT_LT(state, std::size_t(1) << 30);
    EXPECT_GE(training_bytes(big, 256), 4 * state);
    // Adam keeps two more copies of every parameter.
    const ModelConfig adam = dense(16000, {16000, 2}, OptimizerKind::Adam);
    EXPECT_GE(training_bytes(adam, 256), training_bytes(big, 256) + 2 * 4 * big.arch.num_params());
}

TEST(Resources, SmallModelsNeedLittle) {
    const ModelConfig mlp = dense(784, {128, 10}, OptimizerKind::Adam, 128);
    const std::size_t t = training_bytes(mlp, 256);
    EXPECT_GT(t, 5 * 4 * mlp.arch.num_params());
    EXPECT_LT(t, std::size_t(8) << 20);
    EXPECT_LT(evaluation_bytes({mlp, mlp}, 256), std::size_t(8) << 20);
    EXPECT_LT(inference_bytes(mlp, 1), std::size_t(2) << 20);
}

// Activations grow with the minibatch, up to the buffer; buffers with the rows.
TEST(Resources, GrowsWithBatchAndRows) {
    const ModelConfig wide_small_batch = dense(100, {100000, 2}, OptimizerKind::SGD, 8);
    const ModelConfig wide_large_batch = dense(100, {100000, 2}, OptimizerKind::SGD, 1024);
    EXPECT_GT(training_bytes(wide_large_batch, 1024), training_bytes(wide_small_batch, 1024) + 1000 * 100000 * 4);
    // A batch larger than the buffer is the buffer (the states differ only in the configuration text).
    EXPECT_EQ(training_bytes(wide_large_batch, 8) - 2 * state_size(wide_large_batch),
              training_bytes(wide_small_batch, 8) - 2 * state_size(wide_small_batch));
    EXPECT_GT(evaluation_bytes({wide_small_batch}, 4096),
              evaluation_bytes({wide_small_batch}, 16) + std::size_t(4000) * 2 * 100000 * 4);
    EXPECT_GT(inference_bytes(wide_small_batch, 100), inference_bytes(wide_small_batch, 1));
}

// The review's packing case: 100,000 rows with 100,000 one-hot classes is about 40 GB.
TEST(Resources, PackedTableOfManyClassesIsHuge) {
    EXPECT_GT(packed_table_bytes(100000, 10, 100000, 100), uint64_t(37) << 30);
    EXPECT_LT(packed_table_bytes(60000, 784, 10, 256), uint64_t(200) << 20);
    EXPECT_EQ(format_bytes(uint64_t(3) << 30), "3.0 GB");
    EXPECT_EQ(format_bytes(uint64_t(5) << 20), "5 MB");
    EXPECT_EQ(format_bytes(2048), "2 kB");
}

// A need just above its limit is told apart from it ("about 1 MB of memory; hopper.max_memory_mb
// allows 1 MB" was the message), in the limit's unit.
TEST(Resources, NeedAndLimitReadApart) {
    const uint64_t mb = uint64_t(1) << 20;
    const BytesApart far = format_bytes_apart(5 * mb, mb);
    EXPECT_EQ(far.need, "5 MB");
    EXPECT_EQ(far.limit, "1 MB");
    // 1.02 MB against 1 MB: one digit reads 1.0 for both, two tell them apart.
    const BytesApart near = format_bytes_apart(mb + mb / 50, mb);
    EXPECT_EQ(near.need, "1.02 MB");
    EXPECT_EQ(near.limit, "1.00 MB");
    const BytesApart byte = format_bytes_apart(mb + 1, mb);
    EXPECT_EQ(byte.need, "1048577 bytes");
    EXPECT_EQ(byte.limit, "1048576 bytes");
    EXPECT_EQ(format_bytes_apart(uint64_t(3) << 30, uint64_t(3) << 30).need, "3.0 GB");
}

// Packing's plan: the shuffle of every row's identifier, or the larger step of a buffer beside the
// identifiers kept; parallel workers add their reading and the slots of shared memory.
TEST(Resources, PackingPlan) {
    PackingShape s;
    s.rows = 2000000;
    s.buffer_rows = 200000;
    s.x_dim = 3;
    s.y_dim = 2;
    s.row_id_bytes = 14;
    s.kept_row_id_bytes = 8;
    const uint64_t floats = 200000ull * 5 * 4, fixed = uint64_t(3) << 20, reading = 200000ull * 100;
    EXPECT_EQ(packing_bytes(s), 2000000ull * 8 + reading + floats + fixed);
    // Many rows of few features: the shuffle is the peak.
    s.buffer_rows = 100;
    EXPECT_EQ(packing_bytes(s), 2000000ull * 14 + fixed);
    // Wide buffers: writing (the arrays and their tuple) is the larger step.
    s.buffer_rows = 3000;
    s.x_dim = 2000;
    const uint64_t wide = 3000ull * 2002 * 4;
    EXPECT_EQ(packing_bytes(s), 2000000ull * 8 + 2 * wide + fixed);
    // Workers: each its reading and its caches, the slots one buffer each, the backend's tuple.
    s.workers = 2;
    s.slots = 6;
    EXPECT_EQ(packing_bytes(s), 2000000ull * 8 + 6 * wide + wide + 2 * (3000ull * 100 + fixed) + fixed);
}
