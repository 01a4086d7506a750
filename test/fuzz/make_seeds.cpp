// Writes seed inputs for the fuzzers that need binary or generated input: real model states
// (several optimizers, activations, losses; fresh and trained), the canonical model configuration
// JSON inside them, valid packed buffers, recipes, and the models' ONNX exports. Usage: hopper_fuzz_seeds
// CORPUS_DIR (test/fuzz/corpus; its state/, model_config/, buffer/, recipe/ and onnx/ are rewritten). The output is
// deterministic, and committed.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hopper/config.h"
#include "hopper/onnx.h"
#include "hopper/recipe.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

namespace fs = std::filesystem;
using namespace hopper;

static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream f(p, std::ios::binary);
    f.write(bytes.data(), std::streamsize(bytes.size()));
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    const fs::path root = argv[1];
    for (const char* d : {"state", "model_config", "buffer", "recipe", "onnx"}) {
        fs::remove_all(root / d);
        fs::create_directories(root / d);
    }
    struct Seed {
        const char* name;
        const char* arch;
        const char* compile;
        const char* fit;
    };
    const std::vector<Seed> seeds = {
        {"sgd_softmax",
         R"({"input_dim": 3, "layers": [{"units": 4, "activation": "relu"}, {"units": 3, "activation": "softmax"}]})",
         "optimizer='SGD(lr=0.1)', metrics=['accuracy']", "batch_size=2"},
        {"momentum_sigmoid", R"({"input_dim": 2, "layers": [{"units": 1, "activation": "sigmoid"}]})",
         "loss='binary_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']", "batch_size=4"},
        {"nesterov_tanh",
         R"({"input_dim": 2, "layers": [{"units": 3, "activation": "tanh", "dropout": 0.5}, {"units": 2, "activation": "softmax"}]})",
         "optimizer='SGD(lr=0.05, momentum=0.8, nesterov=True)', metrics=['accuracy', 'top_k_categorical_accuracy'], top_k=1",
         "batch_size=3, seed=7"},
        {"adam_linear", R"({"input_dim": 4, "layers": [{"units": 2, "activation": "linear", "use_bias": false}]})",
         "loss='mse', optimizer='Adam(lr=0.01)', metrics=['mae', 'mse']", "batch_size=1"},
        {"rmsprop_decay",
         R"({"input_dim": 2, "initializer": "he_normal", "layers": [{"units": 5, "activation": "relu"}, {"units": 2, "activation": "sigmoid"}]})",
         "loss='binary_crossentropy', optimizer='RMSprop(lr=0.01, decay=0.001)', metrics=['loss'], weight_decay=0.0001",
         "batch_size=2, epochs=2"},
        // Convolutional models: batch normalization (its moving statistics in the state), pooling
        // of both kinds, "same" padding with strides, Flatten with dropout, global pooling.
        {"cnn_adam_bn",
         R"({"input_shape": [4, 3, 2], "layers": [{"type": "conv2d", "filters": 3, "kernel_size": 2, "padding": "same", "activation": "relu"}, {"type": "batch_normalization"}, {"type": "max_pooling2d", "pool_size": [2, 1]}, {"type": "flatten", "dropout": 0.5}, {"units": 3, "activation": "softmax"}]})",
         "optimizer='Adam(lr=0.01)', metrics=['accuracy'], weight_decay=0.001", "batch_size=3"},
        {"cnn_gap_momentum",
         R"({"input_shape": [5, 5, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": [3, 2], "strides": 2, "padding": "same", "use_bias": false}, {"type": "batch_normalization", "center": false, "momentum": 0.9, "activation": "tanh"}, {"type": "average_pooling2d", "pool_size": 2, "strides": 1, "padding": "same"}, {"type": "global_average_pooling2d", "activation": "softmax"}]})",
         "optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']", "batch_size=2"},
    };
    for (const Seed& s : seeds) {
        ModelConfig c =
            resolve_config(parse_architecture(s.arch), parse_compile_params(s.compile), parse_fit_params(s.fit));
        write(root / "model_config" / (std::string(s.name) + ".json"), c.to_json());
        Trainer fresh(c);
        write(root / "state" / (std::string(s.name) + "_fresh.bin"), serialize_state(fresh));
        // The model as hopper exports it to ONNX (fuzz_onnx).
        write(root / "onnx" / (std::string(s.name) + ".onnx"),
              export_onnx(c.arch, fresh.params(), OnnxExportOptions{}));
        // Trained on one small buffer: non-zero counters and optimizer slots.
        const int in = c.arch.input_dim, out = c.arch.output_dim(), rows = 4;
        std::vector<float> x(std::size_t(in) * rows), y(std::size_t(out) * rows, 0.0f);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(i % 5) * 0.3f - 0.5f;
        for (int r = 0; r < rows; ++r) y[std::size_t(r) * out + std::size_t(r % out)] = 1.0f;
        fresh.begin_visit();
        fresh.train_buffer(x.data(), y.data(), rows);
        fresh.finish_visit();
        write(root / "state" / (std::string(s.name) + "_trained.bin"), serialize_state(fresh));
        // A packed buffer pair for fuzz_buffer (header: ndims, x floats, mode; dims; data). The
        // fuzzer's model has input 1 + (mode & 3) and output 1 + ((mode >> 2) & 3).
        if (in <= 4 && out <= 4) {
            std::string b(20, '\0');
            b[0] = 2;
            b[1] = 2;
            b[2] = char(x.size());
            b[3] = char((in - 1) | ((out - 1) << 2));
            int dims[4] = {rows, in, rows, out};
            std::memcpy(&b[4], dims, sizeof dims);
            b.append(reinterpret_cast<const char*>(x.data()), x.size() * 4);
            b.append(reinterpret_cast<const char*>(y.data()), y.size() * 4);
            write(root / "buffer" / (std::string(s.name) + ".bin"), b);
        }
    }
    // A buffer for fuzz_buffer's CNN (mode bit 128): 3 rows of 1x3x1 images, 2 classes.
    {
        std::string b(20, '\0');
        b[0] = 2;
        b[1] = 2;
        b[2] = 9;
        b[3] = char(2 | (1 << 2) | 128);
        int dims[4] = {3, 3, 3, 2};
        std::memcpy(&b[4], dims, sizeof dims);
        const float x[9] = {0.5f, -1, 2, 0, 0.25f, -0.5f, 1, 1, -2}, y[6] = {1, 0, 0, 1, 1, 0};
        b.append(reinterpret_cast<const char*>(x), sizeof x);
        b.append(reinterpret_cast<const char*>(y), sizeof y);
        write(root / "buffer" / "cnn.bin", b);
    }
    // Recipes of every column kind and option, and targets, for fuzz_recipe.
    {
        ColumnSpec depth{"depth"}, price{"price"}, flag{"flag"}, day{"day"}, color{"color"}, city{"city"}, emb{"emb"};
        depth.impute = Imputation::Median;
        depth.missing_indicator = true;
        depth.scale = ScaleKind::Standardize;
        price.impute = Imputation::Constant;
        price.impute_value = -0.1;
        price.scale = ScaleKind::MinMax;
        flag.kind = ColumnKind::Boolean;
        day.kind = ColumnKind::Date;
        color.kind = city.kind = ColumnKind::Categorical;
        color.min_frequency = 2;
        city.encoding = CategoryEncoding::Codes;
        city.max_categories = 2;
        emb.kind = ColumnKind::Array;
        emb.scale = ScaleKind::Standardize;
        RecipeFitter all({depth, price, flag, day, color, city, emb});
        RecipeFitter small({color});
        const char* colors[5] = {"red", "blue", "red", "gr\xc3\xbcn", "blue"};
        const char* cities[5] = {"Oslo", "Lyon", "Lyon", "Kyiv", "Oslo"};
        for (int i = 0; i < 5; ++i) {
            const float e[2] = {0.1f * float(i), 1.0f / float(i + 1)};
            const Cell c = i == 4 ? Cell() : Cell(colors[i]);
            all.add({i == 1 ? Cell() : Cell(0.3 * i), Cell(1e3 / 3 * i), Cell(double(i % 2)), Cell(19000.25 + i), c,
                     Cell(cities[i]), Cell(e, 2)});
            small.add({c});
        }
        write(root / "recipe" / "all_kinds.json", all.finish().to_json());
        write(root / "recipe" / "one_categorical.json", small.finish().to_json());
        TargetFitter classes("species", TargetKind::Classification, ClassOrder::Numeric),
            value("price", TargetKind::Regression);
        for (const char* v : {"10", "9", "-1.5"}) classes.add(Cell(v));
        classes.add(Cell());
        value.add(Cell(2.5));
        write(root / "recipe" / "target_classes.json", classes.finish().to_json());
        write(root / "recipe" / "target_regression.json", value.finish().to_json());
    }
    std::printf("seeds written to %s\n", root.c_str());
    return 0;
}
