// Looking into model states from SQL: hopper.model_state_info and hopper.model_weights.
#include <string>

#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/training/preprocess.h"

using namespace hopper;
using namespace hopper::pg;

// model_state_info(model_state bytea) -> jsonb
HOPPER_FUNCTION(model_state_info) {
    std::string bytes = bytea_to_string(PG_GETARG_DATUM(0));
    StateSummary s = inspect_state(bytes);
    const TrainCounters& c = s.counters;
    std::string json =
        "{\"format_version\":" + std::to_string(s.format_version) + ",\"bytes\":" + std::to_string(s.bytes) +
        ",\"num_params\":" + std::to_string(s.num_params) + ",\"optimizer_slots\":" + std::to_string(s.num_slots) +
        ",\"layers\":\"" + s.config.arch.shape_string() + "\",\"steps\":" + std::to_string(c.steps) +
        ",\"samples_seen\":" + std::to_string(c.samples_seen) + ",\"visits\":" + std::to_string(c.visits) +
        ",\"iterations\":" + std::to_string(c.iterations) + ",\"diverged\":" + (c.diverged ? "true" : "false") +
        ",\"checksum\":" + std::to_string(crc32_of(std::string_view(bytes).substr(0, bytes.size() - 4))) +
        ",\"config\":" + s.config.to_json() + "}";
    PG_RETURN_DATUM(string_to_jsonb(json));
}

// model_weights(model_state bytea) -> real[]: all parameters, layer by layer (W column-major, b).
HOPPER_FUNCTION(model_weights) {
    FrozenModel m = load_frozen_model(bytea_to_string(PG_GETARG_DATUM(0)));
    PG_RETURN_DATUM(make_float4_array(m.params.data(), {int(m.params.size())}));
}

// version() -> text
HOPPER_FUNCTION(version) { PG_RETURN_DATUM(string_to_text(HOPPER_VERSION)); }
