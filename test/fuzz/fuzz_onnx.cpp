// The ONNX reader: import_onnx on arbitrary bytes (libprotobuf parses them; hopper's importer checks
// every tensor, attribute and node it uses). A refusal must be a hopper::Error; an accepted file must
// give a valid architecture with exactly its parameters, export again, import back to the same
// architecture and parameters, and predict without undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "hopper/network.h"
#include "hopper/onnx.h"
#include "hopper/resources.h"

namespace {

using namespace hopper;
using hopper_fuzz::accepts;
using hopper_fuzz::require;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    OnnxImported im;
    if (!accepts([&] { im = import_onnx(bytes); })) return 0;
    require(im.params.size() == im.arch.num_params(), "an imported model's parameter count is not its architecture's");
    require(accepts([&] { parse_architecture(im.arch.to_json()); }), "an imported architecture does not parse again");

    std::string again;
    require(accepts([&] { again = export_onnx(im.arch, im.params, OnnxExportOptions{}); }),
            "an imported model does not export");
    OnnxImported back;
    require(accepts([&] { back = import_onnx(again); }), "an exported import does not import again");
    require(back.arch.to_json() == im.arch.to_json(), "export and import change the architecture");
    require(back.params.size() == im.params.size() &&
                std::memcmp(back.params.data(), im.params.data(), 4 * im.params.size()) == 0,
            "export and import change the parameters");

    // Predict two rows (bounded: a few parameters can still mean large feature maps).
    const ModelConfig config = resolve_config(im.arch, {}, {});
    if (training_bytes(config, 2) > (std::size_t(64) << 20)) return 0;
    std::vector<float> x(std::size_t(im.arch.input_dim) * 2);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(int(i % 5) - 2) * 0.5f;
    Network net(im.arch);
    MatrixF out;
    net.predict(im.params.data(), ConstMatrixMap(x.data(), im.arch.input_dim, 2), out);
    return 0;
}
