-- hopper 0.1.0 -> 0.2.0 (ALTER EXTENSION hopper UPDATE). Users' rows in hopper's tables are kept;
-- test/scripts/upgrade.sh installs 0.1.0, fills every table through the API, runs this and checks
-- that every row, model state and registered version is intact and usable.
\echo Use "ALTER EXTENSION hopper UPDATE" to load this file. \quit

-- ---- runs: stored in run_records, read through a view whose state is truthful ----------------------
ALTER TABLE hopper.runs RENAME TO run_records;
-- Its constraints, key index and identity sequence take the names a fresh install gives them.
ALTER TABLE hopper.run_records RENAME CONSTRAINT runs_data_check TO run_records_data_check;
ALTER TABLE hopper.run_records RENAME CONSTRAINT runs_method_check TO run_records_method_check;
ALTER TABLE hopper.run_records RENAME CONSTRAINT runs_state_check TO run_records_state_check;
ALTER INDEX hopper.runs_pkey RENAME TO run_records_pkey;
ALTER SEQUENCE hopper.runs_run_id_seq RENAME TO run_records_run_id_seq;

#include "objects/run_is_live.sql"

#include "objects/runs.sql"

#include "objects/mark_interrupted_runs.sql"

-- ---- tables hopper created ----------------------------------------------------------------------
#include "objects/output_tables.sql"

-- Rows are added for oneself and never changed; removing one only makes hopper forget a table.

-- ---- what ties a row to its owner cannot be changed ------------------------------------------------
#include "objects/keep_columns.sql"

-- ---- checkpoints: a completed one keeps its payload, a registered one its metadata -----------------
#include "objects/checkpoints_before_update.sql"

-- ---- model versions: a restore (hopper.restoring) keeps the dumped numbers -------------------------
#include "objects/model_versions_before_insert.sql"
-- ... and a new version's checkpoint is locked by a trigger of its own, as hopper's owner, so that
-- the checkpoints' UPDATE policy (which row locks apply) can be the owner's alone (below).
#include "objects/model_versions_lock_checkpoint.sql"

-- ---- whether a checkpoint is registered is read from hopper.model_versions -------------------------
-- 0.1.0 kept a per-checkpoint counter guarded by trigger depth, which a user's own trigger passes:
-- any role could rewrite any checkpoint's count (to 0, so that its owner's gc deleted a registered
-- checkpoint, or huge, to make it undeletable), and the forged count survived dump and restore.
DROP TRIGGER model_versions_after_delete ON hopper.model_versions;
DROP FUNCTION hopper.model_versions_after_delete();
#include "objects/checkpoints_expanded.sql"
-- A table's policies are re-created whole from their one source (0.1.0's are dropped first).
DROP POLICY checkpoint_chunks_read ON hopper.checkpoint_chunks;
DROP POLICY checkpoint_chunks_insert ON hopper.checkpoint_chunks;
DROP POLICY checkpoint_chunks_delete ON hopper.checkpoint_chunks;
#include "objects/checkpoint_chunks_policies.sql"
ALTER TABLE hopper.checkpoints DROP CONSTRAINT checkpoints_registered_check, DROP COLUMN version_count;
-- Another role's trial naming a checkpoint as its warm-start source no longer pins it in gc.
#include "objects/gc_checkpoints.sql"

-- ---- row-level security: a new row points only at rows of its own roles --------------------------
DROP POLICY trials_read ON hopper.trials;
DROP POLICY trials_owner ON hopper.trials;
#include "objects/trials_policies.sql"

DROP POLICY checkpoints_read ON hopper.checkpoints;
DROP POLICY checkpoints_insert ON hopper.checkpoints;
DROP POLICY checkpoints_update ON hopper.checkpoints;
DROP POLICY checkpoints_delete ON hopper.checkpoints;
#include "objects/checkpoints_policies.sql"

DROP POLICY checkpoint_training_read ON hopper.checkpoint_training;
DROP POLICY checkpoint_training_owner ON hopper.checkpoint_training;
#include "objects/checkpoint_training_policies.sql"

DROP POLICY model_versions_read ON hopper.model_versions;
DROP POLICY model_versions_owner ON hopper.model_versions;
#include "objects/model_versions_policies.sql"

DROP POLICY model_aliases_read ON hopper.model_aliases;
DROP POLICY model_aliases_owner ON hopper.model_aliases;
#include "objects/model_aliases_policies.sql"

-- ---- SQL name = C symbol: functions whose C symbol was renamed (the old symbols stay in the
-- library for databases not yet updated, src/pg/common/legacy_symbols.cpp) ----------------------------
#include "objects/vector_sum.sql"
#include "objects/model_average.sql"
#include "objects/metrics.sql"
#include "objects/ps_create.sql"

-- ---- model outputs written by 0.1.0 ----------------------------------------------------------------
-- 0.1.0 did not mark the tables it created, and a warm start now replaces only marked tables. The
-- model outputs of completed 0.1.0 runs are marked here, as their owners' rows -- but only what can
-- be proven hopper's: a table exactly as hopper's library created it (kind, every column in order
-- with its type, NOT NULL, storage, collation and default, every constraint, index and inheritance;
-- no dropped column) and with no comment, as the library left it. Column names prove nothing: a
-- user's table that shares them, or differs by one type, one constraint, the order or a comment of
-- its own, stays the user's, and a warm start into it is refused rather than dropping it. The
-- output and its _summary must both be hopper's; its _info and _hops are marked when they are.
-- The definitions are those of 0.1.0's library (write_run_outputs in its run.cpp) and, for the
-- _summary, also that of the 0.2.0 library running on a database not yet updated (which adds
-- training_metrics and, without hopper.output_tables, marks nothing either).
DO $$
DECLARE
    r record;
    rel oid;
    nsp name;
    base name;
    mark uuid;
    t record;
    adopted text[];
BEGIN
    FOR r IN SELECT DISTINCT ON (model_output_table) model_output_table, run_id
             FROM hopper.run_records WHERE state = 'COMPLETED'
             ORDER BY model_output_table, run_id DESC LOOP
        rel := pg_catalog.to_regclass(r.model_output_table);
        CONTINUE WHEN rel IS NULL;
        SELECT c.relname, n.nspname INTO base, nsp
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = rel;
        -- The output's tables that are exactly hopper's, with the kind each was made as.
        SELECT pg_catalog.array_agg(x.kind ORDER BY x.i) INTO adopted
        FROM (VALUES (1, '', 'model'), (2, '_summary', 'model_summary'), (3, '_info', 'model_info'),
                     (4, '_hops', 'model_hops')) AS x(i, suffix, kind)
        JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(pg_catalog.format('%I.%I', nsp, base || x.suffix))
        WHERE pg_catalog.obj_description(c.oid, 'pg_class') IS NULL
          AND pg_catalog.concat_ws(' | ', c.relkind::text,
                (SELECT pg_catalog.string_agg(a.attname || ' ' || coalesce(pg_catalog.format_type(a.atttypid, a.atttypmod), '-')
                                              || CASE WHEN a.attnotnull THEN ' not null' ELSE '' END
                                              || CASE WHEN a.attstorage IS DISTINCT FROM ty.typstorage
                                                      THEN ' storage ' || a.attstorage::text ELSE '' END
                                              || CASE WHEN a.attcollation IS DISTINCT FROM ty.typcollation
                                                      THEN ' collation' ELSE '' END
                                              || CASE WHEN a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> ''
                                                      THEN ' default' ELSE '' END,
                                              ', ' ORDER BY a.attnum)
                 FROM pg_catalog.pg_attribute a LEFT JOIN pg_catalog.pg_type ty ON ty.oid = a.atttypid
                 WHERE a.attrelid = c.oid AND a.attnum > 0),
                (SELECT coalesce(pg_catalog.string_agg(pg_catalog.pg_get_constraintdef(k.oid), ', ' ORDER BY k.conname),
                                 'no constraints')
                 FROM pg_catalog.pg_constraint k WHERE k.conrelid = c.oid),
                (SELECT pg_catalog.count(*) || ' indexes' FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid),
                (SELECT pg_catalog.count(*) || ' inherited' FROM pg_catalog.pg_inherits h
                 WHERE c.oid IN (h.inhrelid, h.inhparent)))
              = ANY (CASE x.kind
                  WHEN 'model' THEN ARRAY[
                    'r | mst_key integer not null, model_id integer,'
                    ' model_state bytea not null storage e, model_arch jsonb not null,'
                    ' compile_params text not null, fit_params text not null,'
                    ' model_config jsonb not null | PRIMARY KEY (mst_key) | 1 indexes | 0 inherited']
                  -- 0.1.0's library, then 0.2.0's on a database not yet updated
                  WHEN 'model_summary' THEN ARRAY[
                    'r | source_table text, validation_table text, model_output_table text,'
                    ' model_selection_table text, model_arch_table text, method text,'
                    ' num_iterations integer, metrics_compute_frequency integer, warm_start boolean,'
                    ' name text, description text, num_models integer, num_segments integer,'
                    ' dist_keys integer[], hops_per_iteration integer, dependent_varname text,'
                    ' independent_varname text, dependent_vartype text, response_type text,'
                    ' class_values text[], normalizing_const double precision, scale text,'
                    ' feature_center real[], feature_spread real[], num_rows bigint,'
                    ' metrics_iters integer[], training_seconds double precision,'
                    ' hop_seconds double precision, evaluation_seconds double precision,'
                    ' start_training_time timestamp with time zone,'
                    ' end_training_time timestamp with time zone,'
                    ' hopper_version text | no constraints | 0 indexes | 0 inherited',
                    'r | source_table text, validation_table text, model_output_table text,'
                    ' model_selection_table text, model_arch_table text, method text,'
                    ' num_iterations integer, metrics_compute_frequency integer, training_metrics text,'
                    ' warm_start boolean, name text, description text, num_models integer,'
                    ' num_segments integer, dist_keys integer[], hops_per_iteration integer,'
                    ' dependent_varname text, independent_varname text, dependent_vartype text,'
                    ' response_type text, class_values text[], normalizing_const double precision,'
                    ' scale text, feature_center real[], feature_spread real[], num_rows bigint,'
                    ' metrics_iters integer[], training_seconds double precision,'
                    ' hop_seconds double precision, evaluation_seconds double precision,'
                    ' start_training_time timestamp with time zone,'
                    ' end_training_time timestamp with time zone,'
                    ' hopper_version text | no constraints | 0 indexes | 0 inherited',
                    -- with the feature recipe of a model trained from a table's own columns (issue 27)
                    'r | source_table text, validation_table text, model_output_table text,'
                    ' model_selection_table text, model_arch_table text, method text,'
                    ' num_iterations integer, metrics_compute_frequency integer, training_metrics text,'
                    ' warm_start boolean, name text, description text, num_models integer,'
                    ' num_segments integer, dist_keys integer[], hops_per_iteration integer,'
                    ' dependent_varname text, independent_varname text, dependent_vartype text,'
                    ' response_type text, class_values text[], normalizing_const double precision,'
                    ' scale text, feature_center real[], feature_spread real[], num_rows bigint,'
                    ' metrics_iters integer[], training_seconds double precision,'
                    ' hop_seconds double precision, evaluation_seconds double precision,'
                    ' start_training_time timestamp with time zone,'
                    ' end_training_time timestamp with time zone,'
                    ' hopper_version text, feature_recipe jsonb | no constraints | 0 indexes | 0 inherited']
                  WHEN 'model_info' THEN ARRAY[
                    'r | mst_key integer not null, model_id integer, compile_params text,'
                    ' fit_params text, model_type text, model_size double precision, num_params bigint,'
                    ' metrics_elapsed_time double precision[], metrics_type text[], loss_type text,'
                    ' training_metrics_final double precision, training_loss_final double precision,'
                    ' training_metrics double precision[], training_loss double precision[],'
                    ' validation_metrics_final double precision, validation_loss_final double precision,'
                    ' validation_metrics double precision[], validation_loss double precision[],'
                    ' metrics_iters integer[], training_metrics_all jsonb, validation_metrics_all jsonb,'
                    ' status text not null, steps bigint,'
                    ' samples_seen bigint | PRIMARY KEY (mst_key) | 1 indexes | 0 inherited']
                  ELSE ARRAY[
                    'r | iteration integer, hop integer, statement text, mst_key integer,'
                    ' dist_key integer,'
                    ' seconds double precision | no constraints | 0 indexes | 0 inherited'] END);
        CONTINUE WHEN adopted IS NULL OR adopted[1] <> 'model' OR NOT 'model_summary' = ANY (adopted);
        mark := pg_catalog.gen_random_uuid();
        FOR t IN SELECT x.kind, base || x.suffix AS name,
                        CASE x.kind WHEN 'model' THEN 'hopper model output' ELSE 'hopper ' || x.kind END AS what
                 FROM (VALUES ('', 'model'), ('_summary', 'model_summary'), ('_info', 'model_info'),
                              ('_hops', 'model_hops')) AS x(suffix, kind)
                 WHERE x.kind = ANY (adopted) LOOP
            INSERT INTO hopper.output_tables (token, kind, schema_name, table_name, run_id, owner)
            SELECT mark, t.kind, nsp, t.name, r.run_id, pg_catalog.pg_get_userbyid(c.relowner)
            FROM pg_catalog.pg_class c WHERE c.oid = pg_catalog.format('%I.%I', nsp, t.name)::pg_catalog.regclass;
            EXECUTE pg_catalog.format('COMMENT ON TABLE %I.%I IS %L', nsp, t.name,
                t.what || ' of training run ' || r.run_id || ' (hopper replaces it only while this mark stays) [hopper:' || mark || ']');
        END LOOP;
    END LOOP;
END
$$;

-- ==== objects new in 0.2.0, written by hand (kept as they are by the generator) ====

-- ---- evaluation by segment: exact sums that merge across segments (issue 15) ----------------------
#include "objects/evaluate_models.sql"

-- No serial functions, on purpose: its partial states never cross processes, so PostgreSQL runs each
-- segment (GROUP BY dist_key) as one whole aggregate in one process, and hopper adds the segments'
-- exact sums up (a parallel scan shared a segment's few heap pages between processes unevenly).

-- Metrics rows are objects (the shared view hopper.learning_curves expands them). One that is not,
-- which only a hand-written INSERT could make, is kept, wrapped as {"malformed": <it>}.
UPDATE hopper.trial_metrics SET training_metrics = pg_catalog.jsonb_build_object('malformed', training_metrics)
WHERE pg_catalog.jsonb_typeof(training_metrics) <> 'object';
UPDATE hopper.trial_metrics SET validation_metrics = pg_catalog.jsonb_build_object('malformed', validation_metrics)
WHERE pg_catalog.jsonb_typeof(validation_metrics) <> 'object';
ALTER TABLE hopper.trial_metrics ADD CONSTRAINT trial_metrics_training_metrics_check
    CHECK (jsonb_typeof(training_metrics) = 'object');
ALTER TABLE hopper.trial_metrics ADD CONSTRAINT trial_metrics_validation_metrics_check
    CHECK (jsonb_typeof(validation_metrics) = 'object');

-- ---- JSON numbers in shared views ---------------------------------------------------------------
#include "objects/json_float8.sql"

#include "objects/json_float4.sql"

#include "objects/model_versions_expanded.sql"

#include "objects/learning_curves.sql"

#include "objects/learning_curves_svg.sql"

#include "objects/sparkline.sql"

#include "objects/tensorboard_scalars.sql"

-- ---- adaptive model selection (issue 14): hopper.fit_automl and its records ----------------------
ALTER TABLE hopper.run_records DROP CONSTRAINT run_records_method_check;
ALTER TABLE hopper.run_records ADD CONSTRAINT run_records_method_check
    CHECK (method IN ('fit', 'fit_multiple', 'fit_data_parallel', 'fit_automl'));
COMMENT ON TABLE hopper.run_records IS
'storage of hopper.runs: one row per call of hopper.fit, fit_multiple or fit_data_parallel, or per adaptive search (fit_automl); read hopper.runs, whose state is truthful when read';
ALTER TABLE hopper.trials DROP CONSTRAINT trials_status_check;
ALTER TABLE hopper.trials ADD CONSTRAINT trials_status_check
    CHECK (status IN ('pending', 'training', 'stopped', 'completed', 'diverged'));

-- Adaptive model selection: hopper.fit_automl runs successive halving or Hyperband by model hopping,
-- and every decision it takes is a row here. The run itself is a row of hopper.runs (method
-- fit_automl), each configuration a row of hopper.trials (status pending, training, stopped,
-- completed or diverged), its learning curve in hopper.trial_metrics and its state at the end of
-- every rung it trained in a checkpoint (hopper.checkpoints_expanded). These tables add the plan
-- (brackets and rungs with their budgets) and the outcome of each trial at each rung (its searcher
-- value, rank and whether it survived). Rows belong to the owner of their run, as the registry's do.

#include "objects/searches.sql"

#include "objects/search_rungs.sql"

#include "objects/trial_rungs.sql"

-- Everyone reads; rows are written by the owner of their run (a trial's rows by the owner of its
-- task), and may point only at that run's trials and checkpoints.
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.searches, hopper.search_rungs, hopper.trial_rungs TO PUBLIC;

#include "objects/search_brackets.sql"

#include "objects/search_trials.sql"

GRANT SELECT ON hopper.search_brackets, hopper.search_trials TO PUBLIC;

#include "objects/fit_automl.sql"

#include "objects/run_progress_segments.sql"

#include "objects/run_progress.sql"

-- Parameter tables: SparseSSP, tables split over servers (ps_create_part), late_adds, part and
-- range_map in hopper.ps_tables (issue 19).
#include "objects/ps_create_part.sql"
DROP VIEW hopper.ps_tables;
DROP FUNCTION hopper.ps_tables_internal();
#include "objects/ps_tables_internal.sql"

#include "objects/ps_tables.sql"
-- The views docs/parameter_server.md tells every user to query (0.1.0 granted them to nobody).
GRANT SELECT ON hopper.ps_workers TO PUBLIC;
#include "objects/ps_get.sql"
#include "objects/ps_add.sql"

-- Scoring one row by model name, with per-session caches the registry's triggers invalidate (issue 28).
#include "objects/registry_cache_invalidate.sql"
#include "objects/predict_class.sql"
#include "objects/predict_proba.sql"
#include "objects/predict_value.sql"

-- The history of every alias, with the triggers that write it (issue 28).
#include "objects/model_alias_history.sql"
#include "objects/model_alias_history_policies.sql"
#include "objects/model_aliases_history.sql"
#include "objects/model_versions_alias_history.sql"

-- Tables as they are (issue 27): preprocess takes exclude_columns and per-column options, and
-- encodes a table's own columns through a feature recipe that predict applies to raw rows.
DROP FUNCTION hopper.preprocess(text, text, text, text, integer, integer, double precision, text, bigint, text, text);
#include "objects/preprocess.sql"
-- Buffers filled as Apache MADlib fills them (buffer_fill => 'full', hopper_madlib's preprocessors).
DROP FUNCTION hopper.preprocess_validation(text, text, text, text, text, integer, integer);
#include "objects/preprocess_validation.sql"
-- Buffers as the bytes MADlib packs them in (hopper_madlib's packed tables, issue 30).
#include "objects/float32_bytes.sql"
#include "objects/float32_array.sql"
#include "objects/int16_bytes.sql"
#include "objects/int16_array.sql"
-- Parameters as hopper compares them (hopper_madlib drops repetitions, as MADlib does).
#include "objects/canonical_compile_params.sql"
#include "objects/canonical_fit_params.sql"
#include "objects/recipe_features.sql"
#include "objects/category_text.sql"
-- evaluate also takes a table's raw rows for such a model (it packs them into a temporary table: VOLATILE).
#include "objects/evaluate.sql"

-- load_model_arch: model_weights may be Keras' flat weights (issue 30); its comment says so.
#include "objects/load_model_arch.sql"
-- fit: compile_params, fit_params and num_iterations have defaults (the shortest call); fit_multiple's
-- num_iterations too.
#include "objects/fit.sql"
#include "objects/fit_data_parallel.sql"
#include "objects/fit_multiple.sql"

-- ONNX export and import (issue 28).
#include "objects/export_onnx.sql"
#include "objects/import_onnx.sql"

-- Reading ahead (issue 29): buffer_cache_stats also says what a run's read-ahead worker was given
-- and kept, and what it found in the server's cache of buffers kept between calls, which has
-- functions of its own.
DROP FUNCTION hopper.buffer_cache_stats();
#include "objects/buffer_cache_stats.sql"
#include "objects/shared_buffer_cache_stats.sql"
#include "objects/shared_buffer_cache_reset.sql"
#include "objects/identity_columns_privileges.sql"
