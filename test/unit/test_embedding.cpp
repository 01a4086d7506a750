// Embedding layers (issue 27, item 2) and architectures whose input width is left to the packed
// table (item 3): forward values on a hand-checked case (a code and a one-hot block), gradients
// against central differences, frozen tables, refused codes, the native JSON (round trip, left-out
// widths), resolving against a feature recipe and its refusals.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "error_helpers.h"
#include "hopper/config.h"
#include "hopper/network.h"
#include "hopper/recipe.h"
#include "hopper/rng.h"
#include "hopper/state_format.h"
#include "hopper/trainer.h"

using namespace hopper;
using hopper::test::kind_of;
using hopper::test::message_of;

namespace {

Layer embedding(const std::string& column, int units, int vocabulary, int offset, int width) {
    Layer l;
    l.kind = LayerKind::Embedding;
    l.column = column;
    l.units = units;
    l.vocabulary = vocabulary;
    l.column_offset = offset;
    l.column_width = width;
    return l;
}

Layer dense(int units, Activation act = Activation::Linear) {
    Layer l;
    l.units = units;
    l.activation = act;
    return l;
}

// Packed rows of 6 slots: x0, code of "a" (4 codes), one-hot "b" (3 slots), x1. The embedding of
// "b" reads offset 1 of its input: the code slot of "a" went out before it.
Architecture two_embeddings(std::vector<Layer> after) {
    Architecture a;
    a.input_dim = 6;
    a.layers = {embedding("a", 2, 4, 1, 1), embedding("b", 3, 3, 1, 3)};
    for (Layer& l : after) a.layers.push_back(l);
    return a;
}

std::vector<float> rows() {
    return {0.5f,   2.0f, 0.0f, 1.0f, 0.0f, -1.5f,  // a = 2, b = slot 1
            -0.25f, 0.0f, 1.0f, 0.0f, 0.0f, 3.0f,   // a = 0, b = slot 0
            1.0f,   3.0f, 0.0f, 0.0f, 0.0f, 2.0f};  // a = 3, b = no slot (a row of zeros)
}

Recipe fitted_recipe() {
    ColumnSpec x;
    x.name = "x";
    ColumnSpec cut;
    cut.name = "cut";
    cut.kind = ColumnKind::Categorical;
    cut.encoding = CategoryEncoding::Codes;
    ColumnSpec color = cut;
    color.name = "color";
    color.encoding = CategoryEncoding::OneHot;
    RecipeFitter f({x, cut, color});
    const char* cuts[] = {"good", "ideal", "fair", "good"};
    const char* colors[] = {"red", "blue", "red", "green"};
    for (int i = 0; i < 4; ++i) f.add({Cell(double(i)), Cell(cuts[i]), Cell(colors[i])});
    return f.finish();
}

}  // namespace

TEST(Embedding, ForwardReplacesEachBlockByItsRowAfterTheOtherFeatures) {
    const Network net(two_embeddings({}));
    ASSERT_EQ(net.num_params(), 4u * 2 + 3u * 3);
    EXPECT_EQ(net.shapes().back().size(), 2u + 2 + 3);  // x0, x1, then a's and b's vectors
    EXPECT_EQ(net.arch().shape_string(), "6-emb(a)4x2-emb(b)3x3");
    std::vector<float> p(net.num_params());
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = float(i + 1);  // a: rows {1,2},{3,4},{5,6},{7,8}
    MatrixF out;
    const std::vector<float> x = rows();
    net.predict(p.data(), ConstMatrixMap(x.data(), 6, 3), out);
    // b's table: rows {9,10,11}, {12,13,14}, {15,16,17}.
    const std::vector<std::vector<float>> want = {{0.5f, -1.5f, 5, 6, 12, 13, 14},
                                                  {-0.25f, 3.0f, 1, 2, 9, 10, 11},
                                                  {1.0f, 2.0f, 7, 8, 0, 0, 0}};
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 7; ++i) EXPECT_EQ(out(i, j), want[j][i]) << "row " << j << " feature " << i;
}

TEST(Embedding, GradientMatchesCentralDifferences) {
    for (bool frozen : {false, true}) {
        Architecture arch = two_embeddings({dense(4, Activation::Tanh), dense(3, Activation::Softmax)});
        arch.layers[1].trainable = !frozen;  // b's table frozen: its gradient is 0, a's still trains
        const Network net(arch);
        GradientWorkspace ws(net);
        Rng rng(5);
        std::vector<float> p(net.num_params());
        for (float& v : p) v = float(rng.uniform() - 0.5);
        const std::vector<float> x = rows();
        const std::vector<float> y = {0, 1, 0, 1, 0, 0, 0, 0, 1};
        const ConstMatrixMap xm(x.data(), 6, 3), ym(y.data(), 3, 3);
        std::vector<float> g(p.size(), -9.0f), scratch(p.size());
        ws.loss_and_gradient(p.data(), xm, ym, Loss::SoftmaxCrossEntropy, g.data(), 1);
        const float h = 1e-2f;
        for (std::size_t i = 0; i < p.size(); ++i) {
            const float saved = p[i];
            p[i] = saved + h;
            const double up = ws.loss_and_gradient(p.data(), xm, ym, Loss::SoftmaxCrossEntropy, scratch.data(), 1);
            p[i] = saved - h;
            const double down = ws.loss_and_gradient(p.data(), xm, ym, Loss::SoftmaxCrossEntropy, scratch.data(), 1);
            p[i] = saved;
            const double numeric = (up - down) / (2 * h) / 3;
            const bool in_b = i >= 8 && i < 17;
            if (frozen && in_b) EXPECT_EQ(g[i], 0.0f) << "parameter " << i;
            else EXPECT_NEAR(g[i], numeric, 1e-3 + 1e-2 * std::abs(numeric)) << "parameter " << i;
        }
        // Rows of a's table no sample uses (code 1) get no gradient.
        EXPECT_EQ(g[2], 0.0f);
        EXPECT_EQ(g[3], 0.0f);
        EXPECT_NE(g[4], 0.0f);
    }
}

TEST(Embedding, InitializesUniformlyAndTrainsThroughStates) {
    ModelConfig config = resolve_config(two_embeddings({dense(2, Activation::Softmax)}), {}, {});
    Trainer t(config);
    // Tables of 4 x 2 and 3 x 3: the last row of each, the "<unknown>" code no training row has, is
    // zeros, so that an unseen value adds nothing rather than a random vector.
    for (std::size_t i = 0; i < 17; ++i) {
        const bool unknown_row = (i >= 6 && i < 8) || i >= 14;
        EXPECT_LE(std::abs(t.params()[i]), 0.05f);
        if (unknown_row) EXPECT_EQ(t.params()[i], 0.0f) << i;
        else EXPECT_NE(t.params()[i], 0.0f) << i;
    }
    const std::string state = serialize_state(t);
    const Trainer back = deserialize_state(state);
    EXPECT_EQ(back.config().arch, config.arch);
    EXPECT_TRUE(std::equal(t.params().begin(), t.params().end(), back.params().begin()));
}

TEST(Embedding, RefusesACodeOutsideItsVocabulary) {
    const Network net(two_embeddings({}));
    const std::vector<float> p(net.num_params(), 0.5f);
    for (float bad : {4.0f, -1.0f, 1.5f, std::nanf("")}) {
        std::vector<float> x = rows();
        x[1] = bad;
        MatrixF out;
        EXPECT_EQ(kind_of([&] { net.predict(p.data(), ConstMatrixMap(x.data(), 6, 3), out); }),
                  ErrorKind::InvalidParameter);
    }
}

TEST(Embedding, NativeJsonRoundTripAndLeftOutWidths) {
    const Architecture a = parse_architecture(
        R"({"layers": [{"type": "embedding", "column": "cut", "output_dim": 3},
                       {"type": "Embedding", "column": "color", "output_dim": 2, "input_dim": 3, "dropout": 0.25},
                       {"units": 4, "activation": "relu"}, {"units": 1, "activation": "sigmoid"}]})");
    EXPECT_FALSE(a.resolved());
    EXPECT_EQ(a.input_dim, 0);
    EXPECT_EQ(a.layers[1].vocabulary, 3);
    EXPECT_EQ(a.output_dim(), 1);
    EXPECT_EQ(parse_architecture(a.to_json()), a);
    EXPECT_EQ(a.to_json().find("input_dim\":0"), std::string::npos);
    // Without a table there is no width: a network (and so a state) is refused, not built.
    EXPECT_EQ(kind_of([&] { Network n(a); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { Trainer t(resolve_config(a, {}, {})); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { state_from_weights(std::string(16, '\0'), resolve_config(a, {}, {})); }),
              ErrorKind::InvalidParameter);
    // A dense model without input_dim: the packed table's width.
    const Architecture d = parse_architecture(R"({"layers": [{"units": 2, "activation": "softmax"}]})");
    EXPECT_FALSE(d.resolved());
    const Architecture r = resolve_inputs(d, 7, nullptr);
    EXPECT_TRUE(r.resolved());
    EXPECT_EQ(r.input_dim, 7);
    EXPECT_EQ(r.num_params(), 16u);
    // A given width stays, for the caller to compare with the table.
    EXPECT_EQ(resolve_inputs(r, 9, nullptr).input_dim, 7);
}

TEST(Embedding, ResolvesAgainstTheRecipeCodesAndOneHot) {
    const Recipe recipe = fitted_recipe();
    // x, cut (code), color=blue, color=green, color=red, color=<unknown> ...
    ASSERT_EQ(recipe.column_offset(1), 1);
    const Architecture a = parse_architecture(
        R"({"layers": [{"type": "embedding", "column": "color", "output_dim": 2},
                       {"type": "embedding", "column": "cut", "output_dim": 3},
                       {"units": 2, "activation": "softmax"}]})");
    const Architecture r = resolve_inputs(a, recipe.width(), &recipe);
    ASSERT_TRUE(r.resolved());
    EXPECT_EQ(r.input_dim, recipe.width());
    const Layer& color = r.layers[0];
    EXPECT_EQ(color.column_offset, 2);
    EXPECT_EQ(color.column_width, recipe.column_width(2));
    EXPECT_EQ(color.vocabulary, recipe.column_width(2));
    const Layer& cut = r.layers[1];
    EXPECT_EQ(cut.column_offset, 1);  // before color's block: unmoved
    EXPECT_EQ(cut.column_width, 1);
    EXPECT_EQ(cut.vocabulary, recipe.embeddings().at(0).vocabulary);
    // The resolved form is canonical and resolves to itself again.
    EXPECT_EQ(parse_architecture(r.to_json()), r);
    EXPECT_EQ(resolve_inputs(r, recipe.width(), &recipe), r);

    // A packed row through the model: 1 feature (x) + 2 + 3 into the dense layer.
    const Network net(r);
    EXPECT_EQ(net.shapes()[2].size(), 6u);
    const std::vector<float> row = recipe.apply({Cell(2.0), Cell("ideal"), Cell("mauve")});
    std::vector<float> p(net.num_params(), 0.1f);
    MatrixF out;
    net.predict(p.data(), ConstMatrixMap(row.data(), recipe.width(), 1), out);
    EXPECT_NEAR(out(0, 0) + out(1, 0), 1.0f, 1e-6);
}

TEST(Embedding, Refusals) {
    const Recipe recipe = fitted_recipe();
    auto arch = [](const std::string& layers) { return parse_architecture(R"({"layers": [)" + layers + "]}"); };
    const std::string out = R"({"units": 2, "activation": "softmax"})";
    auto emb = [](const std::string& column, const std::string& extra = "") {
        return R"({"type": "embedding", "column": ")" + column + R"(", "output_dim": 2)" + extra + "}, ";
    };
    // Columns the recipe does not have, that are not categorical; a table without a recipe.
    EXPECT_NE(message_of([&] {
                  resolve_inputs(arch(emb("nope") + out), recipe.width(), &recipe);
              }).find("of column \"nope\": the packed table has no such column"),
              std::string::npos);
    EXPECT_EQ(kind_of([&] { resolve_inputs(arch(emb("x") + out), recipe.width(), &recipe); }),
              ErrorKind::InvalidParameter);
    EXPECT_NE(message_of([&] {
                  resolve_inputs(arch(emb("x") + out), recipe.width(), &recipe);
              }).find("not categorical"),
              std::string::npos);
    EXPECT_EQ(kind_of([&] { resolve_inputs(arch(emb("cut") + out), 6, nullptr); }), ErrorKind::InvalidParameter);
    // cut is packed as one code: a model that does not embed it would read the code as a quantity.
    EXPECT_NE(message_of([&] {
                  resolve_inputs(arch(out), recipe.width(), &recipe);
              }).find("column \"cut\" is packed as integer codes but no embedding layer reads it"),
              std::string::npos);
    EXPECT_EQ(kind_of([&] { resolve_inputs(arch(emb("color") + out), recipe.width(), &recipe); }),
              ErrorKind::InvalidParameter);
    // A vocabulary other than the column's; a binding other than the table's.
    EXPECT_EQ(kind_of([&] { resolve_inputs(arch(emb("cut", R"(, "input_dim": 99)") + out), recipe.width(), &recipe); }),
              ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] {
                  resolve_inputs(arch(emb("cut", R"(, "input_dim": 4, "offset": 0, "width": 1)") + out), recipe.width(),
                                 &recipe);
              }),
              ErrorKind::InvalidParameter);
    // Shapes of the stack: after another layer, twice the same column, dropout before the last
    // embedding, an activation, an image input, a binding beyond the packed features.
    EXPECT_EQ(kind_of([&] { arch(R"({"units": 3}, )" + emb("cut") + out); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { arch(emb("cut") + emb("cut") + out); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { arch(emb("cut", R"(, "dropout": 0.5)") + emb("color") + out); }),
              ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { arch(emb("cut", R"(, "activation": "relu")") + out); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of(
                  [&] { parse_architecture(R"({"input_shape": [2, 2, 1], "layers": [)" + emb("cut") + out + "]}"); }),
              ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] {
                  parse_architecture(R"({"input_dim": 3, "layers": [)" +
                                     emb("cut", R"(, "input_dim": 4, "offset": 3, "width": 1)") + out + "]}");
              }),
              ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { arch(emb("cut", R"(, "input_dim": 4, "offset": 0, "width": 2)") + out); }),
              ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { arch(R"({"type": "embedding", "output_dim": 2}, )" + out); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { arch(R"({"type": "embedding", "column": "cut"}, )" + out); }), ErrorKind::InvalidParameter);
    EXPECT_EQ(kind_of([&] { parse_architecture(R"({"input_dim": 0, "layers": [)" + out + "]}"); }),
              ErrorKind::InvalidParameter);
}

// ---- Keras functional models -------------------------------------------------------------------

namespace {

// A tf.keras 2 layer of a functional model: class, name, config (without the name), inbound names.
std::string k2(const std::string& cls, const std::string& name, const std::string& config,
               const std::vector<std::string>& inbound) {
    std::string nodes;
    for (const std::string& i : inbound)
        nodes += (nodes.empty() ? "" : ", ") + std::string(R"([")") + i + R"(", 0, 0, {}])";
    return R"({"class_name": ")" + cls + R"(", "name": ")" + name + R"(", "config": {"name": ")" + name + "\"" +
           (config.empty() ? "" : ", " + config) + R"(}, "inbound_nodes": )" +
           (inbound.empty() ? "[]" : "[[" + nodes + "]]") + "}";
}

std::string functional(const std::vector<std::string>& layers, const std::string& outputs = R"([["out", 0, 0]])") {
    std::string ls;
    for (const std::string& l : layers) ls += (ls.empty() ? "" : ", ") + l;
    return R"({"class_name": "Functional", "config": {"name": "m", "layers": [)" + ls +
           R"(], "input_layers": [], "output_layers": )" + outputs + "}}";
}

const std::string kNumeric = k2("InputLayer", "numeric", R"("batch_input_shape": [null, 5])", {});
const std::string kCut = k2("InputLayer", "cut", R"("batch_input_shape": [null, 1])", {});
const std::string kEmb = k2("Embedding", "emb", R"("input_dim": 4, "output_dim": 2, "mask_zero": false)", {"cut"});
const std::string kFlat = k2("Flatten", "flat", "", {"emb"});
const std::string kOut = k2("Dense", "out", R"("units": 2, "activation": "softmax")", {"hidden"});

}  // namespace

TEST(EmbeddingKeras, FunctionalTabularModelKeras2AndKeras3) {
    const Architecture a = parse_architecture(
        functional({kNumeric, kCut, kEmb, kFlat, k2("Concatenate", "cat", R"("axis": -1)", {"numeric", "flat"}),
                    k2("Dense", "hidden", R"("units": 8, "activation": "relu")", {"cat"}),
                    k2("Dropout", "d", R"("rate": 0.5)", {"hidden"}),
                    k2("Dense", "out", R"("units": 2, "activation": "softmax")", {"d"})}));
    ASSERT_EQ(a.layers.size(), 3u);
    EXPECT_EQ(a.input_dim, 0);
    EXPECT_EQ(a.layers[0].kind, LayerKind::Embedding);
    EXPECT_EQ(a.layers[0].column, "cut");
    EXPECT_EQ(a.layers[0].vocabulary, 4);
    EXPECT_EQ(a.layers[0].units, 2);
    EXPECT_EQ(a.layers[1].units, 8);
    EXPECT_EQ(a.layers[1].dropout, 0.5f);
    EXPECT_EQ(a.layers[1].initializer, Initializer::GlorotUniform);  // Keras' default

    // Keras 3: inbound nodes as {"args": [...]} with keras_history, Concatenate's inputs in a list.
    auto t = [](const std::string& from) {
        return R"({"class_name": "__keras_tensor__", "config": {"shape": [null, 1], "dtype": "float32", "keras_history": [")" +
               from + R"(", 0, 0]}})";
    };
    auto k3 = [&](const std::string& cls, const std::string& name, const std::string& config, const std::string& args) {
        return R"({"module": "keras.layers", "class_name": ")" + cls + R"(", "config": {"name": ")" + name +
               R"(", "dtype": {"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}})" +
               (config.empty() ? "" : ", " + config) + R"(}, "registered_name": null, "name": ")" + name +
               R"(", "build_config": {"input_shape": [null, 99]}, "inbound_nodes": )" +
               (args.empty() ? "[]" : R"([{"args": )" + args + R"(, "kwargs": {}}])") + "}";
    };
    const std::string k3model =
        R"({"module": "keras.src.models.functional", "class_name": "Functional", "config": {"name": "f", "trainable": true, "layers": [)" +
        k3("InputLayer", "numeric", R"("batch_shape": [null, 5])", "") + ", " +
        k3("InputLayer", "cut", R"("batch_shape": [null, 1])", "") + ", " +
        k3("Embedding", "emb",
           R"("input_dim": 4, "output_dim": 2, "embeddings_initializer": {"module": "keras.initializers", "class_name": "RandomUniform", "config": {"seed": null, "minval": -0.05, "maxval": 0.05}}, "embeddings_regularizer": null, "mask_zero": false, "lora_rank": null)",
           "[" + t("cut") + "]") +
        ", " + k3("Reshape", "r", R"("target_shape": [2])", "[" + t("emb") + "]") + ", " +
        k3("Concatenate", "cat", R"("axis": -1)", "[[" + t("numeric") + ", " + t("r") + "]]") + ", " +
        k3("Dense", "hidden", R"("units": 8, "activation": "relu")", "[" + t("cat") + "]") + ", " +
        k3("Dropout", "d", R"("rate": 0.5)", "[" + t("hidden") + "]") + ", " +
        k3("Dense", "out", R"("units": 2, "activation": "softmax")", "[" + t("d") + "]") +
        R"(], "input_layers": [["numeric", 0, 0], ["cut", 0, 0]], "output_layers": ["out", 0, 0]}})";
    EXPECT_EQ(parse_architecture(k3model), a);

    // It resolves against a table packed from the columns x, cut (a code) and color (one-hot).
    const Recipe recipe = fitted_recipe();
    const Architecture r = resolve_inputs(a, recipe.width(), &recipe);
    EXPECT_TRUE(r.resolved());
    EXPECT_EQ(r.layers[0].column_offset, 1);
    // The numeric input's own width (5: x and color's one-hot block) is checked against the table.
    EXPECT_EQ(a.other_features, 5);
    Architecture wider = a;
    wider.other_features = 6;
    EXPECT_NE(message_of([&] {
                  resolve_inputs(wider, recipe.width(), &recipe);
              }).find("other input has 6 features but the packed table has 5 besides its embedded columns"),
              std::string::npos);

    // One categorical input and nothing else; a plain chain is a Sequential model.
    const Architecture one = parse_architecture(
        functional({kCut, kEmb, kFlat, k2("Dense", "out", R"("units": 2, "activation": "softmax")", {"flat"})}));
    EXPECT_EQ(one.layers.size(), 2u);
    const Architecture chain = parse_architecture(
        functional({kNumeric, k2("Dense", "out", R"("units": 2, "activation": "softmax")", {"numeric"})}));
    EXPECT_EQ(chain.input_dim, 5);
}

TEST(EmbeddingKeras, OtherGraphsRefusedNamingTheNode) {
    const std::string hidden = k2("Dense", "hidden", R"("units": 8)", {"cat"});
    auto refused = [](const std::string& json, const std::string& part) {
        const std::string m = message_of([&] { parse_architecture(json); });
        EXPECT_NE(m.find(part), std::string::npos) << m;
    };
    // The numeric input after the embedding: not hopper's order.
    refused(functional({kNumeric, kCut, kEmb, kFlat, k2("Concatenate", "cat", "", {"flat", "numeric"}), hidden, kOut}),
            "unsupported node \"cat\" (Concatenate, Keras layer 5)");
    // A layer between the numeric input and Concatenate.
    refused(functional({kNumeric, k2("Dense", "pre", R"("units": 3)", {"numeric"}), kCut, kEmb, kFlat,
                        k2("Concatenate", "cat", "", {"pre", "flat"}), hidden, kOut}),
            "unsupported node \"pre\" (Dense");
    // An Embedding of something else than an input.
    refused(functional({kNumeric, k2("Dense", "pre", R"("units": 3)", {"numeric"}),
                        k2("Embedding", "emb", R"("input_dim": 4, "output_dim": 2)", {"pre"}), kFlat,
                        k2("Concatenate", "cat", "", {"flat"}), hidden, kOut}),
            "unsupported node \"pre\"");
    // Two outputs; a branch off the path; a layer of two inputs other than Concatenate.
    refused(functional({kNumeric, k2("Dense", "out", R"("units": 2)", {"numeric"}),
                        k2("Dense", "out2", R"("units": 2)", {"numeric"})},
                       R"([["out", 0, 0], ["out2", 0, 0]])"),
            "2 outputs");
    refused(functional({kNumeric, k2("Dense", "side", R"("units": 2)", {"numeric"}),
                        k2("Dense", "out", R"("units": 2)", {"numeric"})}),
            "unsupported node \"side\" (Dense, Keras layer 2): it is not on the path");
    refused(functional({kNumeric, kCut, k2("Add", "add", "", {"numeric", "cut"}),
                        k2("Dense", "out", R"("units": 2)", {"add"})}),
            "unsupported node \"add\" (Add");
    // A shared layer; Embedding options hopper does not implement.
    refused(
        functional(
            {kNumeric,
             R"({"class_name": "Dense", "name": "out", "config": {"name": "out", "units": 2}, "inbound_nodes": [[["numeric", 0, 0, {}]], [["numeric", 0, 0, {}]]]})"}),
        "called more than once");
    refused(functional({kCut, k2("Embedding", "emb", R"("input_dim": 4, "output_dim": 2, "mask_zero": true)", {"cut"}),
                        kFlat, k2("Dense", "out", R"("units": 2)", {"flat"})}),
            "mask_zero");
    refused(functional({kCut,
                        k2("Embedding", "emb",
                           R"("input_dim": 4, "output_dim": 2, "embeddings_initializer": "glorot_uniform")", {"cut"}),
                        kFlat, k2("Dense", "out", R"("units": 2)", {"flat"})}),
            "embeddings_initializer");
    refused(functional({kCut, kEmb, k2("Reshape", "flat", R"("target_shape": [1, 2])", {"emb"}),
                        k2("Dense", "out", R"("units": 2)", {"flat"})}),
            "reshapes to [1,2]");
    refused(functional({kCut, kEmb, kFlat}, R"([["flat", 0, 0]])"), "no layers after its inputs");
    // A cycle: a layer that is its own input, or two that take each other (CI's fuzz_architecture:
    // the walk back from the output looped until memory ran out).
    refused(functional({kNumeric, k2("Dense", "out", R"("units": 2)", {"out"})}),
            "unsupported node \"out\" (Dense, Keras layer 2): it leads back to itself");
    refused(functional(
                {kNumeric, k2("Dense", "a", R"("units": 2)", {"out"}), k2("Dense", "out", R"("units": 2)", {"a"})}),
            "leads back to itself");
}

TEST(Embedding, AnInputDimOtherThanThePackedWidthIsRefused) {
    // A fuzz finding: input_dim 7 against a packed row of 8 left the embedding unbound, so the
    // architecture stayed unresolved after resolve_inputs.
    const Architecture a =
        parse_architecture(R"({"input_dim":7,"layers":[{"type":"embedding","column":"brand","output_dim":5},)"
                           R"({"units":8,"activation":"relu"},{"units":2,"activation":"softmax"}]})");
    try {
        (void)resolve_inputs(a, 8, nullptr);
        FAIL() << "resolve_inputs accepted input_dim 7 for a packed width of 8";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidParameter);
        EXPECT_NE(std::string(e.what()).find("packed table's width 8"), std::string::npos) << e.what();
    }
}
