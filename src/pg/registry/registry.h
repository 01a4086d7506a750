// Checkpoints and the model registry in PostgreSQL (tables in sql/ext/40_registry.sql).
//
// checkpoint.cpp: storing and loading checkpoints, the training-run observer that writes them,
// deletion, garbage collection, listing, and materializing a checkpoint as a model table.
// registry.cpp: models, versions and aliases.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "hopper/registry.h"
#include "pg/common/names.h"
#include "pg/training/run.h"
#include "pg/common/spi.h"

namespace hopper::pg {

// search_path = pg_catalog, pg_temp for the registry's own statements (undone by leave(), by the
// destructor, or by the transaction's abort), so that no object in the caller's search_path can
// stand in for an operator or function the registry uses. Resolve the caller's table names before
// entering.
class SafeSearchPath {
public:
    void enter();
    void leave();
    ~SafeSearchPath();

private:
    int level_ = -1;
};

// Runs f; a serialization failure it raises (REPEATABLE READ or SERIALIZABLE: another session
// changed `what` after this transaction took its snapshot) gets a detail and a retry hint.
template <typename F>
auto explain_serialization_failure(const std::string& what, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const PgError& e) {
        ErrorData* ed = e.edata();
        if (ed->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE && !ed->hint) {
            ed->detail = pstrdup(("Another transaction changed " + what + " after this transaction took its snapshot.").c_str());
            ed->hint = pstrdup("Retry the transaction; under READ COMMITTED hopper waits for the other one instead.");
        }
        throw;
    }
}

// Text form of a uuid argument, and a uuid Datum from text (allocated in the current context).
std::string uuid_arg(FunctionCallInfo fcinfo, int i, const char* name);
Datum uuid_datum(const std::string& text);
std::string sha256_hex(std::string_view bytes);

// What fit and fit_multiple tell the registry about a run beyond the RunContext.
struct CheckpointOptions {
    int checkpoint_frequency = -1;  // < 0: as metrics_compute_frequency; 0: only at the end
    int metrics_frequency = 1;
    std::string searcher_metric;    // empty: the loss
    std::string mst_table_text;     // fit_multiple's model selection table
    std::map<int32_t, int64_t> warm_start_checkpoints;  // mst_key -> checkpoint_id it started from
};

// The registry arguments of fit / fit_multiple: checkpoint_frequency (NULL: as
// metrics_compute_frequency) and searcher_metric (NULL: the loss).
CheckpointOptions checkpoint_options(FunctionCallInfo fcinfo, int frequency_arg, int searcher_arg, int metrics_frequency);
// Warm start from one checkpoint (fit), or from the latest checkpoint of each configuration of a
// run, matched by mst_key (fit_multiple; a configuration the run lacks starts fresh, with a notice).
// Refused together with warm_start (which continues from the model output table).
void warm_start_from_checkpoint(Spi& spi, const std::string& uuid, bool warm_start, ModelSpec& model,
                                CheckpointOptions& options);
void warm_start_from_run(Spi& spi, int64_t run_id, bool warm_start, std::vector<ModelSpec>& models,
                         CheckpointOptions& options);

// The observer that records a training run (hopper.runs, trials, trial_metrics) and writes its
// checkpoints (every checkpoint_frequency iterations and at the last).
std::unique_ptr<RunObserver> make_registry_observer(CheckpointOptions options);

// A COMPLETED checkpoint stored in the database, checked against its size and checksum.
struct LoadedCheckpoint {
    int64_t id = 0;
    std::string uuid;
    std::string state;  // model state bytes
};
LoadedCheckpoint load_checkpoint(Spi& spi, const std::string& uuid);
// Latest COMPLETED checkpoint of every configuration (by mst_key) of a training run.
std::map<int32_t, LoadedCheckpoint> load_run_checkpoints(Spi& spi, int64_t run_id);

// Writes checkpoint `checkpoint_id` as a model table (output and output_summary, as fit does).
// model_name/version describe where it came from (empty/nullopt for a bare checkpoint).
void materialize_checkpoint_table(Spi& spi, int64_t checkpoint_id, const TableName& output,
                                  const std::string& model_name, std::optional<int32_t> version);

// ORDER BY clause (alias e) for a listing sort key; a metric name is bound as $metric_param.
std::string registry_order_clause(const SortKey& key, bool descending, int metric_param);
// Copies the current SPI result into a materialized SRF result (InitMaterializedSRF done).
void registry_put_result_rows(Spi& spi, FunctionCallInfo fcinfo);

}  // namespace hopper::pg
