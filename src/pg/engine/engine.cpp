// What is the same on every engine: choosing the engine, and the checks and reads of the working
// tables that both engines' ModelHoppers share.
#include "pg/engine/engine.h"

#include "hopper/error.h"

namespace hopper::pg {

std::unique_ptr<Engine> detect_engine(Spi& spi) {
    if (spi.scalar_bool("SELECT EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus')"))
        return citus_engine();
    return postgres_engine();
}

void check_trained_models(uint64_t came_back, int models) {
    if (came_back != uint64_t(models))
        fail(ErrorKind::Data, "a model did not come back from training",
             std::to_string(models) + " models went into the training statement and " + std::to_string(came_back) +
                 " came back.",
             "A segment of the packed table may have lost all its rows since it was packed; pack it again.");
}

void check_hopped_models(uint64_t moved, int models) {
    if (moved != uint64_t(models))
        fail(ErrorKind::Internal, "the hop moved " + std::to_string(moved) + " of " + std::to_string(models) + " models");
}

std::map<int32_t, std::string> read_model_states(Spi& spi, const TableName& model_output) {
    spi.execute("SELECT mst_key, model_state FROM " + model_output.quoted());
    std::map<int32_t, std::string> out;
    for (uint64_t r = 0; r < spi.rows(); ++r) out[int32_t(spi.integer(r, 0))] = spi.bytes(r, 1);
    return out;
}

}  // namespace hopper::pg
