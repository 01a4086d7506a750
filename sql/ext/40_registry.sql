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
--    of the owner role) change them. Every function is SECURITY INVOKER.
-- Trigger functions run with search_path pg_catalog, pg_temp and schema-qualify every table.

-- Whether the current user may change a row owned by `owner`: it is the owner, or a member of it.
CREATE FUNCTION hopper.may_modify(owner name) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT owner = CURRENT_USER
        OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                   WHERE r.rolname = owner AND pg_catalog.pg_has_role(r.oid, 'MEMBER'));
END;
COMMENT ON FUNCTION hopper.may_modify(name) IS
'whether the current user may change registry rows owned by owner (it is the owner or a member of that role); used by the row-level security policies';

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

-- Whether a training run is alive: the backend running it holds a session-level advisory lock
-- (key space 1213223473, key the run id modulo 2^31) from its first transaction until it ends,
-- errs or is cancelled (src/pg/run_lock.cpp). pg_locks shows every session's advisory locks to
-- every role, and a lock is gone the moment its backend stops running the run -- unlike a process
-- id, which outlives a failed run in a session that goes on.
CREATE FUNCTION hopper.run_is_live(run_id bigint) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE STRICT
BEGIN ATOMIC
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks l
                   WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                     AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d
                                       WHERE d.datname = pg_catalog.current_database())
                     AND l.classid = 1213223473::oid
                     AND l.objid = (run_id % 2147483648)::oid);
END;
COMMENT ON FUNCTION hopper.run_is_live(bigint) IS
'whether the training run is being run by a session right now (the session holds the run''s advisory lock)';

CREATE VIEW hopper.runs WITH (security_invoker = true) AS
SELECT r.run_id, r.method, r.name, r.description, r.source_table, r.validation_table, r.model_output_table,
       r.model_selection_table, r.num_iterations, r.metrics_compute_frequency, r.checkpoint_frequency,
       r.searcher_metric, r.smaller_is_better, r.data,
       CASE WHEN r.state = 'ACTIVE' AND NOT hopper.run_is_live(r.run_id) THEN 'INTERRUPTED' ELSE r.state END AS state,
       r.owner, r.start_time, r.end_time, r.backend_pid, r.backend_start
FROM hopper.run_records r;
COMMENT ON VIEW hopper.runs IS
'one row per call of hopper.fit, fit_multiple or fit_data_parallel, or per adaptive search (fit_automl, hopper.searches): its tables, settings, searcher metric and the facts of the packed data; state is ACTIVE only while a session is running it (INTERRUPTED once it stopped without completing: an error, a cancel, a crash)';

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

-- ---- tables hopper created ----------------------------------------------------------------------
-- hopper drops or replaces a table (a warm start replaces the model output and its _info, _summary
-- and _hops tables) only when it can prove it created it: the table's comment carries a token
-- "[hopper:<uuid>]" and this catalog has a row with that token and the table's kind. Only a table's
-- owner can set its comment, and a row here can only be added for oneself, so no role can make
-- hopper replace another role's table, and a user's table that merely has the right name is never
-- touched. The proof survives pg_dump and pg_upgrade (comments and these rows are kept) and renames.
CREATE TABLE hopper.output_tables (
    token uuid NOT NULL,
    kind text NOT NULL CHECK (kind IN ('model', 'model_info', 'model_summary', 'model_hops', 'packed',
                                       'packed_summary', 'model_selection', 'model_selection_summary',
                                       'model_arch', 'predictions')),
    -- Where hopper created it (the table may have been renamed since).
    schema_name name NOT NULL,
    table_name name NOT NULL,
    -- The training run that wrote it, for model tables written by fit, fit_multiple, fit_data_parallel.
    run_id bigint,
    owner name NOT NULL DEFAULT CURRENT_USER,
    creation_time timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (token, kind)
);
COMMENT ON TABLE hopper.output_tables IS
'every table hopper created (model outputs and their _info/_summary/_hops, packed tables, model selection and architecture tables, predictions): hopper replaces a table only if its comment carries the token of a row here of the right kind';

-- ---- triggers that keep the invariants ------------------------------------------------------------
CREATE FUNCTION hopper.model_versions_before_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    assigned integer;
    m record;
    c record;
BEGIN
    -- Restoring a dump (a superuser with hopper.restoring on): the row is taken as it was dumped --
    -- its number, and its model's counter, were dumped with them.
    IF current_setting('hopper.restoring', true) = 'on'
       AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
        RETURN NEW;
    END IF;
    -- Takes the model's row lock: concurrent registrations of one model queue here and get
    -- consecutive numbers; an archive committed meanwhile is seen by the re-check of NOT archived.
    UPDATE hopper.models SET next_version = next_version + 1, last_updated_time = now()
    WHERE model_id = NEW.model_id AND NOT archived
    RETURNING next_version - 1 INTO assigned;
    IF NOT FOUND THEN
        SELECT name, archived, owner INTO m FROM hopper.models WHERE model_id = NEW.model_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'model with id % does not exist', NEW.model_id USING ERRCODE = 'undefined_object';
        ELSIF m.archived THEN
            RAISE EXCEPTION 'model "%" is archived', m.name USING ERRCODE = 'object_not_in_prerequisite_state',
                DETAIL = 'An archived model accepts no new versions.',
                HINT = 'Unarchive it with hopper.unarchive_model first.';
        ELSE
            RAISE EXCEPTION 'permission denied for model "%"', m.name USING ERRCODE = 'insufficient_privilege',
                DETAIL = format('It belongs to role %s.', m.owner),
                HINT = format('Ask for membership in role %s.', m.owner);
        END IF;
    END IF;
    IF NEW.version IS NOT NULL AND NEW.version <> assigned THEN
        RAISE EXCEPTION 'version numbers are assigned by hopper' USING ERRCODE = 'generated_always',
            DETAIL = format('The next version of this model is %s; %s was given.', assigned, NEW.version),
            HINT = 'Leave out the version column, or use hopper.register_model_version. To restore a dump, run pg_restore with PGOPTIONS=''-c hopper.restoring=on'' as a superuser.';
    END IF;
    NEW.version := assigned;
    NEW.creation_time := now();
    NEW.last_updated_time := now();
    -- Rewrites the checkpoint's row (unchanged) under its row lock: a concurrent deletion, which
    -- locks the row before it looks for versions, either waits and then sees this one (READ
    -- COMMITTED) or fails to serialize (REPEATABLE READ); a deletion committed first is seen here.
    UPDATE hopper.checkpoints SET state = state
    WHERE checkpoint_id = NEW.checkpoint_id AND state = 'COMPLETED';
    IF NOT FOUND THEN
        SELECT uuid, state INTO c FROM hopper.checkpoints WHERE checkpoint_id = NEW.checkpoint_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'checkpoint with id % does not exist', NEW.checkpoint_id USING ERRCODE = 'undefined_object';
        END IF;
        RAISE EXCEPTION 'checkpoint % is %', c.uuid, c.state USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'Only COMPLETED checkpoints can be registered as model versions.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_before_insert() IS
'trigger: numbers a new model version from the model''s counter under its row lock (refusing archived models) and takes the checkpoint''s row lock (refusing checkpoints that are not COMPLETED)';
CREATE TRIGGER model_versions_before_insert BEFORE INSERT ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_before_insert();

CREATE FUNCTION hopper.model_versions_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.model_id <> OLD.model_id OR NEW.version <> OLD.version OR NEW.checkpoint_id <> OLD.checkpoint_id THEN
        RAISE EXCEPTION 'the model, number and checkpoint of a model version cannot be changed'
            USING ERRCODE = 'generated_always',
            HINT = 'Register the checkpoint as a new version instead.';
    END IF;
    NEW.last_updated_time := now();
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_before_update() IS
'trigger: keeps the model, number and checkpoint of a version fixed and records the update time';
CREATE TRIGGER model_versions_before_update BEFORE UPDATE ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_before_update();

-- Trigger depth proves nothing about the caller (a user's own trigger runs this one at depth 2): it
-- only keeps plain UPDATEs off next_version. Row-level security is what keeps other roles off a
-- model, so the most its owner can do is skip its own numbers; lowering it is refused at any depth.
CREATE FUNCTION hopper.models_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.model_id <> OLD.model_id THEN
        RAISE EXCEPTION 'model_id of a model cannot be changed' USING ERRCODE = 'generated_always';
    END IF;
    IF NEW.next_version <> OLD.next_version AND (pg_trigger_depth() < 2 OR NEW.next_version < OLD.next_version) THEN
        RAISE EXCEPTION 'next_version of a model is maintained by hopper' USING ERRCODE = 'generated_always',
            DETAIL = 'Version numbers are never reused.';
    END IF;
    NEW.last_updated_time := now();
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.models_before_update() IS
'trigger: version numbers only go up, and only when a version is registered; records the update time';
CREATE TRIGGER models_before_update BEFORE UPDATE ON hopper.models
    FOR EACH ROW EXECUTE FUNCTION hopper.models_before_update();

CREATE FUNCTION hopper.checkpoints_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    used_by text;
    registered boolean;
BEGIN
    IF NEW.checkpoint_id <> OLD.checkpoint_id OR NEW.uuid <> OLD.uuid THEN
        RAISE EXCEPTION 'the id and uuid of a checkpoint cannot be changed' USING ERRCODE = 'generated_always';
    END IF;
    IF OLD.state = 'DELETED' AND NEW.state <> 'DELETED' THEN
        RAISE EXCEPTION 'checkpoint % is deleted', OLD.uuid USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'A deleted checkpoint has no payload and stays deleted.';
    END IF;
    -- Anyone may register a checkpoint (which rewrites its row unchanged); changes are the owner's.
    IF NOT hopper.may_modify(OLD.owner) AND pg_catalog.to_jsonb(NEW) IS DISTINCT FROM pg_catalog.to_jsonb(OLD) THEN
        RAISE EXCEPTION 'permission denied for checkpoint %', OLD.uuid USING ERRCODE = 'insufficient_privilege',
            DETAIL = format('It belongs to role %s.', OLD.owner);
    END IF;
    -- Read from the versions themselves (this row is locked: a registration in progress has been waited for).
    registered := EXISTS (SELECT 1 FROM hopper.model_versions v WHERE v.checkpoint_id = OLD.checkpoint_id);
    -- What a completed checkpoint is (its payload's place, size and checksum, its steps) never
    -- changes; what it says about itself (metadata, resources) is fixed once a version uses it.
    -- Otherwise its owner could make a checkpoint someone registered look corrupt, or different.
    -- (A superuser may repair them.)
    IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
        IF OLD.state <> 'ACTIVE' AND (NEW.format, NEW.storage, NEW.external_uri, NEW.size_bytes, NEW.checksum,
                                      NEW.steps_completed)
                                     IS DISTINCT FROM (OLD.format, OLD.storage, OLD.external_uri, OLD.size_bytes,
                                                       OLD.checksum, OLD.steps_completed) THEN
            RAISE EXCEPTION 'checkpoint % is %: its payload, size, checksum and steps cannot be changed', OLD.uuid, OLD.state
                USING ERRCODE = 'object_not_in_prerequisite_state',
                DETAIL = 'Only an ACTIVE checkpoint, whose payload is still being written, can change them.';
        END IF;
        IF registered AND (NEW.metadata, NEW.resources) IS DISTINCT FROM (OLD.metadata, OLD.resources) THEN
            RAISE EXCEPTION 'checkpoint % is registered as a model version: its metadata cannot be changed', OLD.uuid
                USING ERRCODE = 'object_in_use',
                HINT = 'Delete those model versions first.';
        END IF;
    END IF;
    -- A registered checkpoint stays COMPLETED: not deleted, not marked as an error.
    IF NEW.state <> 'COMPLETED' AND registered THEN
        SELECT string_agg(format('%s version %s', m.name, v.version), ', ' ORDER BY m.name, v.version) INTO used_by
        FROM hopper.model_versions v JOIN hopper.models m USING (model_id) WHERE v.checkpoint_id = OLD.checkpoint_id;
        RAISE EXCEPTION 'checkpoint % is registered as a model version', OLD.uuid USING ERRCODE = 'object_in_use',
            DETAIL = format('It is %s.', coalesce(used_by, 'used by a model version')),
            HINT = 'Delete those model versions first.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.checkpoints_before_update() IS
'trigger: a checkpoint used by a model version (read from hopper.model_versions) stays COMPLETED and its metadata is fixed, a deleted one stays deleted, a completed one keeps its payload, size, checksum and steps (a superuser may repair them); only its owner may change it, others only register it';
CREATE TRIGGER checkpoints_before_update BEFORE UPDATE ON hopper.checkpoints
    FOR EACH ROW EXECUTE FUNCTION hopper.checkpoints_before_update();

-- ---- what ties a row to its owner cannot be changed ------------------------------------------------
-- Row-level security checks a new row against its owner and the rows it points to (task, run,
-- checkpoint, model); these triggers keep those columns fixed afterwards, so that a role can
-- neither give a row away (it could then no longer be repaired by anyone) nor move its own row
-- under another role's run. Each trigger names the columns it keeps (TG_ARGV); owner changes are
-- 42501 (only a superuser may reassign rows), the others 428C9.
CREATE FUNCTION hopper.keep_columns() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    col text;
    old_row jsonb := to_jsonb(OLD);
    new_row jsonb := to_jsonb(NEW);
BEGIN
    FOREACH col IN ARRAY TG_ARGV LOOP
        IF new_row -> col IS DISTINCT FROM old_row -> col THEN
            -- A superuser may hand rows to another role (say, when someone leaves).
            CONTINUE WHEN col = 'owner' AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER);
            IF col = 'owner' THEN
                RAISE EXCEPTION 'the owner of a row of %.% cannot be changed', TG_TABLE_SCHEMA, TG_TABLE_NAME
                    USING ERRCODE = 'insufficient_privilege',
                    DETAIL = format('It belongs to role %s.', old_row ->> 'owner'),
                    HINT = 'Rows stay with the role that created them.';
            END IF;
            RAISE EXCEPTION 'column % of %.% cannot be changed', col, TG_TABLE_SCHEMA, TG_TABLE_NAME
                USING ERRCODE = 'generated_always',
                DETAIL = 'It ties the row to its owner, task, run, checkpoint or model.';
        END IF;
    END LOOP;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.keep_columns() IS
'trigger: refuses an UPDATE that changes one of the columns named in the trigger''s arguments (owner: 42501 unless a superuser reassigns it, others: 428C9)';
CREATE TRIGGER tasks_keep_columns BEFORE UPDATE ON hopper.tasks
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'task_id', 'task_type');
CREATE TRIGGER run_records_keep_columns BEFORE UPDATE ON hopper.run_records
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'run_id', 'method');
CREATE TRIGGER trials_keep_columns BEFORE UPDATE ON hopper.trials
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('trial_id', 'run_id', 'mst_key');
CREATE TRIGGER trial_metrics_keep_columns BEFORE UPDATE ON hopper.trial_metrics
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('trial_id', 'iteration');
CREATE TRIGGER checkpoints_keep_columns BEFORE UPDATE ON hopper.checkpoints
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'task_id');
CREATE TRIGGER checkpoint_training_keep_columns BEFORE UPDATE ON hopper.checkpoint_training
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('checkpoint_id', 'trial_id', 'iteration');
CREATE TRIGGER models_keep_columns BEFORE UPDATE ON hopper.models
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner');
CREATE TRIGGER model_versions_keep_columns BEFORE UPDATE ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'version_id');
CREATE TRIGGER model_aliases_keep_columns BEFORE UPDATE ON hopper.model_aliases
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'model_id');

-- ---- privileges and row-level security ---------------------------------------------------------
-- Everyone reads every row; a row is changed only by its owner (or a member of the owner role), and
-- a new row may point only at rows of its own roles: a checkpoint at the caller's task, a trial at
-- the caller's task and run, a metric or a checkpoint's training facts at the caller's trial.
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.tasks, hopper.run_records, hopper.runs, hopper.checkpoints,
    hopper.checkpoint_chunks, hopper.trials, hopper.trial_metrics, hopper.checkpoint_training, hopper.models,
    hopper.model_versions, hopper.model_aliases TO PUBLIC;

ALTER TABLE hopper.tasks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tasks_read ON hopper.tasks FOR SELECT USING (true);
CREATE POLICY tasks_owner ON hopper.tasks USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));

ALTER TABLE hopper.run_records ENABLE ROW LEVEL SECURITY;
CREATE POLICY runs_read ON hopper.run_records FOR SELECT USING (true);
CREATE POLICY runs_owner ON hopper.run_records USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));

ALTER TABLE hopper.trials ENABLE ROW LEVEL SECURITY;
CREATE POLICY trials_read ON hopper.trials FOR SELECT USING (true);
CREATE POLICY trials_owner ON hopper.trials
    USING (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner))
                AND EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = trials.run_id AND hopper.may_modify(r.owner)));

ALTER TABLE hopper.trial_metrics ENABLE ROW LEVEL SECURITY;
CREATE POLICY trial_metrics_read ON hopper.trial_metrics FOR SELECT USING (true);
CREATE POLICY trial_metrics_owner ON hopper.trial_metrics
    USING (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)));

ALTER TABLE hopper.checkpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoints_read ON hopper.checkpoints FOR SELECT USING (true);
CREATE POLICY checkpoints_insert ON hopper.checkpoints FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND (task_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = checkpoints.task_id
                                AND hopper.may_modify(t.owner))));
-- Registering someone else's checkpoint rewrites its row unchanged (to lock it); the trigger refuses any change.
CREATE POLICY checkpoints_update ON hopper.checkpoints FOR UPDATE USING (true) WITH CHECK (true);
CREATE POLICY checkpoints_delete ON hopper.checkpoints FOR DELETE USING (hopper.may_modify(owner));

-- Chunks are written while their checkpoint is ACTIVE and removed only once it is being deleted
-- (or was never completed); a COMPLETED checkpoint's payload cannot change. No UPDATE policy: chunks
-- are immutable.
ALTER TABLE hopper.checkpoint_chunks ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoint_chunks_read ON hopper.checkpoint_chunks FOR SELECT USING (true);
CREATE POLICY checkpoint_chunks_insert ON hopper.checkpoint_chunks FOR INSERT
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_chunks.checkpoint_id
                        AND c.state = 'ACTIVE' AND hopper.may_modify(c.owner)));
CREATE POLICY checkpoint_chunks_delete ON hopper.checkpoint_chunks FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_chunks.checkpoint_id
                   AND c.state IN ('ACTIVE', 'ERROR', 'DELETING', 'DELETED', 'PARTIALLY_DELETED')
                   AND hopper.may_modify(c.owner)
                   AND NOT EXISTS (SELECT 1 FROM hopper.model_versions v WHERE v.checkpoint_id = c.checkpoint_id)));

ALTER TABLE hopper.checkpoint_training ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoint_training_read ON hopper.checkpoint_training FOR SELECT USING (true);
CREATE POLICY checkpoint_training_owner ON hopper.checkpoint_training
    USING (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_training.checkpoint_id
                   AND hopper.may_modify(c.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_training.checkpoint_id
                        AND hopper.may_modify(c.owner))
                AND EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = checkpoint_training.trial_id
                            AND hopper.may_modify(t.owner)));

-- Rows are added for oneself and never changed; removing one only makes hopper forget a table.
ALTER TABLE hopper.output_tables ENABLE ROW LEVEL SECURITY;
CREATE POLICY output_tables_read ON hopper.output_tables FOR SELECT USING (true);
CREATE POLICY output_tables_insert ON hopper.output_tables FOR INSERT WITH CHECK (hopper.may_modify(owner));
CREATE POLICY output_tables_delete ON hopper.output_tables FOR DELETE USING (hopper.may_modify(owner));
GRANT SELECT, INSERT, DELETE ON hopper.output_tables TO PUBLIC;

ALTER TABLE hopper.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY models_read ON hopper.models FOR SELECT USING (true);
CREATE POLICY models_owner ON hopper.models USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));

ALTER TABLE hopper.model_versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_versions_read ON hopper.model_versions FOR SELECT USING (true);
CREATE POLICY model_versions_insert ON hopper.model_versions FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id
                            AND hopper.may_modify(m.owner)));
CREATE POLICY model_versions_update ON hopper.model_versions FOR UPDATE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)));
CREATE POLICY model_versions_delete ON hopper.model_versions FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)));

ALTER TABLE hopper.model_aliases ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_aliases_read ON hopper.model_aliases FOR SELECT USING (true);
CREATE POLICY model_aliases_insert ON hopper.model_aliases FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id
                            AND hopper.may_modify(m.owner)));
CREATE POLICY model_aliases_update ON hopper.model_aliases FOR UPDATE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)));
CREATE POLICY model_aliases_delete ON hopper.model_aliases FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)));

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
SELECT pg_catalog.pg_extension_config_dump('hopper.output_tables', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.tasks', 'task_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.run_records', 'run_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.checkpoints', 'checkpoint_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.models', 'model_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.model_versions', 'version_id'), '');

-- ---- JSON numbers in shared views ---------------------------------------------------------------
-- Every role reads every row of the registry, and each role writes its own rows' JSON: a view that
-- casts one role's value must not fail for everyone (a string, or a number beyond the type's range,
-- raised 22P02/22003 in every unfiltered query). These casts give NULL for what is not a number in
-- range, and 0 for what would underflow. (BEGIN ATOMIC: bound when created, and inlined in queries.)
CREATE FUNCTION hopper.json_float8(value jsonb) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE WHEN pg_catalog.jsonb_typeof(value) OPERATOR(pg_catalog.<>) 'number' THEN NULL
                WHEN pg_catalog.abs(value::pg_catalog.numeric) OPERATOR(pg_catalog.>=) 1e308 THEN NULL
                WHEN pg_catalog.abs(value::pg_catalog.numeric) OPERATOR(pg_catalog.<) 1e-300 THEN 0
                ELSE value::pg_catalog.numeric::double precision END;
END;
COMMENT ON FUNCTION hopper.json_float8(jsonb) IS
'a JSON number as double precision: NULL for anything else (strings, objects, null) and for numbers beyond its range, 0 for numbers too small for it; never an error';

CREATE FUNCTION hopper.json_float4(value jsonb) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE WHEN pg_catalog.jsonb_typeof(value) OPERATOR(pg_catalog.<>) 'number' THEN NULL
                WHEN pg_catalog.abs(value::pg_catalog.numeric) OPERATOR(pg_catalog.>=) 3.4e38 THEN NULL
                WHEN pg_catalog.abs(value::pg_catalog.numeric) OPERATOR(pg_catalog.<) 1e-37 THEN 0
                ELSE value::pg_catalog.numeric::real END;
END;
COMMENT ON FUNCTION hopper.json_float4(jsonb) IS
'a JSON number as real: NULL for anything else (strings, objects, null) and for numbers beyond its range, 0 for numbers too small for it; never an error';

-- ---- views ------------------------------------------------------------------------------------
CREATE VIEW hopper.checkpoints_expanded AS
SELECT c.checkpoint_id, c.uuid, c.task_id, t.task_type, c.report_time, c.state, c.steps_completed, c.format,
       c.storage, c.external_uri, c.size_bytes, c.checksum, c.resources, c.metadata,
       (SELECT count(*)::integer FROM hopper.model_versions v WHERE v.checkpoint_id = c.checkpoint_id) AS version_count,
       c.owner,
       tr.run_id, r.name AS run_name, ct.trial_id, tr.mst_key, tr.model_id, ct.iteration, tr.model_arch,
       tr.compile_params, tr.fit_params, tr.hparams, m.training_metrics, m.validation_metrics,
       r.searcher_metric, r.smaller_is_better, ct.searcher_value, ct.signed_searcher_value,
       coalesce(r.data, c.metadata -> 'data') AS data
FROM hopper.checkpoints c
LEFT JOIN hopper.tasks t ON t.task_id = c.task_id
LEFT JOIN hopper.checkpoint_training ct ON ct.checkpoint_id = c.checkpoint_id AND ct.trial_id = c.task_id
LEFT JOIN hopper.trials tr ON tr.trial_id = ct.trial_id
LEFT JOIN hopper.run_records r ON r.run_id = tr.run_id
LEFT JOIN hopper.trial_metrics m ON m.trial_id = ct.trial_id AND m.iteration = ct.iteration;
COMMENT ON VIEW hopper.checkpoints_expanded IS
'every checkpoint with its training facts (run, configuration, iteration, hyper-parameters, metrics at that iteration, searcher metric; NULL for checkpoints not written by training) and the facts of its data (for predict)';

CREATE VIEW hopper.latest_checkpoints AS
SELECT tr.run_id, r.name AS run_name, tr.trial_id, tr.mst_key, x.checkpoint_id, x.uuid, x.iteration, x.steps_completed, x.report_time,
       x.training_metrics, x.validation_metrics, x.searcher_metric, x.searcher_value
FROM hopper.run_records r
JOIN hopper.trials tr ON tr.run_id = r.run_id
CROSS JOIN LATERAL (
    SELECT e.checkpoint_id, e.uuid, e.iteration, e.steps_completed, e.report_time, e.training_metrics,
           e.validation_metrics, e.searcher_metric, e.searcher_value
    FROM hopper.checkpoints_expanded e
    WHERE e.trial_id = tr.trial_id AND e.state = 'COMPLETED'
    ORDER BY e.steps_completed DESC, e.checkpoint_id DESC
    LIMIT 1) x;
COMMENT ON VIEW hopper.latest_checkpoints IS
'the latest COMPLETED checkpoint of every model configuration of every training run (an index scan per configuration)';

CREATE VIEW hopper.best_checkpoints AS
SELECT tr.run_id, r.name AS run_name, tr.trial_id, tr.mst_key, x.checkpoint_id, x.uuid, x.iteration, x.steps_completed, x.report_time,
       x.training_metrics, x.validation_metrics, x.searcher_metric, x.searcher_value
FROM hopper.run_records r
JOIN hopper.trials tr ON tr.run_id = r.run_id
CROSS JOIN LATERAL (
    SELECT e.checkpoint_id, e.uuid, e.iteration, e.steps_completed, e.report_time, e.training_metrics,
           e.validation_metrics, e.searcher_metric, e.searcher_value
    FROM hopper.checkpoints_expanded e
    WHERE e.trial_id = tr.trial_id AND e.state = 'COMPLETED' AND e.signed_searcher_value IS NOT NULL
    ORDER BY e.signed_searcher_value, e.checkpoint_id
    LIMIT 1) x;
COMMENT ON VIEW hopper.best_checkpoints IS
'the COMPLETED checkpoint with the best searcher metric of every model configuration of every training run (an index scan per configuration; ties go to the earlier checkpoint)';

CREATE VIEW hopper.model_versions_expanded AS
SELECT v.version_id, v.model_id, md.name AS model_name, v.version, v.name, v.comment, v.metadata, v.labels, v.notes,
       v.owner, v.creation_time, v.last_updated_time,
       ARRAY(SELECT a.alias FROM hopper.model_aliases a WHERE a.version_id = v.version_id ORDER BY a.alias) AS aliases,
       e.checkpoint_id, e.uuid AS checkpoint_uuid, e.state AS checkpoint_state, e.steps_completed, e.run_id, e.mst_key,
       e.iteration, e.training_metrics, e.validation_metrics, e.searcher_metric, e.searcher_value,
       e.signed_searcher_value, e.data ->> 'response_type' AS response_type,
       CASE WHEN jsonb_typeof(e.data -> 'class_values') = 'array'
            THEN ARRAY(SELECT jsonb_array_elements_text(e.data -> 'class_values')) END AS class_values,
       hopper.json_float8(e.data -> 'normalizing_const') AS normalizing_const,
       CASE WHEN jsonb_typeof(e.data -> 'feature_center') = 'array'
            THEN ARRAY(SELECT hopper.json_float4(jsonb_array_elements(e.data -> 'feature_center'))) END AS feature_center,
       CASE WHEN jsonb_typeof(e.data -> 'feature_spread') = 'array'
            THEN ARRAY(SELECT hopper.json_float4(jsonb_array_elements(e.data -> 'feature_spread'))) END AS feature_spread
FROM hopper.model_versions v
JOIN hopper.models md ON md.model_id = v.model_id
JOIN hopper.checkpoints_expanded e ON e.checkpoint_id = v.checkpoint_id;
COMMENT ON VIEW hopper.model_versions_expanded IS
'every model version with its model name, aliases, checkpoint, training facts and what hopper.model_forward needs to score a row (normalizing_const, feature_center, feature_spread, class_values)';

GRANT SELECT ON hopper.checkpoints_expanded, hopper.latest_checkpoints, hopper.best_checkpoints,
    hopper.model_versions_expanded TO PUBLIC;

CREATE VIEW hopper.learning_curves WITH (security_invoker = true) AS
SELECT tr.run_id, r.name AS run_name, r.method, tr.trial_id, tr.mst_key, m.iteration, m.steps_completed,
       m.elapsed_seconds, m.report_time, s.split, kv.key AS metric,
       hopper.json_float8(kv.value) AS value
FROM hopper.trial_metrics m
JOIN hopper.trials tr ON tr.trial_id = m.trial_id
JOIN hopper.run_records r ON r.run_id = tr.run_id
CROSS JOIN LATERAL (VALUES ('training', m.training_metrics), ('validation', m.validation_metrics)) AS s(split, metrics)
CROSS JOIN LATERAL pg_catalog.jsonb_each(CASE WHEN pg_catalog.jsonb_typeof(s.metrics) = 'object' THEN s.metrics END) AS kv;
COMMENT ON VIEW hopper.learning_curves IS
'learning curves in long form, one row per run, configuration (trial, mst_key), evaluated iteration, split (training or validation), metric (loss, accuracy, ...) and value (NULL where it was not a finite number): what BI tools and notebooks plot directly';
GRANT SELECT ON hopper.learning_curves TO PUBLIC;

CREATE FUNCTION hopper.learning_curves_svg(run_id bigint, metric text DEFAULT NULL, split text DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'learning_curves_svg' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.learning_curves_svg(bigint, text, text) IS
'an SVG line chart of a training run''s learning curves: the metric (default: the run''s searcher metric) on the split (default: validation when recorded, else training) per evaluated iteration, one line per configuration (a dot where it has one point), the one with the best last value highlighted, the legend naming the settings that tell the configurations apart (mst_key 3: lr=0.001, optimizer=adam); psql -At -c "SELECT hopper.learning_curves_svg(7)" > curves.svg';

CREATE FUNCTION hopper.sparkline(curve double precision[])
RETURNS text
AS 'MODULE_PATHNAME', 'sparkline' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.sparkline(double precision[]) IS
'a curve as one line of text: a block character per value (8 heights between the smallest and the largest), a space for NULL, NaN or infinity; e.g. SELECT mst_key, hopper.sparkline(array_agg(value ORDER BY iteration)) FROM hopper.learning_curves WHERE ... GROUP BY mst_key';

-- ---- functions: tasks and checkpoints -------------------------------------------------------------
CREATE FUNCTION hopper.create_task(task_type text, description text DEFAULT NULL, metadata jsonb DEFAULT '{}')
RETURNS bigint
AS 'MODULE_PATHNAME', 'create_task' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_task(text, text, jsonb) IS
'records a task that will write checkpoints (task_type such as IMPORT or FINE_TUNE) and returns its task_id';

CREATE FUNCTION hopper.end_task(task_id bigint, state text DEFAULT 'COMPLETED')
RETURNS void
AS 'MODULE_PATHNAME', 'end_task' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.end_task(bigint, text) IS
'marks an ACTIVE task COMPLETED, ERROR or CANCELED and records its end time';

CREATE FUNCTION hopper.create_checkpoint(model_state bytea, task_id bigint DEFAULT NULL,
                                         steps_completed bigint DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                         resources jsonb DEFAULT '{}')
RETURNS uuid
AS 'MODULE_PATHNAME', 'create_checkpoint' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_checkpoint(bytea, bigint, bigint, jsonb, jsonb) IS
'stores a model state as a COMPLETED checkpoint (checked, chunked, with size and sha256) and returns its uuid; steps_completed defaults to the state''s step counter; metadata may carry {"data": {...}} so that the checkpoint can be used by predict';

CREATE FUNCTION hopper.create_checkpoint_reference(uri text, format text, size_bytes bigint DEFAULT NULL,
                                                   checksum text DEFAULT NULL, task_id bigint DEFAULT NULL,
                                                   steps_completed bigint DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                                   resources jsonb DEFAULT '{}', state text DEFAULT 'COMPLETED')
RETURNS uuid
AS 'MODULE_PATHNAME', 'create_checkpoint_reference' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_checkpoint_reference(text, text, bigint, text, bigint, bigint, jsonb, jsonb, text) IS
'records a checkpoint stored outside the database (uri) and returns its uuid';

CREATE FUNCTION hopper.set_checkpoint_state(checkpoint uuid, state text)
RETURNS void
AS 'MODULE_PATHNAME', 'set_checkpoint_state' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.set_checkpoint_state(uuid, text) IS
'moves a checkpoint along its life cycle: ACTIVE to COMPLETED or ERROR, COMPLETED to ERROR, DELETING to DELETED or PARTIALLY_DELETED, PARTIALLY_DELETED to DELETED';

CREATE FUNCTION hopper.checkpoint_state(checkpoint uuid)
RETURNS bytea
AS 'MODULE_PATHNAME', 'checkpoint_state' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION hopper.checkpoint_state(uuid) IS
'the model state stored in a checkpoint, reassembled from its chunks and checked against its size and sha256';

CREATE FUNCTION hopper.materialize_checkpoint(checkpoint uuid, output_table text)
RETURNS void
AS 'MODULE_PATHNAME', 'materialize_checkpoint' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.materialize_checkpoint(uuid, text) IS
'writes a checkpoint as a model table (output_table and output_table_summary, as fit writes them) for hopper.predict and hopper.evaluate';

CREATE FUNCTION hopper.delete_checkpoints(checkpoints uuid[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'delete_checkpoints' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_checkpoints(uuid[]) IS
'deletes checkpoints (all or none): stored ones become DELETED and lose their payload, external ones become DELETING; refuses checkpoints registered as model versions; returns how many changed state';

CREATE FUNCTION hopper.gc_checkpoints(run_id bigint DEFAULT NULL, keep_best_per_run integer DEFAULT 1,
                                      keep_best_overall integer DEFAULT 0, keep_latest_per_run integer DEFAULT 0,
                                      keep_latest_per_configuration integer DEFAULT 1, dry_run boolean DEFAULT false)
RETURNS TABLE (checkpoint_uuid uuid, run_id bigint, mst_key integer, iteration integer, steps_completed bigint,
               searcher_value double precision)
AS 'MODULE_PATHNAME', 'gc_checkpoints' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.gc_checkpoints(bigint, integer, integer, integer, integer, boolean) IS
'garbage-collects the caller''s COMPLETED training checkpoints (of one run, or all): keeps the best N per run and overall by the searcher metric, the latest N per run and per configuration, and every checkpoint registered as a model version or used as a warm-start source by the caller''s own runs; deletes the rest and returns them (dry_run: only returns them); idempotent';

CREATE FUNCTION hopper.list_checkpoints(run_id bigint DEFAULT NULL, mst_key integer DEFAULT NULL,
                                        states text[] DEFAULT NULL, order_by text DEFAULT 'report_time',
                                        descending boolean DEFAULT true, page_size integer DEFAULT 100,
                                        page_offset bigint DEFAULT 0)
RETURNS TABLE (checkpoint_uuid uuid, run_id bigint, mst_key integer, iteration integer, state text,
               steps_completed bigint, report_time timestamptz, searcher_metric text, searcher_value double precision,
               training_metrics jsonb, validation_metrics jsonb, size_bytes bigint, total_count bigint)
AS 'MODULE_PATHNAME', 'list_checkpoints' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.list_checkpoints(bigint, integer, text[], text, boolean, integer, bigint) IS
'one page of checkpoints, filtered by run, configuration and states, sorted by steps, report_time, searcher_metric, training.<metric> or validation.<metric>; total_count is the number of matching checkpoints, computed by the same statement (one snapshot) as the page';

-- ---- functions: models and versions ---------------------------------------------------------------
CREATE FUNCTION hopper.create_model(name text, description text DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                    labels text[] DEFAULT '{}', notes text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'create_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_model(text, text, jsonb, text[], text) IS
'registers a model name (1 to 128 letters, digits, _ - and ., unique without regard to case) owned by the current user; returns its model_id';

CREATE FUNCTION hopper.archive_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'archive_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.archive_model(text) IS
'archives a model: it keeps its versions but accepts no new ones';

CREATE FUNCTION hopper.unarchive_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'unarchive_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.unarchive_model(text) IS
'makes an archived model accept new versions again';

CREATE FUNCTION hopper.delete_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model(text) IS
'deletes a model with its versions and aliases (its checkpoints stay, no longer protected)';

CREATE FUNCTION hopper.register_model_version(model_name text, checkpoint uuid, name text DEFAULT NULL,
                                              comment text DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                              labels text[] DEFAULT '{}', notes text DEFAULT NULL)
RETURNS integer
AS 'MODULE_PATHNAME', 'register_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.register_model_version(text, uuid, text, text, jsonb, text[], text) IS
'registers a COMPLETED checkpoint as the next version of a model and returns the version number; concurrent registrations get consecutive numbers, an archived model refuses, and the checkpoint cannot be deleted while the version exists';

CREATE FUNCTION hopper.delete_model_version(model_name text, version integer)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_version(text, integer) IS
'deletes one version of a model (and its aliases); its number is not reused';

CREATE FUNCTION hopper.set_model_alias(model_name text, alias text, version integer)
RETURNS void
AS 'MODULE_PATHNAME', 'set_model_alias' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.set_model_alias(text, text, integer) IS
'points an alias such as champion at a version of a model (moving it if it exists)';

CREATE FUNCTION hopper.delete_model_alias(model_name text, alias text)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_alias' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_alias(text, text) IS
'removes an alias of a model';

CREATE FUNCTION hopper.model_version_state(model_name text, version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'model_version_state' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.model_version_state(text, integer, text) IS
'the model state of a version (by number, by alias, or the latest when both are NULL)';

CREATE FUNCTION hopper.materialize_model_version(model_name text, output_table text, version integer DEFAULT NULL,
                                                 alias text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'materialize_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.materialize_model_version(text, text, integer, text) IS
'writes a model version (by number, by alias, or the latest) as a model table for hopper.predict and hopper.evaluate';

CREATE FUNCTION hopper.list_model_versions(model_name text, order_by text DEFAULT 'version',
                                           descending boolean DEFAULT true, page_size integer DEFAULT 100,
                                           page_offset bigint DEFAULT 0)
RETURNS TABLE (version integer, version_id bigint, name text, checkpoint_uuid uuid, aliases text[], labels text[],
               creation_time timestamptz, steps_completed bigint, searcher_metric text,
               searcher_value double precision, validation_metrics jsonb, total_count bigint)
AS 'MODULE_PATHNAME', 'list_model_versions' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.list_model_versions(text, text, boolean, integer, bigint) IS
'one page of the versions of a model, sorted by version, creation_time, steps, searcher_metric or a metric; total_count comes from the same statement (one snapshot) as the page';

CREATE FUNCTION hopper.mark_interrupted_runs() RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
    WITH gone AS (
        UPDATE hopper.run_records AS r SET state = 'INTERRUPTED', end_time = pg_catalog.now()
        WHERE r.state = 'ACTIVE' AND NOT hopper.run_is_live(r.run_id)
        RETURNING 1)
    SELECT pg_catalog.count(*) FROM gone
$$;
COMMENT ON FUNCTION hopper.mark_interrupted_runs() IS
'records as INTERRUPTED the caller''s ACTIVE training runs that no session is running any more (an error, a cancel, a server crash) and returns how many; every new training run calls it for its owner (hopper.runs already reads them as INTERRUPTED)';
