// ONNX export and import of hopper's sequential models (issue 28).
//
// Export writes a model as an ONNX ModelProto of opset 13 (IR version 7): what ONNX Runtime (1.8
// and later) runs and what torch.onnx.export of torch 1.13 writes by default. The graph takes
// hopper's flat row ("input", float [N, input_dim], images as HWC rows) and gives the model's
// outputs ("output", float [N, output_dim]): the input scaling (x / normalizing_const - center) /
// spread is folded in as Mul, Sub and Div nodes before the first layer; images are reshaped to
// NHWC and transposed to ONNX's NCHW, and transposed back to NHWC before a Flatten so that the
// Dense layer after it reads hopper's (Keras') order. Dense is Gemm, Conv2D Conv, the pooling
// layers MaxPool / AveragePool (count_include_pad 0: hopper's "same" windows average their valid
// elements) / GlobalAveragePool, BatchNormalization uses its moving statistics, dropout is the
// identity (nothing is emitted). A model whose target was standardized for training
// (Architecture::target_scaling) ends with a Mul by its scale and an Add of its offset: the graph
// gives the target's own units, as Network::predict does. Class names go into metadata_props ("class_values", a JSON
// array). A model trained through a feature recipe takes its table's raw columns instead, one named input per column:
// numeric, boolean (0/1) and date (days since 1970-01-01) columns float [N, 1] with NaN for NULL (ONNX-ML Imputer, an
// IsNaN missing indicator, Sub/Div scaling as hopper computes it), categorical columns string [N, 1] with "" for NULL
// (ONNX-ML LabelEncoder to the recipe's slot, then OneHotEncoder, or the code as a float), arrays float [N, width];
// then Concat (opset 13 with ai.onnx.ml 2).
//
// Import reads an ONNX file of that vocabulary (torch.onnx.export of a torch.nn.Sequential of
// Linear, Conv2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d(1), Flatten, BatchNorm1d/2d, ReLU, Tanh,
// Sigmoid, Softmax, Dropout, and hopper's own exports, whose Mul and Add of one value after a linear
// output are the target's scaling) as an architecture and its parameters in
// hopper's layout (network.h). A graph whose input is NCHW [N, C, H, W] becomes an image model of
// input shape [H, W, C]: hopper rows are HWC, and the Dense layer after a Flatten of an NCHW tensor
// gets its input weights permuted from CHW to HWC order, so that it computes what the original did.
// An NHWC input [N, H, W, C] that the graph first transposes to NCHW (Keras models through tf2onnx)
// is hopper's own layout: nothing is permuted.
// Errors: Data for a file that is not a well-formed ONNX model (corrupt, truncated, inconsistent
// tensors); FeatureNotSupported naming the operator and node, or the construct, hopper cannot
// represent; Limit for models beyond hopper's architecture limits (the architecture is validated
// as parse_architecture validates it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hopper/config.h"
#include "hopper/packing.h"

namespace hopper {

constexpr int kOnnxOpset = 13;
constexpr int kOnnxIrVersion = 7;
// ONNX files larger than this are refused before parsing (protobuf's own limit is 2 GB; a bytea
// holds at most 1 GB).
constexpr std::size_t kMaxOnnxBytes = std::size_t(1) << 30;

struct OnnxExportOptions {
    FeatureScaling scaling;                 // folded into the graph (validated for the input width)
    std::vector<std::string> class_values;  // metadata "class_values" when not empty
    std::string graph_name = "hopper";
    std::string producer_version;                               // hopper's version
    std::vector<std::pair<std::string, std::string>> metadata;  // further metadata_props
    // A feature recipe (recipe.h, its JSON): the graph then takes the raw columns as named inputs
    // and encodes them as the recipe does (see export_onnx).
    std::string recipe_json;
    // Categorical columns read from a char(n) column: n. The recipe's categories are trimmed, as
    // ::text gives them, but drivers and to_jsonb hand char(n) values blank-padded to n characters:
    // the graph maps each category padded so as it maps the category (both forms score alike).
    std::map<std::string, int> char_widths;
};

// The ONNX ModelProto bytes of a model of `arch` with parameters `params` (arch.num_params() floats).
std::string export_onnx(const Architecture& arch, const std::vector<float>& params, const OnnxExportOptions& options);
// The categorical columns of a feature recipe where the empty string is a value of its own: string
// tensors have no NULL, so the exported graph takes "" for NULL, and there it cannot tell them apart.
std::vector<std::string> onnx_empty_string_columns(const std::string& recipe_json);

// The name of the graph's output: "output", with underscores added while a feature column of the
// recipe has that name (graph inputs are named by the columns, and ONNX names are unique).
std::string onnx_output_name(const std::string& recipe_json);

struct OnnxImported {
    Architecture arch;          // validated
    std::vector<float> params;  // arch.num_params() floats in hopper's layout
    std::string producer;       // producer_name and producer_version of the file, for descriptions
};

OnnxImported import_onnx(std::string_view bytes);

}  // namespace hopper
