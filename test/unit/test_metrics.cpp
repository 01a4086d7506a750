// Metrics on hand-made batches. A single linear layer with identity weights and no bias makes the
// network's outputs equal its inputs, so each test states its predictions directly.
#include <cmath>
#include <initializer_list>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/error.h"
#include "hopper/metrics.h"

using namespace hopper;

namespace {

struct Identity {
    Network net;
    std::vector<float> params;
    explicit Identity(int k, Activation act = Activation::Linear) : net(arch(k, act)) {
        params.assign(std::size_t(k) * k, 0.0f);
        for (int i = 0; i < k; ++i) params[std::size_t(i) * k + i] = 1.0f;
    }
    static Architecture arch(int k, Activation act) {
        Architecture a;
        a.input_dim = k;
        DenseLayer l;
        l.units = k;
        l.activation = act;
        l.use_bias = false;
        a.layers = {l};
        return a;
    }
    // p and y are sample-major (row per sample), as packed buffers are.
    EvalTotals eval(const std::vector<float>& p, const std::vector<float>& y, CompileParams c,
                    EvalTotals totals = {}) const {
        const int k = net.arch().input_dim, n = int(p.size()) / k;
        MatrixF scratch;
        evaluate_batch(net, params.data(), ConstMatrixMap(p.data(), k, n), ConstMatrixMap(y.data(), k, n), c, totals,
                       scratch);
        return totals;
    }
};

CompileParams compile(Loss loss, std::vector<Metric> metrics, int top_k = 5) {
    CompileParams c;
    c.loss = loss;
    c.metrics = std::move(metrics);
    c.top_k = top_k;
    return c;
}

}  // namespace

TEST(Metrics, AccuracyUsesArgmaxWithTiesToLowerIndex) {
    Identity id(3);
    std::vector<float> p = {0.1f, 0.7f, 0.2f,   // predicts 1, true 1: hit
                            0.5f, 0.5f, 0.0f,   // tie -> 0, true 1: miss
                            0.4f, 0.4f, 0.2f,   // tie -> 0, true 0: hit
                            0.2f, 0.3f, 0.5f};  // predicts 2, true 0: miss
    std::vector<float> y = {0, 1, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0};
    EvalTotals t = id.eval(p, y, compile(Loss::MeanSquaredError, {Metric::Accuracy}));
    EXPECT_EQ(t.count, 4.0);
    EXPECT_DOUBLE_EQ(t.metric(0), 0.5);
}

TEST(Metrics, SingleUnitAccuracyThresholdsAtOneHalf) {
    Identity id(1, Activation::Sigmoid);
    // Identity weights through a sigmoid: logits chosen to give 0.5, 0.88, 0.12, 0.73.
    std::vector<float> z = {0.0f, 2.0f, -2.0f, 1.0f};
    std::vector<float> y = {1.0f, 0.0f, 0.0f, 1.0f};  // hit, miss, hit, hit
    EvalTotals t = id.eval(z, y, compile(Loss::BinaryCrossEntropy, {Metric::Accuracy}));
    EXPECT_DOUBLE_EQ(t.metric(0), 0.75);
}

TEST(Metrics, TopKCountsTiesAgainstHigherIndices) {
    Identity id(4);
    std::vector<float> p = {0.4f, 0.3f, 0.2f, 0.1f,   // true 1 ranks 2nd: in top 2
                            0.4f, 0.3f, 0.2f, 0.1f,   // true 2 ranks 3rd: out
                            0.3f, 0.3f, 0.3f, 0.1f,   // three-way tie, true 2 ranks 3rd: out
                            0.1f, 0.3f, 0.3f, 0.3f};  // true 2 ties 1 (above) and 3 (below): 2nd, in
    std::vector<float> y = {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0};
    EvalTotals t = id.eval(p, y, compile(Loss::MeanSquaredError, {Metric::TopKAccuracy}, 2));
    EXPECT_DOUBLE_EQ(t.metric(0), 0.5);
    EvalTotals all = id.eval(p, y, compile(Loss::MeanSquaredError, {Metric::TopKAccuracy}, 4));
    EXPECT_DOUBLE_EQ(all.metric(0), 1.0);
    // k above the number of classes (accepted, as in Keras): every row counts.
    EvalTotals above = id.eval(p, y, compile(Loss::MeanSquaredError, {Metric::TopKAccuracy}, 7));
    EXPECT_DOUBLE_EQ(above.metric(0), 1.0);
}

TEST(Metrics, MseMaeAndLossAreMeansOverOutputsThenSamples) {
    Identity id(2);
    std::vector<float> p = {1.0f, 2.0f, 0.0f, 0.0f};
    std::vector<float> y = {0.0f, 0.0f, 0.0f, 3.0f};
    EvalTotals t =
        id.eval(p, y,
                compile(Loss::MeanSquaredError, {Metric::MeanSquaredError, Metric::MeanAbsoluteError, Metric::Loss}));
    // Sample 0: mse (1+4)/2, mae (1+2)/2. Sample 1: mse 9/2, mae 3/2.
    EXPECT_DOUBLE_EQ(t.metric(0), (2.5 + 4.5) / 2);
    EXPECT_DOUBLE_EQ(t.metric(1), (1.5 + 1.5) / 2);
    EXPECT_DOUBLE_EQ(t.metric(2), t.loss());
    EXPECT_DOUBLE_EQ(t.loss_sum, 7.0);
}

TEST(Metrics, LossMetricIsTheCompiledCrossEntropy) {
    Identity id(2);
    std::vector<float> p = {0.25f, 0.75f, 0.5f, 0.5f};
    std::vector<float> y = {0, 1, 1, 0};
    EvalTotals t = id.eval(p, y, compile(Loss::SoftmaxCrossEntropy, {Metric::Loss}));
    EXPECT_NEAR(t.loss_sum, -std::log(0.75) - std::log(0.5), 1e-6);
    EXPECT_DOUBLE_EQ(t.metric_sums[0], t.loss_sum);
}

TEST(Metrics, TotalsAccumulateAcrossBatchesAndMergeAdditively) {
    Identity id(3);
    const CompileParams c = compile(Loss::MeanSquaredError, {Metric::Accuracy, Metric::MeanAbsoluteError});
    std::vector<float> p1 = {1, 0, 0, 0, 1, 0}, y1 = {1, 0, 0, 1, 0, 0};
    std::vector<float> p2 = {0, 0, 1}, y2 = {0, 0, 1};
    std::vector<float> p12 = {1, 0, 0, 0, 1, 0, 0, 0, 1}, y12 = {1, 0, 0, 1, 0, 0, 0, 0, 1};
    const EvalTotals a = id.eval(p1, y1, c), b = id.eval(p2, y2, c), whole = id.eval(p12, y12, c);
    // Evaluating into existing totals equals merging.
    const EvalTotals chained = id.eval(p2, y2, c, a);

    EvalTotals ab;  // empty: takes the other side's metric count
    ab.merge(a);
    ab.merge(b);
    EvalTotals ba = b;
    ba.merge(a);
    for (const EvalTotals* t : std::initializer_list<const EvalTotals*>{&ab, &ba, &chained}) {
        EXPECT_EQ(t->count, 3.0);
        EXPECT_EQ(t->loss_sum, whole.loss_sum);  // exact values: addition order cannot matter
        ASSERT_EQ(t->metric_sums.size(), 2u);
        EXPECT_EQ(t->metric_sums, whole.metric_sums);
    }
    EXPECT_DOUBLE_EQ(ab.metric(0), 2.0 / 3.0);
    // Merging an empty total changes nothing.
    EvalTotals same = ab;
    same.merge(EvalTotals{});
    EXPECT_EQ(same.count, ab.count);
    EXPECT_EQ(same.metric_sums, ab.metric_sums);
}

TEST(Metrics, MergingDifferentMetricListsIsAnInternalError) {
    EvalTotals a, b;
    a.count = 1;
    a.metric_sums = {1.0};
    b.count = 1;
    b.metric_sums = {1.0, 2.0};
    try {
        a.merge(b);
        FAIL() << "expected an error";
    } catch (const Error& e) { EXPECT_EQ(e.kind(), ErrorKind::Internal); }
}

TEST(Metrics, EmptyTotalsReportNaN) {
    EvalTotals t;
    t.metric_sums = {0.0};
    EXPECT_TRUE(std::isnan(t.loss()));
    EXPECT_TRUE(std::isnan(t.metric(0)));
}

TEST(Metrics, MergeOrderNeverChangesABit) {
    // Parallel workers' partial sums arrive in any order; evaluation must still repeat exactly.
    Identity id(3, Activation::Softmax);
    CompileParams c;
    c.loss = Loss::SoftmaxCrossEntropy;
    c.metrics = {Metric::Accuracy, Metric::MeanSquaredError};
    std::vector<EvalTotals> parts;
    for (int b = 0; b < 7; ++b) {
        std::vector<float> p, y;
        for (int j = 0; j < 5; ++j) {
            for (int i = 0; i < 3; ++i) p.push_back(0.1f * float((b * 7 + j * 3 + i) % 11) + 0.013f * float(b));
            for (int i = 0; i < 3; ++i) y.push_back(i == (b + j) % 3 ? 1.0f : 0.0f);
        }
        parts.push_back(id.eval(p, y, c));
    }
    EvalTotals forward, backward, interleaved;
    for (std::size_t i = 0; i < parts.size(); ++i) forward.merge(parts[i]);
    for (std::size_t i = parts.size(); i-- > 0;) backward.merge(parts[i]);
    for (std::size_t i : {3, 0, 6, 1, 5, 2, 4}) interleaved.merge(parts[i]);
    for (const EvalTotals* t : {&backward, &interleaved}) {
        EXPECT_EQ(t->loss_sum, forward.loss_sum);  // exact, not approximate
        EXPECT_EQ(t->metric_sums, forward.metric_sums);
        EXPECT_EQ(t->count, forward.count);
    }
    EXPECT_GT(forward.loss_sum, 0.0);
}

// A row whose outputs are not finite (a diverged or overflowing model) has no prediction: it is
// never a hit, whatever its label, for accuracy (argmax of NaNs, NaN >= 0.5) and top-k.
TEST(Metrics, NonFiniteOutputsAreNeverHits) {
    Identity id(3);
    const float nan = std::nanf("");
    const float inf = INFINITY;
    std::vector<float> p = {nan,  nan,   nan,     // true 0: would be argmax 0
                            0.9f, nan,   0.1f,    // true 0
                            inf,  0.0f,  0.0f,    // true 0
                            0.9f, 0.05f, 0.05f};  // true 0: the only hit
    std::vector<float> y = {1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0};
    EvalTotals t = id.eval(p, y, compile(Loss::MeanSquaredError, {Metric::Accuracy, Metric::TopKAccuracy}, 2));
    EXPECT_DOUBLE_EQ(t.metric(0), 0.25);
    EXPECT_DOUBLE_EQ(t.metric(1), 0.25);
    Identity one(1, Activation::Linear);
    std::vector<float> z = {nan, 0.2f};
    std::vector<float> y1 = {0.0f, 0.0f};  // NaN >= 0.5 is false, as is 0 >= 0.5: only the second is a hit
    EvalTotals u = one.eval(z, y1, compile(Loss::MeanSquaredError, {Metric::Accuracy}));
    EXPECT_DOUBLE_EQ(u.metric(0), 0.5);
}

TEST(Metrics, AStandardizedTargetsSumsKeepTheirPrecisionInItsOwnUnits) {
    // A target of about 1e-6 standardized with scale 2e-7: its squared errors (~1e-16) are far
    // below the fixed 2^-20 grid, and a loss and metrics of 0 were reported (a sweep). The grid
    // follows the scale: 2^(2e - 20) for squared errors, 2^(e - 20) for absolute ones.
    Architecture a = Identity::arch(1, Activation::Linear);
    a.target_scaling = TargetScaling{1e-6f, 2e-7f};
    const Network net(a);
    EXPECT_EQ(target_units_exponent(a), -23);  // 2e-7 = 1.68 * 2^-23
    // Weight 0.05 and the scaling: the output is 0.05 * 1 * 2e-7 + 1e-6 = 1.01e-6 for an input of 1.
    const std::vector<float> params = {0.05f};
    const std::vector<float> x = {1.0f, 1.0f}, y = {1e-6f, 1.02e-6f};
    EvalTotals t;
    MatrixF scratch;
    evaluate_batch(net, params.data(), ConstMatrixMap(x.data(), 1, 2), ConstMatrixMap(y.data(), 1, 2),
                   compile(Loss::MeanSquaredError, {Metric::MeanSquaredError, Metric::MeanAbsoluteError}), t, scratch);
    EXPECT_NEAR(t.loss(), 1e-16, 1e-19);
    EXPECT_NEAR(t.metric(0), 1e-16, 1e-19);
    EXPECT_NEAR(t.metric(1), 1e-8, 1e-11);
    // Without a scaling (a target packed raw) the grid is 2^-20, as it always was.
    const Identity raw(1);
    EXPECT_EQ(raw.eval({1.01e-6f}, {1e-6f}, compile(Loss::MeanSquaredError, {Metric::MeanSquaredError})).loss(), 0.0);
}
