-- Checkpoints and the model registry: plain tables and views, queried with plain SQL.
--
-- Generic checkpoints (any task can write one) live in hopper.checkpoints, their payload in
-- hopper.checkpoint_chunks (so SELECT * FROM hopper.checkpoints never reads model weights). What a
-- training run knows about its checkpoints (run, configuration, metrics, searcher metric) lives in
-- hopper.runs, hopper.trials, hopper.trial_metrics and hopper.checkpoint_training, and
-- hopper.checkpoints_expanded joins it all. Models and their numbered versions point at
-- checkpoints with real foreign keys.
--
-- Invariants are kept by the database itself, so that plain INSERT/UPDATE/DELETE cannot break them:
--  * version numbers come from a per-model counter (models.next_version) that a trigger takes and
--    advances while holding the model's row lock; it never goes down, so numbers are never reused;
--  * whether a checkpoint is registered is read from hopper.model_versions itself, never from a
--    counter a user could write (a user's trigger runs hopper's at depth 2, so trigger depth proves
--    nothing); registering rewrites the checkpoint's row, and a deletion takes that row's lock before
--    it looks, so the two serialize; a checkpoint with versions can be neither deleted (trigger) nor
--    have its payload removed (row-level security on the chunks);
--  * rows record their owner; row-level security lets everyone read and only the owner (or a member
--    of the owner role) change or row-lock them. Every function is SECURITY INVOKER but one trigger
--    function no role may call or attach, which locks a new model version's checkpoint (another
--    role's, too) as hopper's owner (model_versions_lock_checkpoint).
-- Trigger functions run with search_path pg_catalog, pg_temp and schema-qualify every table.

#include "objects/may_modify.sql"

-- ---- tasks: whatever writes checkpoints --------------------------------------------------------
CREATE TABLE hopper.tasks (
    task_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_type text NOT NULL CHECK (task_type ~ '^[A-Z][A-Z0-9_]{0,62}$'),
    state text NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'COMPLETED', 'ERROR', 'CANCELED')),
    description text,
    metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    owner name NOT NULL DEFAULT CURRENT_USER,
    start_time timestamptz NOT NULL DEFAULT now(),
    end_time timestamptz
);
COMMENT ON TABLE hopper.tasks IS
'what wrote checkpoints: one TRAINING task per model configuration of a training run, or any other kind (IMPORT, ...) created with hopper.create_task';

-- ---- training runs and their configurations ------------------------------------------------------
-- Stored in hopper.run_records; read through the view hopper.runs, whose state is truthful when read.
CREATE TABLE hopper.run_records (
    run_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    method text NOT NULL CHECK (method IN ('fit', 'fit_multiple', 'fit_data_parallel', 'fit_automl')),
    name text,
    description text,
    source_table text NOT NULL,
    validation_table text,
    model_output_table text NOT NULL,
    model_selection_table text,
    num_iterations integer NOT NULL,
    metrics_compute_frequency integer NOT NULL,
    checkpoint_frequency integer NOT NULL,
    searcher_metric text NOT NULL,
    smaller_is_better boolean NOT NULL,
    -- How the training data was packed (what predict needs to score raw rows): response_type,
    -- class_values, dependent_varname, dependent_vartype, independent_varname, normalizing_const,
    -- scale, feature_center, feature_spread, num_rows.
    data jsonb NOT NULL CHECK (jsonb_typeof(data) = 'object'),
    -- INTERRUPTED: it stopped (error, cancel, crash) before it completed; its completed checkpoints
    -- are kept, and warm_start_run resumes it. An ACTIVE row whose run is no longer alive (see
    -- hopper.run_is_live) reads as INTERRUPTED through hopper.runs.
    state text NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'COMPLETED', 'ERROR', 'CANCELED', 'INTERRUPTED')),
    owner name NOT NULL DEFAULT CURRENT_USER,
    start_time timestamptz NOT NULL DEFAULT now(),
    end_time timestamptz,
    -- The session running it, to tell a live ACTIVE run from one whose session is gone.
    backend_pid integer,
    backend_start timestamptz
);
COMMENT ON TABLE hopper.run_records IS
'storage of hopper.runs: one row per call of hopper.fit, fit_multiple or fit_data_parallel, or per adaptive search (fit_automl); read hopper.runs, whose state is truthful when read';
#include "objects/run_is_live.sql"
#include "objects/runs.sql"

CREATE TABLE hopper.checkpoints (
    checkpoint_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uuid uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
    task_id bigint REFERENCES hopper.tasks,
    report_time timestamptz NOT NULL DEFAULT now(),
    state text NOT NULL DEFAULT 'ACTIVE'
        CHECK (state IN ('ACTIVE', 'COMPLETED', 'ERROR', 'DELETING', 'DELETED', 'PARTIALLY_DELETED')),
    steps_completed bigint CHECK (steps_completed >= 0),
    format text NOT NULL CHECK (format <> ''),
    storage text NOT NULL CHECK (storage IN ('database', 'external')),
    external_uri text,
    size_bytes bigint CHECK (size_bytes >= 0),
    checksum text,
    resources jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(resources) = 'object'),
    metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    owner name NOT NULL DEFAULT CURRENT_USER,
    CONSTRAINT checkpoints_external_uri_check CHECK ((storage = 'external') = (external_uri IS NOT NULL)),
    UNIQUE (checkpoint_id, task_id)
);
COMMENT ON TABLE hopper.checkpoints IS
'generic checkpoints: a model state stored in the database (hopper.checkpoint_chunks) or an external reference, with the task that wrote it, state, steps, size, checksum, resources and metadata';
-- "Latest checkpoint of a configuration" is a backward scan of this index.
CREATE INDEX checkpoints_task_steps_idx ON hopper.checkpoints (task_id, steps_completed, checkpoint_id);
CREATE INDEX checkpoints_report_time_idx ON hopper.checkpoints (report_time);

CREATE TABLE hopper.checkpoint_chunks (
    checkpoint_id bigint NOT NULL REFERENCES hopper.checkpoints ON DELETE CASCADE,
    chunk_no integer NOT NULL CHECK (chunk_no >= 0),
    data bytea NOT NULL,
    PRIMARY KEY (checkpoint_id, chunk_no)
);
-- Model states are float data: compressing them costs time and saves nothing.
ALTER TABLE hopper.checkpoint_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
COMMENT ON TABLE hopper.checkpoint_chunks IS
'payload of the checkpoints stored in the database, in chunks of at most 1 MB; read it with hopper.checkpoint_state';

CREATE TABLE hopper.trials (
    trial_id bigint PRIMARY KEY REFERENCES hopper.tasks (task_id),
    run_id bigint NOT NULL REFERENCES hopper.run_records,
    mst_key integer NOT NULL,
    model_id integer,
    model_arch jsonb NOT NULL,
    compile_params text NOT NULL,
    fit_params text NOT NULL,
    model_config jsonb NOT NULL,
    hparams jsonb NOT NULL,
    warm_start_checkpoint_id bigint REFERENCES hopper.checkpoints,
    -- pending (an adaptive search has not started its bracket yet), training, stopped (an adaptive
    -- search stopped it early: hopper.search_trials), completed, diverged.
    status text NOT NULL DEFAULT 'training' CHECK (status IN ('pending', 'training', 'stopped', 'completed', 'diverged')),
    UNIQUE (run_id, mst_key)
);
COMMENT ON TABLE hopper.trials IS
'one row per model configuration (mst_key) of a training run; trial_id is the task that writes its checkpoints';
CREATE INDEX trials_warm_start_idx ON hopper.trials (warm_start_checkpoint_id) WHERE warm_start_checkpoint_id IS NOT NULL;

CREATE TABLE hopper.trial_metrics (
    trial_id bigint NOT NULL REFERENCES hopper.trials,
    iteration integer NOT NULL,
    steps_completed bigint NOT NULL,
    -- Objects of metric name to value: the shared view hopper.learning_curves expands them.
    training_metrics jsonb NOT NULL CHECK (jsonb_typeof(training_metrics) = 'object'),
    validation_metrics jsonb CHECK (jsonb_typeof(validation_metrics) = 'object'),
    searcher_value double precision,
    elapsed_seconds double precision,
    report_time timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (trial_id, iteration)
);
COMMENT ON TABLE hopper.trial_metrics IS
'loss and metrics of a configuration at each evaluated iteration, on the training and the validation set, and the value of the run''s searcher metric';

CREATE TABLE hopper.checkpoint_training (
    checkpoint_id bigint PRIMARY KEY,
    trial_id bigint NOT NULL REFERENCES hopper.trials,
    iteration integer NOT NULL,
    searcher_value double precision,
    -- searcher_value when smaller is better, else its negation: "best first" is ascending order.
    signed_searcher_value double precision,
    -- A training checkpoint's task is its trial.
    FOREIGN KEY (checkpoint_id, trial_id) REFERENCES hopper.checkpoints (checkpoint_id, task_id) ON DELETE CASCADE,
    UNIQUE (trial_id, iteration)
);
COMMENT ON TABLE hopper.checkpoint_training IS
'training facts of a checkpoint: the configuration (trial) and iteration that wrote it and its searcher metric value';
-- "Best checkpoint of a configuration" is a forward scan of this index.
CREATE INDEX checkpoint_training_best_idx ON hopper.checkpoint_training (trial_id, signed_searcher_value, checkpoint_id);

-- ---- the model registry ---------------------------------------------------------------------
CREATE TABLE hopper.models (
    model_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL CONSTRAINT models_name_check
        CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$' AND name !~ '^[0-9]+$'),
    description text,
    metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    labels text[] NOT NULL DEFAULT '{}' CHECK (array_position(labels, NULL) IS NULL),
    notes text,
    archived boolean NOT NULL DEFAULT false,
    -- The number the next registered version gets; only ever goes up.
    next_version integer NOT NULL DEFAULT 1 CHECK (next_version >= 1),
    owner name NOT NULL DEFAULT CURRENT_USER,
    creation_time timestamptz NOT NULL DEFAULT now(),
    last_updated_time timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX models_name_key ON hopper.models (lower(name));
COMMENT ON TABLE hopper.models IS
'registered models: a unique name (case-insensitive), description, metadata, labels, notes, archived flag and owner; versions in hopper.model_versions';

CREATE TABLE hopper.model_versions (
    version_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model_id bigint NOT NULL REFERENCES hopper.models ON DELETE CASCADE,
    version integer NOT NULL CHECK (version >= 1),
    checkpoint_id bigint NOT NULL REFERENCES hopper.checkpoints,
    name text,
    comment text,
    metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    labels text[] NOT NULL DEFAULT '{}' CHECK (array_position(labels, NULL) IS NULL),
    notes text,
    owner name NOT NULL DEFAULT CURRENT_USER,
    creation_time timestamptz NOT NULL DEFAULT now(),
    last_updated_time timestamptz NOT NULL DEFAULT now(),
    UNIQUE (model_id, version),
    UNIQUE (model_id, version_id)
);
CREATE INDEX model_versions_checkpoint_idx ON hopper.model_versions (checkpoint_id);
COMMENT ON TABLE hopper.model_versions IS
'numbered versions of a model (1, 2, 3, ... per model, never reused), each a checkpoint; version_id is unique across all models';

CREATE TABLE hopper.model_aliases (
    model_id bigint NOT NULL REFERENCES hopper.models ON DELETE CASCADE,
    alias text NOT NULL CONSTRAINT model_aliases_alias_check
        CHECK (alias ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$' AND alias !~ '^[0-9]+$'),
    version_id bigint NOT NULL,
    owner name NOT NULL DEFAULT CURRENT_USER,
    last_updated_time timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (model_id, version_id) REFERENCES hopper.model_versions (model_id, version_id) ON DELETE CASCADE
);
-- Aliases are unique per model without regard to case, like model names.
CREATE UNIQUE INDEX model_aliases_key ON hopper.model_aliases (model_id, lower(alias));
CREATE INDEX model_aliases_version_idx ON hopper.model_aliases (version_id);
COMMENT ON TABLE hopper.model_aliases IS
'named pointers such as champion to one version of a model; removed with the version';

-- Every change of an alias (written by the triggers below).
#include "objects/model_alias_history.sql"

-- ---- tables hopper created ----------------------------------------------------------------------
#include "objects/output_tables.sql"

-- ---- triggers that keep the invariants ------------------------------------------------------------
#include "objects/model_versions_before_insert.sql"
#include "objects/model_versions_lock_checkpoint.sql"
#include "objects/model_versions_before_update.sql"
#include "objects/models_before_update.sql"
#include "objects/checkpoints_before_update.sql"
#include "objects/registry_cache_invalidate.sql"
#include "objects/model_aliases_history.sql"
#include "objects/model_versions_alias_history.sql"

-- ---- what ties a row to its owner cannot be changed ------------------------------------------------
#include "objects/keep_columns.sql"

-- ---- privileges and row-level security ---------------------------------------------------------
-- Everyone reads every row; a row is changed only by its owner (or a member of the owner role), and
-- a new row may point only at rows of its own roles: a checkpoint at the caller's task, a trial at
-- the caller's task and run, a metric or a checkpoint's training facts at the caller's trial.
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.tasks TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.run_records TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.checkpoints TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.checkpoint_chunks TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.trials TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.trial_metrics TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.checkpoint_training TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.models TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.model_versions TO PUBLIC;
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.model_aliases TO PUBLIC;
#include "objects/identity_columns_privileges.sql"

#include "objects/tasks_policies.sql"

#include "objects/run_records_policies.sql"

#include "objects/trials_policies.sql"

#include "objects/trial_metrics_policies.sql"

#include "objects/checkpoints_policies.sql"

#include "objects/checkpoint_chunks_policies.sql"

#include "objects/checkpoint_training_policies.sql"

#include "objects/models_policies.sql"

#include "objects/model_versions_policies.sql"

#include "objects/model_aliases_policies.sql"

#include "objects/model_alias_history_policies.sql"

-- pg_dump keeps the registry's rows (extension tables are otherwise dumped without data).
-- (one statement each: every call updates the extension's catalog row)
SELECT pg_catalog.pg_extension_config_dump('hopper.tasks', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.run_records', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.checkpoints', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.checkpoint_chunks', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.trials', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.trial_metrics', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.checkpoint_training', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.models', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.model_versions', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.model_aliases', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.tasks', 'task_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.run_records', 'run_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.checkpoints', 'checkpoint_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.models', 'model_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.model_versions', 'version_id'), '');

-- ---- JSON numbers in shared views ---------------------------------------------------------------
#include "objects/json_float8.sql"
#include "objects/json_float4.sql"

-- ---- views ------------------------------------------------------------------------------------
#include "objects/checkpoints_expanded.sql"
#include "objects/latest_checkpoints.sql"
#include "objects/best_checkpoints.sql"
#include "objects/model_versions_expanded.sql"
#include "objects/learning_curves.sql"
#include "objects/learning_curves_svg.sql"
#include "objects/sparkline.sql"
#include "objects/tensorboard_scalars.sql"

-- ---- functions: tasks and checkpoints -------------------------------------------------------------
#include "objects/create_task.sql"
#include "objects/end_task.sql"
#include "objects/create_checkpoint.sql"
#include "objects/create_checkpoint_reference.sql"
#include "objects/set_checkpoint_state.sql"
#include "objects/checkpoint_state.sql"
#include "objects/materialize_checkpoint.sql"
#include "objects/delete_checkpoints.sql"
#include "objects/gc_checkpoints.sql"
#include "objects/list_checkpoints.sql"

-- ---- functions: models and versions ---------------------------------------------------------------
#include "objects/create_model.sql"
#include "objects/archive_model.sql"
#include "objects/unarchive_model.sql"
#include "objects/delete_model.sql"
#include "objects/register_model_version.sql"
#include "objects/delete_model_version.sql"
#include "objects/set_model_alias.sql"
#include "objects/delete_model_alias.sql"
#include "objects/model_version_state.sql"
#include "objects/materialize_model_version.sql"
#include "objects/list_model_versions.sql"
#include "objects/mark_interrupted_runs.sql"

-- ---- functions: scoring one row by model name ----------------------------------------------------
#include "objects/predict_class.sql"
#include "objects/predict_proba.sql"
#include "objects/predict_value.sql"

-- ---- functions: ONNX export and import ---------------------------------------------------------
#include "objects/export_onnx.sql"
#include "objects/import_onnx.sql"
