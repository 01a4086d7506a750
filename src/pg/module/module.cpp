// The extension's module: magic block and settings (GUCs).
#include <climits>

#include "hopper/interrupt.h"
#include "hopper/matrix_products.h"
#include "pg/common/guard.h"
#include "pg/common/settings.h"
#include "pg/module/lock_guard.h"
#include "pg/ps/ps.h"
#include "pg/runtime/progress.h"
#include "pg/runtime/run_area.h"
#include "pg/runtime/run_lock.h"
#include "pg/runtime/shared_buffer_cache.h"

extern "C" {
PG_MODULE_MAGIC;
PGDLLEXPORT void _PG_init(void);
}

namespace hopper::pg {
int setting_parallel_segments = 0;
bool setting_debug_hops = false;
bool setting_overlap_evaluation = true;
bool setting_restoring = false;
int setting_max_state_mb = 1024;
int setting_segment_cache_mb = 2048;
int setting_shuffle_window_mb = 256;
int setting_buffer_cache_mb = 1024;
int setting_read_ahead_min_mb = 16;
int setting_max_memory_mb = 0;
int setting_max_packed_table_mb = 0;
int setting_model_cache_mb = 256;
char* setting_buffer_cache_area = nullptr;
int setting_training_metrics = kTrainingMetricsRunning;
}  // namespace hopper::pg

static const struct config_enum_entry training_metrics_options[] = {
    {"running", hopper::pg::kTrainingMetricsRunning, false},
    {"exact", hopper::pg::kTrainingMetricsExact, false},
    {nullptr, 0, false},
};

// The core's long loops (parsers, packing plans) check for cancel through this. Only when an
// interrupt is pending does it leave the core's frames, as a PgError the guard re-raises.
static void core_interrupt_check() {
    if (InterruptPending) hopper::pg::check_for_interrupts();
}

void _PG_init(void) {
    using namespace hopper::pg;
    hopper::set_interrupt_check(core_interrupt_check);
    run_lock_init();
    lock_guard_init();
    DefineCustomIntVariable(
        "hopper.parallel_segments",
        "Most segments that train at the same time in fit and fit_multiple (0: one per segment).",
        "hopper runs segments in parallel workers; this caps the workers a training statement asks for. "
        "PostgreSQL's max_parallel_workers and max_worker_processes still apply.",
        &setting_parallel_segments, 0, 0, 1024, PGC_USERSET, 0, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable("hopper.debug_hops",
                             "Record where every model was in every hop and how long each statement took.",
                             "fit and fit_multiple write the record to <model_output_table>_hops.", &setting_debug_hops,
                             false, PGC_USERSET, 0, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "hopper.overlap_evaluation", "Evaluate models while the iteration's other models still train.",
        "On plain PostgreSQL the group of processes that trains an iteration's hops evaluates each model due as soon "
        "as its last visit of the iteration is done. Off: the models are evaluated by statements after the "
        "iteration, as with hopper.debug_hops and on Citus. The metrics are the same either way.",
        &setting_overlap_evaluation, true, PGC_USERSET, 0, nullptr, nullptr, nullptr);
    DefineCustomEnumVariable(
        "hopper.training_metrics",
        "Where fit, fit_multiple and fit_data_parallel take the training loss and metrics from.",
        "running: the mean over the minibatches the iteration trained, each measured before its update, as Keras "
        "reports them (free). exact: a second pass over the training table after the iteration, with the updated "
        "weights (costs about a third of an epoch per model). Validation metrics are always exact.",
        &setting_training_metrics, kTrainingMetricsRunning, training_metrics_options, PGC_USERSET, 0, nullptr, nullptr,
        nullptr);
    DefineCustomIntVariable("hopper.max_model_state_mb",
                            "Largest model state (weights and optimizer slots) hopper will create, in megabytes.",
                            "Larger models are refused before training starts.", &setting_max_state_mb, 1024, 1, 1024,
                            PGC_USERSET, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "hopper.segment_cache_mb",
        "Most packed data one segment may hold in memory to train several epochs per visit, in megabytes.",
        "Needed only when fit_params has epochs > 1.", &setting_segment_cache_mb, 2048, 1, INT_MAX / 2, PGC_USERSET,
        GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "hopper.shuffle_window_mb",
        "Most packed data one segment reshuffles at once, in megabytes (fit_params shuffle, the default).",
        "A segment's rows are reshuffled into new minibatches at every pass within windows of consecutive buffers of "
        "this size; a segment smaller than it is reshuffled whole. Rows not in the run's buffer cache are copied.",
        &setting_shuffle_window_mb, 256, 1, INT_MAX / 2, PGC_USERSET, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "hopper.buffer_cache_mb",
        "Most packed data the backend running fit or fit_multiple keeps detoasted for the rest of the run, in megabytes.",
        "Saves fetching the same buffers from TOAST once per model and iteration when the backend trains segments "
        "itself (one segment, or hopper.parallel_segments = 1). Freed when the run ends; 0 turns it off.",
        &setting_buffer_cache_mb, 1024, 0, INT_MAX / 2, PGC_USERSET, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "hopper.read_ahead_min_mb",
        "Least packed data, in megabytes, for which a training run reads its buffers ahead in a background worker "
        "(-1: never).",
        "When fewer segments train at once than the machine has cores (fit; fit_multiple on one segment), a "
        "background worker fetches the run's packed buffers into its buffer cache while the backend fetches them "
        "too, from the other end. Below this size starting the worker costs more than it saves.",
        &setting_read_ahead_min_mb, 16, -1, INT_MAX / 2, PGC_USERSET, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "hopper.max_memory_mb",
        "Most memory one hopper call may plan to use across its backend and parallel workers, in megabytes (0: a "
        "quarter of the machine's physical memory).",
        "Training, evaluation and scoring estimate what they need (weights, gradients, optimizer moments, "
        "activations of a minibatch, buffers) before they allocate, and refuse beyond this with SQLSTATE 53200.",
        &setting_max_memory_mb, 0, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "hopper.max_packed_table_mb",
        "Largest packed table hopper.preprocess may write, in megabytes (0: a quarter of the free space of the "
        "database's file system).",
        "preprocess estimates the size from the rows, features and one-hot classes before it writes anything, and "
        "refuses beyond this with SQLSTATE 53100.",
        &setting_max_packed_table_mb, 0, 0, INT_MAX, PGC_USERSET, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "hopper.model_cache_mb",
        "Most memory one session keeps for the models hopper.predict_class, predict_proba and predict_value loaded, "
        "in megabytes.",
        "Models are kept by checkpoint, so each is read and deserialized once per session; the least recently used "
        "goes first. 0 loads the model once per statement.",
        &setting_model_cache_mb, 256, 0, INT_MAX / 2, PGC_USERSET, GUC_UNIT_MB, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "hopper.restoring", "Restoring a dump: the registry's triggers take model versions as they were dumped.",
        "pg_restore of a database with hopper's registry needs it on (PGOPTIONS='-c hopper.restoring=on'), so that "
        "version numbers and the counters dumped with them are kept instead of assigned again. Only superusers may set it.",
        &setting_restoring, false, PGC_SUSET, 0, nullptr, nullptr, nullptr);
    // Internal: how the parallel workers of a run's statements find the run's shared area (buffer
    // cache, model states). Set by hopper for those statements only (SUSET: a user cannot point a
    // session at another's area).
    DefineCustomStringVariable(run_area_setting_name,
                               "Internal: the running fit's shared area, for its parallel workers.", nullptr,
                               &setting_buffer_cache_area, "", PGC_SUSET,
                               GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE | GUC_DISALLOW_IN_FILE, nullptr, nullptr, nullptr);
    ps_init();                   // parameter tables: their GUCs, and shared memory when preloaded
    progress_init();             // hopper.run_progress: its settings, and shared memory when preloaded
    shared_buffer_cache_init();  // hopper.shared_buffer_cache_mb, and its shared memory when preloaded
    MarkGUCPrefixReserved("hopper");
    // Preloaded: every backend and parallel worker is forked from here with the product kernels
    // ready (a model hop's worker would otherwise spend ~38 ms generating them).
    if (process_shared_preload_libraries_in_progress) hopper::warm_up_matrix_products();
}
