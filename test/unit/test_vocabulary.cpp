// The vocabulary tables (vocabulary.h, layers.h, config_architecture.h) against the enums they
// cover: every kind has exactly one entry, and every canonical name reads back as its kind --
// model states store those names, so an entry whose name the parser does not accept would make
// stored models unreadable.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "config_architecture.h"
#include "hopper/config.h"
#include "hopper/optimizer.h"
#include "layers.h"
#include "vocabulary.h"

using namespace hopper;

namespace {

const OptimizerKind kOptimizerKinds[] = {OptimizerKind::SGD,      OptimizerKind::Momentum, OptimizerKind::Nesterov,
                                         OptimizerKind::Adam,     OptimizerKind::RMSprop,  OptimizerKind::Adagrad,
                                         OptimizerKind::Adadelta, OptimizerKind::Adamax,   OptimizerKind::Nadam};
const Loss kLosses[] = {Loss::SoftmaxCrossEntropy, Loss::BinaryCrossEntropy, Loss::MeanSquaredError};
const Metric kMetrics[] = {Metric::Accuracy, Metric::TopKAccuracy, Metric::MeanSquaredError, Metric::MeanAbsoluteError,
                           Metric::Loss};
const LayerKind kLayerKinds[] = {LayerKind::Dense,
                                 LayerKind::Conv2D,
                                 LayerKind::MaxPooling2D,
                                 LayerKind::AveragePooling2D,
                                 LayerKind::GlobalAveragePooling2D,
                                 LayerKind::Flatten,
                                 LayerKind::BatchNormalization,
                                 LayerKind::Embedding};

}  // namespace

TEST(Vocabulary, EveryOptimizerKindHasOneEntryAndItsCanonicalFormReadsBack) {
    EXPECT_EQ(vocab::optimizers().size(), std::size(kOptimizerKinds));
    std::set<std::string> names;
    for (OptimizerKind k : kOptimizerKinds) {
        const vocab::OptimizerSpec* s = vocab::optimizer(k);
        ASSERT_NE(s, nullptr);
        EXPECT_TRUE(names.insert(s->name).second) << s->name;
        EXPECT_STREQ(to_string(k), s->name);
        EXPECT_EQ(Optimizer::slots_for(k), s->slots);
        for (const char* p : s->params) EXPECT_NE(vocab::optimizer_arg(p), nullptr) << p;
        for (const char* a : s->args) EXPECT_NE(vocab::optimizer_arg(a), nullptr) << a;
        // The canonical JSON of a config of this kind parses back to the same config.
        CompileParams c;
        c.optimizer.kind = k;
        if (k == OptimizerKind::Momentum || k == OptimizerKind::Nesterov) c.optimizer.momentum = 0.5;
        const std::string json = c.to_json();
        const CompileParams back = parse_compile_params(json);
        EXPECT_EQ(back.optimizer.kind, k) << json;
        EXPECT_EQ(back.to_json(), json);
    }
    // Every name users write selects an entry.
    for (const vocab::OptimizerSpec& s : vocab::optimizers())
        for (const char* w : s.written) EXPECT_EQ(vocab::optimizer_named(w), &s) << w;
    // A name hopper refuses as not implemented is no name of an entry.
    for (const vocab::RefusedName& r : vocab::refused_optimizers())
        EXPECT_EQ(vocab::optimizer_named(r.written), nullptr);
}

TEST(Vocabulary, EveryLossAndMetricHasOneEntryAndItsCanonicalNameReadsBack) {
    EXPECT_EQ(vocab::losses().size(), std::size(kLosses));
    for (Loss l : kLosses) {
        const vocab::LossSpec* s = vocab::loss(l);
        ASSERT_NE(s, nullptr);
        EXPECT_STREQ(to_string(l), s->name);
        EXPECT_EQ(parse_compile_params(std::string("loss='") + s->name + "'").loss, l) << s->name;
        for (const char* w : s->written) EXPECT_EQ(parse_compile_params(std::string("loss='") + w + "'").loss, l) << w;
    }
    EXPECT_EQ(vocab::metrics().size(), std::size(kMetrics));
    for (Metric m : kMetrics) {
        const vocab::MetricSpec* s = vocab::metric(m);
        ASSERT_NE(s, nullptr);
        EXPECT_STREQ(to_string(m), s->name);
        EXPECT_EQ(parse_compile_params(std::string("metrics=['") + s->name + "']").metrics.at(0), m) << s->name;
        for (const char* w : s->written)
            EXPECT_EQ(parse_compile_params(std::string("metrics=['") + w + "']").metrics.at(0), m) << w;
    }
}

TEST(Vocabulary, EveryLayerKindIsRegisteredOnceWithANativeForm) {
    EXPECT_EQ(cfg::native_layer_forms().size(), std::size(kLayerKinds));
    std::set<std::string> types;
    for (LayerKind k : kLayerKinds) {
        EXPECT_EQ(layers::layer_type(k).kind(), k);
        const cfg::NativeLayerForm& f = cfg::native_form(k);
        EXPECT_EQ(f.kind, k);
        EXPECT_STREQ(to_string(k), f.type);
        EXPECT_TRUE(types.insert(f.type).second) << f.type;
    }
}
