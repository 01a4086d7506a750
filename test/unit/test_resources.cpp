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
