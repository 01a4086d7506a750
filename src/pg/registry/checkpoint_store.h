// Checkpoints in the database (tables in sql/ext/40_registry.sql): finding them, checking who may
// change them, storing a payload in chunks with its size and sha256 (and checking both, and a model
// state's own CRC, when it is loaded), deleting, and writing one out as a model table. Used by the
// registry's SQL functions, the training-run observer and the parameter server's save/restore.
//
// Every statement here runs under SafeSearchPath (search_path pg_catalog, pg_temp) and names
// hopper's tables with their schema.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hopper/registry.h"
#include "pg/common/datum.h"
#include "pg/common/names.h"
#include "pg/common/spi.h"
#include "pg/runtime/scoped_settings.h"

namespace hopper::pg {

std::string sha256_hex(std::string_view bytes);  // "sha256:<hex>"

struct CheckpointRow {
    int64_t id = 0;
    std::string uuid, state, storage, uri, format, checksum, owner;
    std::optional<int64_t> size;
    int64_t version_count = 0;  // model versions using it, counted in hopper.model_versions
    bool may_modify = false;
};
// The columns read_checkpoint_row reads (alias c), in its order.
extern const char* const kCheckpointColumns;
CheckpointRow read_checkpoint_row(Spi& spi, uint64_t row, int first_column = 0);
CheckpointRow find_checkpoint(Spi& spi, const std::string& uuid);
CheckpointRow find_checkpoint_by_id(Spi& spi, int64_t id);
void require_may_modify(const CheckpointRow& c);

// The payload of a COMPLETED checkpoint stored in the database, checked.
std::string read_payload(Spi& spi, const CheckpointRow& c);

struct Stored {
    int64_t id = 0;
    std::string uuid;
};
// Writes a payload as a COMPLETED checkpoint: ACTIVE while its chunks go in, then COMPLETED.
Stored store_checkpoint(Spi& spi, std::optional<int64_t> task_id, std::string_view payload,
                        std::optional<int64_t> steps, const std::string& metadata, const std::string& resources,
                        const std::string& format = kModelStateFormat);

// Checkpoints -> DELETED (in the database) or DELETING (external), payload removed; returns the
// ids that changed.
std::vector<int64_t> delete_checkpoint_ids(Spi& spi, const std::vector<int64_t>& ids);
// 55006 naming the model versions that use the checkpoint.
[[noreturn]] void refuse_registered(Spi& spi, const CheckpointRow& c);

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

// Runs f; a serialization failure it raises (REPEATABLE READ or SERIALIZABLE: another session
// changed `what` after this transaction took its snapshot) gets a detail and a retry hint.
template <typename F>
auto explain_serialization_failure(const std::string& what, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const PgError& e) {
        ErrorData* ed = e.edata();
        if (ed->sqlerrcode == ERRCODE_T_R_SERIALIZATION_FAILURE && !ed->hint) {
            ed->detail =
                pstrdup(("Another transaction changed " + what + " after this transaction took its snapshot.").c_str());
            ed->hint = pstrdup("Retry the transaction; under READ COMMITTED hopper waits for the other one instead.");
        }
        throw;
    }
}

}  // namespace hopper::pg
