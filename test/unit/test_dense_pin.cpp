// Pins the dense (MLP) path bit for bit: the floats a dense network computes and the canonical JSON
// of dense architectures must never change, because model states store that JSON and training
// results (the demo's accuracies, expected test outputs) depend on every bit of the arithmetic.
// The values below were recorded from the code before convolutional layers were added (commit
// dc56dcf), with GCC. Float results depend on the vector instruction set Eigen compiles for (the
// width of its packets, FMA) and on the compiler, so the recorded checksums are keyed by those; on
// a combination without a recording the float checks are skipped (the JSON checks always run).
// Some cases also differ in the last bits between the hosts the project has run on with the same
// binary -- the one that recorded dc56dcf and a 2-core Intel Xeon of family 6 (/proc/cpuinfo:
// "Intel(R) Xeon(R) Processor") -- whatever -march says (checked with -march=icelake-server and with
// oneDNN held to AVX2), so the difference is in what the processor runs (libm's run-time variants),
// not in hopper's code. Each host's whole set of values is recorded; a build passes when it
// reproduces one of them exactly, which a change of the dense path never would.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hopper/config.h"
#include "hopper/network.h"
#include "hopper/rng.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

using namespace hopper;

namespace {

// The vector extensions the compiler targets, as Eigen sees them, and the compiler family (clang
// contracts a * b + c into FMA by default where GCC in ISO mode does not).
std::string isa_signature() {
    std::string s;
#ifdef __clang__
    s += "clang,";
#endif
#ifdef __AVX512F__
    s += "avx512f,";
#endif
#ifdef __AVX512DQ__
    s += "avx512dq,";
#endif
#ifdef __AVX512BW__
    s += "avx512bw,";
#endif
#ifdef __AVX2__
    s += "avx2,";
#endif
#ifdef __FMA__
    s += "fma,";
#endif
#ifdef __AVX__
    s += "avx,";
#endif
#ifdef __SSE4_2__
    s += "sse4.2,";
#endif
#ifdef __SSE2__
    s += "sse2,";
#endif
#ifdef __aarch64__
    s += "aarch64,";
#endif
    return s;
}

std::string hex(const void* data, std::size_t bytes) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", crc32_of(std::string_view(static_cast<const char*>(data), bytes)));
    return buf;
}

std::string hex_double(double d) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%a", d);
    return buf;
}

std::vector<float> values(std::size_t n, uint64_t seed, double lo, double hi) {
    Rng rng(seed);
    std::vector<float> v(n);
    for (auto& x : v) x = float(lo + (hi - lo) * rng.uniform());
    return v;
}

// Targets for a loss: one-hot for cross-entropy, values in (0, 1) otherwise.
std::vector<float> targets(int outputs, int rows, Loss loss, uint64_t seed) {
    Rng rng(seed);
    std::vector<float> y(std::size_t(outputs) * rows, 0.0f);
    for (int j = 0; j < rows; ++j) {
        if (loss == Loss::SoftmaxCrossEntropy) y[std::size_t(j) * outputs + rng.below(outputs)] = 1.0f;
        else
            for (int i = 0; i < outputs; ++i) y[std::size_t(j) * outputs + i] = float(0.05 + 0.9 * rng.uniform());
    }
    return y;
}

struct PinCase {
    const char* name;
    const char* architecture;  // native or Keras JSON
    const char* compile;
    const char* fit;
    int rows;
};

// Dropout everywhere it is allowed, every activation, loss and optimizer, odd widths (Eigen's
// vector bodies and scalar tails), partial last minibatches, weight decay and learning-rate decay.
const PinCase kCases[] = {
    {"adam_dropout",
     R"({"input_dim": 20, "layers": [{"units": 37, "activation": "relu", "dropout": 0.3},
         {"units": 16, "activation": "tanh", "dropout": 0.1}, {"units": 5, "activation": "softmax"}]})",
     "loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']", "batch_size=8, seed=3", 50},
    {"nesterov_sigmoid_bce",
     R"({"input_dim": 7, "initializer": "he_normal", "layers": [{"units": 9, "activation": "sigmoid", "dropout": 0.5},
         {"units": 3, "activation": "sigmoid"}]})",
     "loss='binary_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9, nesterov=True)', weight_decay=0.001",
     "batch_size=5, seed=11", 23},
    {"rmsprop_linear_mse",
     R"({"input_dim": 6, "layers": [{"units": 4, "activation": "linear", "use_bias": false, "initializer": "glorot_normal"},
         {"units": 2, "activation": "linear"}]})",
     "loss='mse', optimizer='RMSprop(lr=0.01, decay=0.01)'", "batch_size=4, seed=5", 19},
    {"momentum_relu_mse",
     R"({"input_dim": 33, "layers": [{"units": 65, "activation": "relu", "dropout": 0.25, "initializer": "he_uniform"},
         {"units": 17, "activation": "linear", "dropout": 0.2}, {"units": 3, "activation": "relu"}]})",
     "loss='mse', optimizer='SGD(lr=0.05, momentum=0.5)'", "batch_size=16, seed=42", 40},
    {"keras_sgd_softmax",
     R"({"class_name": "Sequential", "config": {"name": "s", "layers": [
         {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 12], "name": "in"}},
         {"class_name": "Dense", "config": {"name": "d1", "units": 24, "activation": "linear"}},
         {"class_name": "Activation", "config": {"activation": "tanh"}},
         {"class_name": "Dropout", "config": {"rate": 0.4}},
         {"class_name": "Dropout", "config": {"rate": 0.1}},
         {"class_name": "Dense", "config": {"name": "d2", "units": 4, "activation": "softmax"}}]}})",
     "loss='categorical_crossentropy', optimizer='SGD(lr=0.2)'", "batch_size=7, seed=9", 30},
};

struct Recorded {
    const char* name;
    const char* params_crc;  // parameters after two visits
    const char* slots_crc;   // optimizer slots
    const char* loss;        // last visit's loss sum, %a
    const char* predict_crc;
};

// Recorded per instruction set (see the file comment).
struct Recording {
    const char* isa;
    const char* host;
    std::vector<Recorded> cases;
    const char* gradient_crc;  // NetworkDensePin.GradientThroughGeneralPath
};

const std::vector<Recording>& recordings() {
    static const std::vector<Recording> r = {
        // -O3 -march=native on an AVX-512 host (CMake's and the Makefile's default flags).
        {"avx512f,avx512dq,avx512bw,avx2,fma,avx,sse4.2,sse2,",
         "the host of dc56dcf",
         {
             {"adam_dropout", "e04ef7a7", "0e1fd9cf", "0x1.2ee5479b61cdp+6", "5011e53f"},
             {"nesterov_sigmoid_bce", "d782cd9f", "3fbcd12d", "0x1.199076298f088p+4", "bcb0f6c4"},
             {"rmsprop_linear_mse", "706dd7d2", "46603e1b", "0x1.a3280c30444dbp+3", "f0369799"},
             {"momentum_relu_mse", "09610d35", "9cefc97f", "0x1.381904fbbf499p+4", "3dd70323"},
             {"keras_sgd_softmax", "df1b31ce", "00000000", "0x1.1b4d7567bfec6p+5", "a24505ad"},
         },
         "901d8bcf"},
        {"avx512f,avx512dq,avx512bw,avx2,fma,avx,sse4.2,sse2,",
         "Intel Xeon, family 6 (2026-11-25)",
         {
             {"adam_dropout", "e04ef7a7", "0e1fd9cf", "0x1.2ee5479b61cdp+6", "5011e53f"},
             {"nesterov_sigmoid_bce", "9d6dde3f", "4c2937cc", "0x1.19907623f9479p+4", "901168ab"},
             {"rmsprop_linear_mse", "89b53e49", "5ce30acf", "0x1.a3280d0a6c047p+3", "f1d3a63b"},
             {"momentum_relu_mse", "09610d35", "9cefc97f", "0x1.381904fbbf499p+4", "3dd70323"},
             {"keras_sgd_softmax", "df1b31ce", "00000000", "0x1.1b4d7567bfec6p+5", "a24505ad"},
         },
         "901d8bcf"},
        // -O1 -g without -march (x86-64's SSE2; test/suites/sanitizers.sh).
        {"sse2,",
         "the host of dc56dcf",
         {
             {"adam_dropout", "2af59142", "60f6013b", "0x1.2ee547df80e6ap+6", "764a850c"},
             {"nesterov_sigmoid_bce", "5a0d1eea", "9c815973", "0x1.199075faa3fcp+4", "c08c636c"},
             {"rmsprop_linear_mse", "82a36d84", "86b010ba", "0x1.a3280dc0fe954p+3", "4b7565fd"},
             {"momentum_relu_mse", "057989fc", "cc8d61bf", "0x1.3819056556bc5p+4", "4a2e1ad9"},
             {"keras_sgd_softmax", "885e992f", "00000000", "0x1.1b4d7596864cp+5", "27d30346"},
         },
         "c95dc668"},
        {"sse2,",
         "Intel Xeon, family 6 (2026-11-25)",
         {
             {"adam_dropout", "2b55d079", "438bc530", "0x1.2ee547a669b01p+6", "20fb6990"},
             {"nesterov_sigmoid_bce", "5a0d1eea", "9c815973", "0x1.199075faa3fcp+4", "c08c636c"},
             {"rmsprop_linear_mse", "8467ab40", "9405bf54", "0x1.a3280dced581dp+3", "b086d143"},
             {"momentum_relu_mse", "057989fc", "cc8d61bf", "0x1.3819056556bc5p+4", "4a2e1ad9"},
             {"keras_sgd_softmax", "885e992f", "00000000", "0x1.1b4d7596864cp+5", "27d30346"},
         },
         "c95dc668"},
    };
    return r;
}

std::vector<const Recording*> recordings_for_this_build() {
    std::vector<const Recording*> found;
    for (const Recording& r : recordings())
        if (isa_signature() == r.isa) found.push_back(&r);
    return found;
}

ModelConfig config_of(const PinCase& c) {
    return resolve_config(parse_architecture(c.architecture), parse_compile_params(c.compile), parse_fit_params(c.fit));
}

}  // namespace

TEST(NetworkDensePin, TrainingAndPredictionAreBitForBitUnchanged) {
    struct Actual {
        std::string name, params, slots, loss, predict;
    };
    std::vector<Actual> actual;
    std::string printed;
    for (std::size_t k = 0; k < std::size(kCases); ++k) {
        const PinCase& c = kCases[k];
        const ModelConfig config = config_of(c);
        const int in = config.arch.input_dim, out = config.arch.output_dim();
        const std::vector<float> x = values(std::size_t(in) * c.rows, 100 + k, -1.0, 1.0);
        const std::vector<float> y = targets(out, c.rows, config.compile.loss, 200 + k);
        Trainer t(config);
        for (int visit = 0; visit < 2; ++visit) {
            t.begin_visit();
            t.train_buffer(x.data(), y.data(), c.rows);
            t.finish_visit();
        }
        MatrixF p;
        t.network().predict(t.params().data(), ConstMatrixMap(x.data(), in, c.rows), p);
        actual.push_back({c.name, hex(t.params().data(), 4 * t.params().size()),
                          hex(t.optimizer().slots().data(), 4 * t.optimizer().slots().size()),
                          hex_double(t.counters().last_visit_loss_sum), hex(p.data(), 4 * std::size_t(p.size()))});
        const Actual& a = actual.back();
        printed += "        {\"" + a.name + "\", \"" + a.params + "\", \"" + a.slots + "\", \"" + a.loss + "\", \"" +
                   a.predict + "\"},\n";
        EXPECT_FALSE(t.counters().diverged) << c.name;
    }
    const std::vector<const Recording*> recs = recordings_for_this_build();
    if (recs.empty()) GTEST_SKIP() << "no recording for the instruction set \"" << isa_signature() << "\"";
    const auto same = [&](const Recording& r) {
        for (std::size_t k = 0; k < actual.size(); ++k) {
            const Actual& a = actual[k];
            const Recorded& e = r.cases.at(k);
            if (a.name != e.name || a.params != e.params_crc || a.slots != e.slots_crc || a.loss != e.loss ||
                a.predict != e.predict_crc)
                return false;
        }
        return true;
    };
    bool matched = false;
    for (const Recording* r : recs) matched = matched || same(*r);
    EXPECT_TRUE(matched) << "the dense path's floats match no recording for the instruction set \"" << isa_signature()
                         << "\"; values of this build:\n"
                         << printed;
}

// Softmax output with dropout and MSE (the general chain rule through the softmax Jacobian), a
// gradient buffer that is not 64-byte aligned (the workspace's aligned copy), two batch sizes.
TEST(NetworkDensePin, GradientThroughGeneralPath) {
    Architecture a = parse_architecture(
        R"({"input_dim": 19, "layers": [{"units": 23, "activation": "sigmoid", "dropout": 0.35}, {"units": 6, "activation": "softmax"}]})");
    a.layers.back().dropout = 0.2f;  // not allowed by validation, but the network supports it
    Network net(a);
    std::vector<float> params = values(net.num_params(), 5, -0.7, 0.7);
    std::vector<float> grads;
    GradientWorkspace ws(net);
    for (int n : {11, 4}) {
        const std::vector<float> x = values(std::size_t(19) * n, 6 + n, -1, 1);
        const std::vector<float> y = targets(6, n, Loss::MeanSquaredError, 8 + n);
        std::vector<float> g(net.num_params() + 1);
        const double loss =
            ws.loss_and_gradient(params.data(), ConstMatrixMap(x.data(), 19, n), ConstMatrixMap(y.data(), 6, n),
                                 Loss::MeanSquaredError, g.data() + 1, 77);
        grads.insert(grads.end(), g.begin() + 1, g.end());
        grads.push_back(float(loss));
    }
    const std::string crc = hex(grads.data(), 4 * grads.size());
    const std::vector<const Recording*> recs = recordings_for_this_build();
    if (recs.empty()) GTEST_SKIP() << "no recording for the instruction set \"" << isa_signature() << "\": " << crc;
    bool matched = false;
    for (const Recording* r : recs) matched = matched || crc == r->gradient_crc;
    EXPECT_TRUE(matched) << "instruction set \"" << isa_signature() << "\": " << crc;
}

TEST(NetworkDensePin, CanonicalJsonOfDenseArchitecturesIsUnchanged) {
    const char* expected[] = {
        R"({"architecture":{"input_dim":20,"layers":[{"units":37,"activation":"relu","use_bias":true,"initializer":"he_uniform","dropout":0.3},{"units":16,"activation":"tanh","use_bias":true,"initializer":"glorot_uniform","dropout":0.1},{"units":5,"activation":"softmax","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]},"compile":{"loss":"softmax_cross_entropy","loss_given":true,"optimizer":{"name":"adam","learning_rate":0.01,"beta_1":0.9,"beta_2":0.999,"epsilon":1e-07,"decay":0.0},"weight_decay":0.0,"metrics":["accuracy"],"top_k":5},"fit":{"batch_size":8,"epochs":1,"seed":3}})",
        R"({"architecture":{"input_dim":7,"layers":[{"units":9,"activation":"sigmoid","use_bias":true,"initializer":"he_normal","dropout":0.5},{"units":3,"activation":"sigmoid","use_bias":true,"initializer":"he_normal","dropout":0.0}]},"compile":{"loss":"binary_cross_entropy","loss_given":true,"optimizer":{"name":"nesterov","learning_rate":0.1,"momentum":0.9,"decay":0.0},"weight_decay":0.001,"metrics":[],"top_k":5},"fit":{"batch_size":5,"epochs":1,"seed":11}})",
        R"({"architecture":{"input_dim":6,"layers":[{"units":4,"activation":"linear","use_bias":false,"initializer":"glorot_normal","dropout":0.0},{"units":2,"activation":"linear","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]},"compile":{"loss":"mean_squared_error","loss_given":true,"optimizer":{"name":"rmsprop","learning_rate":0.01,"rho":0.9,"epsilon":1e-07,"decay":0.01},"weight_decay":0.0,"metrics":[],"top_k":5},"fit":{"batch_size":4,"epochs":1,"seed":5}})",
        R"({"architecture":{"input_dim":33,"layers":[{"units":65,"activation":"relu","use_bias":true,"initializer":"he_uniform","dropout":0.25},{"units":17,"activation":"linear","use_bias":true,"initializer":"glorot_uniform","dropout":0.2},{"units":3,"activation":"relu","use_bias":true,"initializer":"he_uniform","dropout":0.0}]},"compile":{"loss":"mean_squared_error","loss_given":true,"optimizer":{"name":"momentum","learning_rate":0.05,"momentum":0.5,"decay":0.0},"weight_decay":0.0,"metrics":[],"top_k":5},"fit":{"batch_size":16,"epochs":1,"seed":42}})",
        R"({"architecture":{"input_dim":12,"layers":[{"units":24,"activation":"tanh","use_bias":true,"initializer":"glorot_uniform","dropout":0.46},{"units":4,"activation":"softmax","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]},"compile":{"loss":"softmax_cross_entropy","loss_given":true,"optimizer":{"name":"sgd","learning_rate":0.2,"decay":0.0},"weight_decay":0.0,"metrics":[],"top_k":5},"fit":{"batch_size":7,"epochs":1,"seed":9}})",
    };
    std::string actual;
    for (std::size_t k = 0; k < std::size(kCases); ++k) {
        const ModelConfig config = config_of(kCases[k]);
        actual += "        R\"(" + config.to_json() + ")\",\n";
        EXPECT_EQ(config.to_json(), expected[k]) << kCases[k].name;
        // The canonical form parses back to an equal configuration with the same text.
        const ModelConfig back = parse_model_config(config.to_json());
        EXPECT_EQ(back.arch, config.arch);
        EXPECT_EQ(back.to_json(), config.to_json());
    }
    if (::testing::Test::HasFailure()) std::printf("values of this build:\n%s", actual.c_str());
}

// Keras import of dense models (Activation and Dropout merged into the Dense before them) gives
// the same architecture as before.
TEST(NetworkDensePin, KerasDenseImportIsUnchanged) {
    const ModelConfig c = config_of(kCases[4]);
    EXPECT_EQ(
        c.arch.to_json(),
        R"({"input_dim":12,"layers":[{"units":24,"activation":"tanh","use_bias":true,"initializer":"glorot_uniform","dropout":0.46},{"units":4,"activation":"softmax","use_bias":true,"initializer":"glorot_uniform","dropout":0.0}]})");
    EXPECT_EQ(c.arch.shape_string(), "12-24-4");
    EXPECT_EQ(c.arch.num_params(), 12u * 24 + 24 + 24 * 4 + 4);
}
