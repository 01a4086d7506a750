// ONNX export of a hopper model (onnx.h). The protobuf classes are Debian's libonnx (onnx-ml.pb.h,
// generated from onnx.proto, linked as libonnx_proto with libprotobuf): the format's own definition,
// so every field is written as the ONNX specification names it.
#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "config_json.h"
#include "hopper/error.h"
#include "hopper/network.h"
#include "hopper/onnx.h"
#include "hopper/recipe.h"
#include "onnx_proto.h"

namespace hopper {
namespace {

class GraphWriter {
public:
    // `taken`: names the graph's inputs and output have (a recipe's column names): no node or
    // initializer may have one (a column named "Sub_out_3" would otherwise be redefined).
    GraphWriter(onnx::GraphProto* g, std::set<std::string> taken) : g_(g), taken_(std::move(taken)) {}

    std::string fresh(const std::string& stem) {
        std::string name;
        do name = stem + "_" + std::to_string(counter_++);
        while (taken_.count(name));
        return name;
    }

    // An initializer of float32 values with dims.
    std::string floats(const std::string& stem, const std::vector<int64_t>& dims, const float* data, std::size_t n) {
        onnx::TensorProto* t = g_->add_initializer();
        const std::string name = fresh(stem);
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t d : dims) t->add_dims(d);
        t->set_raw_data(std::string(reinterpret_cast<const char*>(data), n * sizeof(float)));
        return name;
    }
    std::string int64s(const std::string& stem, const std::vector<int64_t>& values) {
        onnx::TensorProto* t = g_->add_initializer();
        const std::string name = fresh(stem);
        t->set_name(name);
        t->set_data_type(onnx::TensorProto::INT64);
        t->add_dims(int64_t(values.size()));
        for (int64_t v : values) t->add_int64_data(v);
        return name;
    }

    // A node of op_type reading `inputs`; returns its (one) output's name.
    onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs, std::string* output,
                          const std::string& output_name = {}) {
        onnx::NodeProto* n = g_->add_node();
        n->set_op_type(op);
        n->set_name(fresh(op));
        for (const std::string& i : inputs) n->add_input(i);
        *output = output_name.empty() ? fresh(op + "_out") : output_name;
        n->add_output(*output);
        return n;
    }

    static void attr(onnx::NodeProto* n, const std::string& name, int64_t v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INT);
        a->set_i(v);
    }
    static void attr(onnx::NodeProto* n, const std::string& name, float v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }
    static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<float>& v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::FLOATS);
        for (float x : v) a->add_floats(x);
    }
    static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<std::string>& v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::STRINGS);
        for (const std::string& x : v) a->add_strings(x);
    }
    static void attr(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
        onnx::AttributeProto* a = n->add_attribute();
        a->set_name(name);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t x : v) a->add_ints(x);
    }

private:
    onnx::GraphProto* g_;
    std::set<std::string> taken_;
    int counter_ = 0;
};

// The recipe's column names: the graph's inputs.
std::set<std::string> recipe_column_names(const std::string& recipe_json) {
    std::set<std::string> names;
    if (recipe_json.empty()) return names;
    const cfg::json doc = cfg::parse_json_text(recipe_json, "feature recipe");
    for (const cfg::json& col : doc.at("columns")) names.insert(col.at("name").get<std::string>());
    return names;
}

void value_info(onnx::ValueInfoProto* v, const std::string& name, int64_t width,
                int32_t elem_type = onnx::TensorProto::FLOAT) {
    v->set_name(name);
    onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    onnx::TensorShapeProto* s = t->mutable_shape();
    s->add_dim()->set_dim_param("N");
    s->add_dim()->set_dim_value(width);
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c < 0x20) {
            static const char* hex = "0123456789abcdef";
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += char(c);
        }
    }
    return out + "\"";
}

// ONNX pads [top, left, bottom, right] of hopper's padding (layers.cpp: TensorFlow's "same").
std::vector<int64_t> pads_of(const Layer& l, const TensorShape& in) {
    if (l.padding == Padding::Valid) return {0, 0, 0, 0};
    auto total = [](int64_t n, int64_t k, int64_t s) {
        const int64_t out = (n + s - 1) / s;
        return std::max<int64_t>((out - 1) * s + k - n, 0);
    };
    const int64_t ph = total(in.height, l.kernel_h, l.stride_h), pw = total(in.width, l.kernel_w, l.stride_w);
    return {ph / 2, pw / 2, ph - ph / 2, pw - pw / 2};
}

constexpr const char* kOnnxMl = "ai.onnx.ml";

// Whether "" is a value of a categorical recipe column of its own: a kept category or an <other> one.
bool empty_string_is_value(const cfg::json& col) {
    for (const char* list : {"categories", "other_values"})
        for (const std::string& v : col.at(list).get<std::vector<std::string>>())
            if (v.empty()) return true;
    return false;
}

// The recipe's encoders as graph nodes (onnx.h): one input per column, their features concatenated
// in the recipe's order. Returns the name of the [N, width] features.
// `v` blank-padded to n characters (UTF-8), as PostgreSQL stores a char(n) value; as it is when
// it has n or more.
std::string blank_padded(const std::string& v, int n) {
    int chars = 0;
    for (unsigned char c : v)
        if ((c & 0xC0) != 0x80) ++chars;
    return chars >= n ? v : v + std::string(std::size_t(n - chars), ' ');
}

std::string recipe_graph(GraphWriter& w, onnx::GraphProto* graph, const std::string& recipe_text, int width,
                         const std::map<std::string, int>& char_widths) {
    const Recipe recipe = Recipe::from_json(recipe_text);  // validates it
    if (recipe.width() != width)
        fail(ErrorKind::Data, "the model's feature recipe gives " + std::to_string(recipe.width()) +
                                  " features, its architecture takes " + std::to_string(width));
    const cfg::json doc = cfg::parse_json_text(recipe_text, "feature recipe");
    std::vector<std::string> parts;
    int column = -1;
    for (const cfg::json& col : doc.at("columns")) {
        ++column;
        const std::string name = col.at("name").get<std::string>();
        const std::string kind = col.at("kind").get<std::string>();
        auto scaled = [&](std::string x, int n) {
            if (!col.contains("center")) return x;
            const std::vector<float> c = col.at("center").get<std::vector<float>>();
            const std::vector<float> s = col.at("spread").get<std::vector<float>>();
            w.node("Sub", {x, w.floats(name + "_center", {n}, c.data(), c.size())}, &x);
            w.node("Div", {x, w.floats(name + "_spread", {n}, s.data(), s.size())}, &x);
            return x;
        };
        if (kind == "numeric" || kind == "boolean" || kind == "date") {
            value_info(graph->add_input(), name, 1);
            std::string v;
            onnx::NodeProto* imp = w.node("Imputer", {name}, &v);
            imp->set_domain(kOnnxMl);
            GraphWriter::attr(imp, "imputed_value_floats", std::vector<float>{col.at("fill").get<float>()});
            GraphWriter::attr(imp, "replaced_value_float", std::numeric_limits<float>::quiet_NaN());
            parts.push_back(scaled(v, 1));
            if (col.at("missing_indicator").get<bool>()) {
                std::string m;
                w.node("IsNaN", {name}, &m);
                GraphWriter::attr(w.node("Cast", {m}, &m), "to", int64_t(onnx::TensorProto::FLOAT));
                parts.push_back(m);
            }
        } else if (kind == "array") {
            const int n = recipe.column_width(column);
            value_info(graph->add_input(), name, n);
            parts.push_back(scaled(name, n));
        } else if (kind == "categorical") {
            value_info(graph->add_input(), name, 1, onnx::TensorProto::STRING);
            // The slots of recipe_categorical.cpp: kept values, "<other>", "<null>", "<unknown>".
            const std::vector<std::string> kept = col.at("categories").get<std::vector<std::string>>();
            const std::vector<std::string> other = col.at("other_values").get<std::vector<std::string>>();
            const bool has_null = col.at("null").get<bool>();
            const int64_t k = int64_t(kept.size());
            const int64_t other_slot = other.empty() ? -1 : k;
            const int64_t null_slot = has_null ? k + (other.empty() ? 0 : 1) : -1;
            const int64_t unknown_slot = k + (other.empty() ? 0 : 1) + (has_null ? 1 : 0);
            std::vector<std::string> keys;
            std::vector<int64_t> values;
            for (int64_t i = 0; i < k; ++i) {
                keys.push_back(kept[std::size_t(i)]);
                values.push_back(i);
            }
            for (const std::string& o : other) {
                keys.push_back(o);
                values.push_back(other_slot);
            }
            // NULL is the empty string (string tensors have no NULL), unless "" is a value of its own
            // (onnx_empty_string_columns: export_onnx warns of it).
            if (!empty_string_is_value(col)) {
                keys.push_back("");
                values.push_back(has_null ? null_slot : unknown_slot);
            }
            // A char(n) column's values as drivers hand them, blank-padded, map as the trimmed ones.
            const auto width_it = char_widths.find(name);
            if (width_it != char_widths.end()) {
                const std::set<std::string> known(keys.begin(), keys.end());
                const std::size_t trimmed = keys.size();
                for (std::size_t i = 0; i < trimmed; ++i) {
                    std::string padded = blank_padded(keys[i], width_it->second);
                    if (known.count(padded)) continue;
                    keys.push_back(std::move(padded));
                    values.push_back(values[i]);
                }
            }
            std::string code;
            onnx::NodeProto* le = w.node("LabelEncoder", {name}, &code);
            le->set_domain(kOnnxMl);
            GraphWriter::attr(le, "keys_strings", keys);
            GraphWriter::attr(le, "values_int64s", values);
            GraphWriter::attr(le, "default_int64", unknown_slot);
            if (col.at("encoding").get<std::string>() == "codes") {
                GraphWriter::attr(w.node("Cast", {code}, &code), "to", int64_t(onnx::TensorProto::FLOAT));
                parts.push_back(code);
            } else {
                // "<unknown>" sets no slot (recipe_categorical.cpp): its column is a category no code
                // takes (-1), and the unknown code matches none (zeros = 1).
                std::vector<int64_t> cats;
                for (int64_t i = 0; i < unknown_slot; ++i) cats.push_back(i);
                cats.push_back(-1);
                std::string hot;
                onnx::NodeProto* oh = w.node("OneHotEncoder", {code}, &hot);
                oh->set_domain(kOnnxMl);
                GraphWriter::attr(oh, "cats_int64s", cats);
                GraphWriter::attr(oh, "zeros", int64_t(1));
                // [N, 1, slots] -> [N, slots]
                GraphWriter::attr(w.node("Flatten", {hot}, &hot), "axis", int64_t(1));
                parts.push_back(hot);
            }
        } else {
            fail(ErrorKind::Data, "the feature recipe has a column \"" + name + "\" of unknown kind \"" + kind + "\"");
        }
    }
    std::string out;
    if (parts.size() == 1) return parts[0];
    GraphWriter::attr(w.node("Concat", parts, &out), "axis", int64_t(1));
    return out;
}

}  // namespace

std::string export_onnx(const Architecture& arch, const std::vector<float>& params, const OnnxExportOptions& options) {
    const Network net(arch);
    if (params.size() != net.num_params())
        fail(ErrorKind::Internal, "ONNX export: " + std::to_string(params.size()) + " parameters for a model of " +
                                      std::to_string(net.num_params()));
    options.scaling.validate(arch.input_dim);

    onnx::ModelProto model;
    model.set_ir_version(kOnnxIrVersion);
    model.set_producer_name("hopper");
    model.set_producer_version(options.producer_version);
    model.set_doc_string("hopper model " + arch.shape_string() +
                         "; input: hopper's raw feature row (images channels-last, HWC), scaled inside the graph");
    onnx::OperatorSetIdProto* opset = model.add_opset_import();
    opset->set_domain("");
    opset->set_version(kOnnxOpset);
    auto meta = [&](const std::string& key, const std::string& value) {
        onnx::StringStringEntryProto* e = model.add_metadata_props();
        e->set_key(key);
        e->set_value(value);
    };
    if (!options.class_values.empty()) {
        std::string list = "[";
        for (std::size_t i = 0; i < options.class_values.size(); ++i)
            list += (i ? "," : "") + json_string(options.class_values[i]);
        meta("class_values", list + "]");
    }
    meta("hopper_architecture", arch.to_json());
    for (const auto& [k, v] : options.metadata) meta(k, v);

    onnx::GraphProto* graph = model.mutable_graph();
    graph->set_name(options.graph_name);
    std::set<std::string> taken = recipe_column_names(options.recipe_json);
    const std::string output = onnx_output_name(options.recipe_json);
    taken.insert(output);
    taken.insert("input");
    GraphWriter w(graph, std::move(taken));
    value_info(graph->add_output(), output, arch.output_dim());
    std::string cur = "input";
    if (options.recipe_json.empty()) {
        value_info(graph->add_input(), "input", arch.input_dim);
    } else {
        onnx::OperatorSetIdProto* ml = model.add_opset_import();
        ml->set_domain(kOnnxMl);
        ml->set_version(2);
        cur = recipe_graph(w, graph, options.recipe_json, arch.input_dim, options.char_widths);
    }
    // The scaling as FeatureScaling::apply computes it, in float32: x * float(1 / c), then
    // (x - center) / spread.
    const FeatureScaling& sc = options.scaling;
    if (sc.normalizing_const != 1.0) {
        const float inv = float(1.0 / sc.normalizing_const);
        const std::string k = w.floats("inv_normalizing_const", {}, &inv, 1);
        w.node("Mul", {cur, k}, &cur);
    }
    if (!sc.center.empty()) {
        const std::string c =
            w.floats("feature_center", {int64_t(sc.center.size())}, sc.center.data(), sc.center.size());
        const std::string s =
            w.floats("feature_spread", {int64_t(sc.spread.size())}, sc.spread.data(), sc.spread.size());
        w.node("Sub", {cur, c}, &cur);
        w.node("Div", {cur, s}, &cur);
    }
    if (arch.image_input()) {
        w.node("Reshape", {cur, w.int64s("nhwc_shape", {-1, arch.input_height, arch.input_width, arch.input_channels})},
               &cur);
        GraphWriter::attr(w.node("Transpose", {cur}, &cur), "perm", std::vector<int64_t>{0, 3, 1, 2});
    }

    const std::vector<TensorShape>& shapes = net.shapes();
    for (std::size_t li = 0; li < arch.layers.size(); ++li) {
        const Layer& l = arch.layers[li];
        const LayerSlice& s = net.slices()[li];
        const TensorShape& in = shapes[li];
        const float* p = params.data();
        switch (l.kind) {
            case LayerKind::Dense: {
                // hopper's W is Keras' kernel [inputs, units] in C order: Gemm's B without transB.
                std::vector<std::string> ins{cur, w.floats("dense_kernel", {s.inputs, s.units}, p + s.weight_offset,
                                                           std::size_t(s.inputs) * std::size_t(s.units))};
                if (l.use_bias)
                    ins.push_back(w.floats("dense_bias", {s.units}, p + s.bias_offset, std::size_t(s.units)));
                w.node("Gemm", ins, &cur);
                break;
            }
            case LayerKind::Conv2D: {
                // Keras' kernel (kh, kw, in, filters) to ONNX's (filters, in, kh, kw).
                const int64_t kh = l.kernel_h, kw = l.kernel_w, c = in.channels, m = l.filters;
                std::vector<float> k(std::size_t(kh * kw * c * m));
                for (int64_t i = 0; i < kh; ++i)
                    for (int64_t j = 0; j < kw; ++j)
                        for (int64_t ci = 0; ci < c; ++ci)
                            for (int64_t mi = 0; mi < m; ++mi)
                                k[std::size_t(((mi * c + ci) * kh + i) * kw + j)] =
                                    p[s.weight_offset + std::size_t(((i * kw + j) * c + ci) * m + mi)];
                std::vector<std::string> ins{cur, w.floats("conv_kernel", {m, c, kh, kw}, k.data(), k.size())};
                if (l.use_bias) ins.push_back(w.floats("conv_bias", {m}, p + s.bias_offset, std::size_t(m)));
                onnx::NodeProto* n = w.node("Conv", ins, &cur);
                GraphWriter::attr(n, "kernel_shape", std::vector<int64_t>{kh, kw});
                GraphWriter::attr(n, "strides", std::vector<int64_t>{l.stride_h, l.stride_w});
                GraphWriter::attr(n, "pads", pads_of(l, in));
                break;
            }
            case LayerKind::MaxPooling2D:
            case LayerKind::AveragePooling2D: {
                const bool max = l.kind == LayerKind::MaxPooling2D;
                onnx::NodeProto* n = w.node(max ? "MaxPool" : "AveragePool", {cur}, &cur);
                GraphWriter::attr(n, "kernel_shape", std::vector<int64_t>{l.kernel_h, l.kernel_w});
                GraphWriter::attr(n, "strides", std::vector<int64_t>{l.stride_h, l.stride_w});
                GraphWriter::attr(n, "pads", pads_of(l, in));
                if (!max) GraphWriter::attr(n, "count_include_pad", int64_t(0));
                break;
            }
            case LayerKind::GlobalAveragePooling2D: {
                w.node("GlobalAveragePool", {cur}, &cur);
                GraphWriter::attr(w.node("Flatten", {cur}, &cur), "axis", int64_t(1));
                break;
            }
            case LayerKind::Flatten: {
                // Back to NHWC first: hopper (like Keras) flattens channels-last.
                GraphWriter::attr(w.node("Transpose", {cur}, &cur), "perm", std::vector<int64_t>{0, 2, 3, 1});
                GraphWriter::attr(w.node("Flatten", {cur}, &cur), "axis", int64_t(1));
                break;
            }
            case LayerKind::Embedding: {
                // The column's block leaves the row and its table row is appended (layer_embedding.cpp):
                // a code slot picks the row with Gather, a one-hot block multiplies the table (MatMul),
                // exactly as hopper computes either.
                const int64_t total = int64_t(in.size()), at = l.column_offset, width = l.column_width;
                auto slice = [&](int64_t from, int64_t to) {
                    std::string part;
                    w.node("Slice",
                           {cur, w.int64s("slice_start", {from}), w.int64s("slice_end", {to}),
                            w.int64s("slice_axis", {1})},
                           &part);
                    return part;
                };
                const std::string table =
                    w.floats("embedding_table", {int64_t(l.vocabulary), int64_t(l.units)}, p + s.weight_offset,
                             std::size_t(l.vocabulary) * std::size_t(l.units));
                std::string vectors = slice(at, at + width);
                if (width == 1) {
                    GraphWriter::attr(w.node("Cast", {vectors}, &vectors), "to", int64_t(onnx::TensorProto::INT64));
                    w.node("Gather", {table, vectors}, &vectors);  // [N, 1, units]
                    GraphWriter::attr(w.node("Flatten", {vectors}, &vectors), "axis", int64_t(1));
                } else {
                    w.node("MatMul", {vectors, table}, &vectors);
                }
                std::vector<std::string> parts;
                if (at > 0) parts.push_back(slice(0, at));
                if (at + width < total) parts.push_back(slice(at + width, total));
                parts.push_back(vectors);
                if (parts.size() == 1) {
                    cur = vectors;
                } else {
                    GraphWriter::attr(w.node("Concat", parts, &cur), "axis", int64_t(1));
                }
                break;
            }
            case LayerKind::BatchNormalization: {
                const std::size_t c = std::size_t(in.channels);
                const std::vector<float> ones(c, 1.0f), zeros(c, 0.0f);
                const float* gamma = l.scale ? p + s.weight_offset : ones.data();
                const float* beta = l.center ? p + s.bias_offset : zeros.data();
                const int64_t ci = int64_t(c);
                onnx::NodeProto* n =
                    w.node("BatchNormalization",
                           {cur, w.floats("bn_scale", {ci}, gamma, c), w.floats("bn_bias", {ci}, beta, c),
                            w.floats("bn_mean", {ci}, p + s.stats_offset, c),
                            w.floats("bn_var", {ci}, p + s.stats_offset + c, c)},
                           &cur);
                // Keras rounds epsilon to float32 where it computes, as ONNX stores it.
                GraphWriter::attr(n, "epsilon", float(l.epsilon));
                GraphWriter::attr(n, "momentum", float(l.momentum));
                break;
            }
        }
        switch (l.activation) {
            case Activation::Linear: break;
            case Activation::Relu: w.node("Relu", {cur}, &cur); break;
            case Activation::Tanh: w.node("Tanh", {cur}, &cur); break;
            case Activation::Sigmoid: w.node("Sigmoid", {cur}, &cur); break;
            case Activation::Softmax: GraphWriter::attr(w.node("Softmax", {cur}, &cur), "axis", int64_t(1)); break;
        }
    }
    // A standardized target: the output in its own units, as Network::predict gives it (a Mul,
    // then an Add, in float32).
    if (!arch.target_scaling.identity()) {
        w.node("Mul", {cur, w.floats("target_scale", {}, &arch.target_scaling.scale, 1)}, &cur);
        w.node("Add", {cur, w.floats("target_offset", {}, &arch.target_scaling.offset, 1)}, &cur);
    }
    // The graph's output by its documented name, whatever node computed it.
    w.node("Identity", {cur}, &cur, output);
    std::string out;
    if (!model.SerializeToString(&out)) fail(ErrorKind::Internal, "ONNX export: the model could not be serialized");
    return out;
}

std::string onnx_output_name(const std::string& recipe_json) {
    const std::set<std::string> columns = recipe_column_names(recipe_json);
    std::string name = "output";
    while (columns.count(name)) name += "_";
    return name;
}

std::vector<std::string> onnx_empty_string_columns(const std::string& recipe_json) {
    std::vector<std::string> out;
    if (recipe_json.empty()) return out;
    const cfg::json doc = cfg::parse_json_text(recipe_json, "feature recipe");
    for (const cfg::json& col : doc.at("columns"))
        if (col.at("kind").get<std::string>() == "categorical" && empty_string_is_value(col))
            out.push_back(col.at("name").get<std::string>());
    return out;
}

}  // namespace hopper
