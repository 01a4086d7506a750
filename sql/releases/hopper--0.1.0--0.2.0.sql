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
COMMENT ON TABLE hopper.run_records IS
'storage of hopper.runs: one row per call of hopper.fit, fit_multiple or fit_data_parallel; read hopper.runs, whose state is truthful when read';

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
'one row per call of hopper.fit, fit_multiple or fit_data_parallel: its tables, settings, searcher metric and the facts of the packed data; state is ACTIVE only while a session is running it (INTERRUPTED once it stopped without completing: an error, a cancel, a crash)';
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.runs TO PUBLIC;

CREATE OR REPLACE FUNCTION hopper.mark_interrupted_runs() RETURNS bigint
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

-- Rows are added for oneself and never changed; removing one only makes hopper forget a table.
ALTER TABLE hopper.output_tables ENABLE ROW LEVEL SECURITY;
CREATE POLICY output_tables_read ON hopper.output_tables FOR SELECT USING (true);
CREATE POLICY output_tables_insert ON hopper.output_tables FOR INSERT WITH CHECK (hopper.may_modify(owner));
CREATE POLICY output_tables_delete ON hopper.output_tables FOR DELETE USING (hopper.may_modify(owner));
GRANT SELECT, INSERT, DELETE ON hopper.output_tables TO PUBLIC;

SELECT pg_catalog.pg_extension_config_dump('hopper.output_tables', '');

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

-- ---- checkpoints: a completed one keeps its payload, a registered one its metadata -----------------
CREATE OR REPLACE FUNCTION hopper.checkpoints_before_update() RETURNS trigger
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

-- ---- model versions: a restore (hopper.restoring) keeps the dumped numbers -------------------------
CREATE OR REPLACE FUNCTION hopper.model_versions_before_insert() RETURNS trigger
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

-- ---- whether a checkpoint is registered is read from hopper.model_versions -------------------------
-- 0.1.0 kept a per-checkpoint counter guarded by trigger depth, which a user's own trigger passes:
-- any role could rewrite any checkpoint's count (to 0, so that its owner's gc deleted a registered
-- checkpoint, or huge, to make it undeletable), and the forged count survived dump and restore.
DROP TRIGGER model_versions_after_delete ON hopper.model_versions;
DROP FUNCTION hopper.model_versions_after_delete();
CREATE OR REPLACE VIEW hopper.checkpoints_expanded AS
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
DROP POLICY checkpoint_chunks_delete ON hopper.checkpoint_chunks;
CREATE POLICY checkpoint_chunks_delete ON hopper.checkpoint_chunks FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_chunks.checkpoint_id
                   AND c.state IN ('ACTIVE', 'ERROR', 'DELETING', 'DELETED', 'PARTIALLY_DELETED')
                   AND hopper.may_modify(c.owner)
                   AND NOT EXISTS (SELECT 1 FROM hopper.model_versions v WHERE v.checkpoint_id = c.checkpoint_id)));
ALTER TABLE hopper.checkpoints DROP CONSTRAINT checkpoints_registered_check, DROP COLUMN version_count;
-- Another role's trial naming a checkpoint as its warm-start source no longer pins it in gc.
COMMENT ON FUNCTION hopper.gc_checkpoints(bigint, integer, integer, integer, integer, boolean) IS
'garbage-collects the caller''s COMPLETED training checkpoints (of one run, or all): keeps the best N per run and overall by the searcher metric, the latest N per run and per configuration, and every checkpoint registered as a model version or used as a warm-start source by the caller''s own runs; deletes the rest and returns them (dry_run: only returns them); idempotent';

-- ---- row-level security: a new row points only at rows of its own roles --------------------------
DROP POLICY trials_owner ON hopper.trials;
CREATE POLICY trials_owner ON hopper.trials
    USING (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner))
                AND EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = trials.run_id AND hopper.may_modify(r.owner)));

DROP POLICY checkpoints_insert ON hopper.checkpoints;
CREATE POLICY checkpoints_insert ON hopper.checkpoints FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND (task_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = checkpoints.task_id
                                AND hopper.may_modify(t.owner))));
DROP POLICY checkpoint_training_owner ON hopper.checkpoint_training;
CREATE POLICY checkpoint_training_owner ON hopper.checkpoint_training
    USING (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_training.checkpoint_id
                   AND hopper.may_modify(c.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_training.checkpoint_id
                        AND hopper.may_modify(c.owner))
                AND EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = checkpoint_training.trial_id
                            AND hopper.may_modify(t.owner)));

DROP POLICY model_versions_owner ON hopper.model_versions;
CREATE POLICY model_versions_insert ON hopper.model_versions FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id
                            AND hopper.may_modify(m.owner)));
CREATE POLICY model_versions_update ON hopper.model_versions FOR UPDATE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)));
CREATE POLICY model_versions_delete ON hopper.model_versions FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)));

DROP POLICY model_aliases_owner ON hopper.model_aliases;
CREATE POLICY model_aliases_insert ON hopper.model_aliases FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id
                            AND hopper.may_modify(m.owner)));
CREATE POLICY model_aliases_update ON hopper.model_aliases FOR UPDATE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)));
CREATE POLICY model_aliases_delete ON hopper.model_aliases FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)));

-- ---- SQL name = C symbol: functions whose C symbol was renamed (the old symbols stay in the
-- library for databases not yet updated, src/pg/common/legacy_symbols.cpp) ----------------------------
CREATE OR REPLACE FUNCTION hopper.vector_sum_add(internal, double precision[]) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.vector_sum_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.vector_sum_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.vector_sum_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'vector_sum_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.vector_sum_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.vector_sum_finish(internal) RETURNS hopper.vector_total
AS 'MODULE_PATHNAME', 'vector_sum_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.model_average_add(internal, bytea, bigint) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.model_average_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.model_average_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.model_average_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'model_average_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.model_average_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.model_average_finish(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'model_average_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.metrics_add(internal, bytea, real[], real[]) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_add' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100000;
CREATE OR REPLACE FUNCTION hopper.metrics_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.metrics_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.metrics_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'metrics_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.metrics_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.metrics_finish(internal) RETURNS hopper.metrics_total
AS 'MODULE_PATHNAME', 'metrics_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE OR REPLACE FUNCTION hopper.ps_create(name text, key_ranges int8range[], chunk_size integer DEFAULT 1,
                                 consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                 num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create' LANGUAGE C VOLATILE PARALLEL UNSAFE;

-- ---- model outputs written by 0.1.0 ----------------------------------------------------------------
-- 0.1.0 did not mark the tables it created, and a warm start now replaces only marked tables. The
-- model outputs of completed 0.1.0 runs are marked here, as their owners' rows -- but only what can
-- be proven hopper's: a table exactly as hopper's library created it (kind, every column in order
-- with its type, NOT NULL, storage, collation and default, every constraint, index and inheritance;
-- no dropped column) and with no comment, as the library left it. Column names prove nothing: a
-- user's table that shares them, or differs by one type, one constraint, the order or a comment of
-- its own, stays the user's, and a warm start into it is refused rather than dropping it. The
-- output and its _summary must both be hopper's; its _info and _hops are marked when they are.
-- The definitions are those of 0.1.0's library (src/pg/run.cpp, write_run_outputs) and, for the
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
                    ' hopper_version text | no constraints | 0 indexes | 0 inherited']
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
CREATE FUNCTION hopper.evaluate_models_sums_final(internal) RETURNS double precision[]
AS 'MODULE_PATHNAME', 'evaluate_models_sums_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_sums_final(internal) IS
'final function of hopper.evaluate_models_sums: per model, its number of metrics, the row count, the loss sum and the metric sums';

-- No serial functions, on purpose: its partial states never cross processes, so PostgreSQL runs each
-- segment (GROUP BY dist_key) as one whole aggregate in one process, and hopper adds the segments'
-- exact sums up (a parallel scan shared a segment's few heap pages between processes unevenly).
CREATE AGGREGATE hopper.evaluate_models_sums(model_states bytea[], independent_var real[], dependent_var real[]) (
    SFUNC = hopper.evaluate_models_transition,
    STYPE = internal,
    COMBINEFUNC = hopper.evaluate_models_combine,
    FINALFUNC = hopper.evaluate_models_sums_final,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hopper.evaluate_models_sums(bytea[], real[], real[]) IS
'hopper.evaluate_models as exact sums that merge across segments: for each model in order, its number of metrics k, row count, loss sum and k metric sums';

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

CREATE OR REPLACE VIEW hopper.model_versions_expanded AS
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

-- ---- adaptive model selection (issue 14): hopper.fit_automl and its records ----------------------
ALTER TABLE hopper.run_records DROP CONSTRAINT run_records_method_check;
ALTER TABLE hopper.run_records ADD CONSTRAINT run_records_method_check
    CHECK (method IN ('fit', 'fit_multiple', 'fit_data_parallel', 'fit_automl'));
COMMENT ON TABLE hopper.run_records IS
'storage of hopper.runs: one row per call of hopper.fit, fit_multiple or fit_data_parallel, or per adaptive search (fit_automl); read hopper.runs, whose state is truthful when read';
COMMENT ON VIEW hopper.runs IS
'one row per call of hopper.fit, fit_multiple or fit_data_parallel, or per adaptive search (fit_automl, hopper.searches): its tables, settings, searcher metric and the facts of the packed data; state is ACTIVE only while a session is running it (INTERRUPTED once it stopped without completing: an error, a cancel, a crash)';
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

CREATE TABLE hopper.searches (
    run_id bigint PRIMARY KEY REFERENCES hopper.run_records,
    automl_method text NOT NULL CHECK (automl_method IN ('hyperband', 'successive_halving')),
    max_iterations integer NOT NULL CHECK (max_iterations >= 1),
    eta integer NOT NULL CHECK (eta >= 2),
    skip_last integer NOT NULL CHECK (skip_last >= 0),
    num_brackets integer NOT NULL CHECK (num_brackets >= 1),
    -- Configurations (trials) of the whole search, and the iterations they train in all when
    -- nothing diverges (model-epochs).
    num_configs integer NOT NULL CHECK (num_configs >= 1),
    model_iterations bigint NOT NULL CHECK (model_iterations >= 1),
    model_arch_table text NOT NULL,
    model_id_list integer[] NOT NULL,
    compile_params_grid jsonb NOT NULL,
    fit_params_grid jsonb NOT NULL,
    search_type text NOT NULL CHECK (search_type IN ('grid', 'random')),
    random_state bigint,
    pack_brackets boolean NOT NULL,
    -- Set when the search completes: the trial and checkpoint with the best searcher value.
    best_mst_key integer,
    best_checkpoint_id bigint REFERENCES hopper.checkpoints
);
COMMENT ON TABLE hopper.searches IS
'one row per adaptive search (hopper.fit_automl; the run is in hopper.runs): method, budget (max_iterations, eta, skip_last), brackets, search space and random_state, and, once it completed, its best trial and checkpoint';

CREATE TABLE hopper.search_rungs (
    run_id bigint NOT NULL REFERENCES hopper.searches,
    bracket integer NOT NULL CHECK (bracket >= 0),  -- Hyperband's s: the halvings the bracket plans
    rung integer NOT NULL CHECK (rung >= 0),
    num_configs integer NOT NULL CHECK (num_configs >= 1),
    iterations integer NOT NULL CHECK (iterations >= 1),  -- each trial's iterations in all at the rung's end
    num_promoted integer NOT NULL CHECK (num_promoted >= 0),
    -- PENDING, TRAINING, COMPLETED; SKIPPED when a rung before it promoted nobody (all diverged).
    state text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'TRAINING', 'COMPLETED', 'SKIPPED')),
    -- The trials of the rung, once known (rung 0: at the start; later: the survivors of the rung before).
    mst_keys integer[],
    start_time timestamptz,
    end_time timestamptz,
    PRIMARY KEY (run_id, bracket, rung)
);
COMMENT ON TABLE hopper.search_rungs IS
'the plan and progress of an adaptive search: one row per rung of every bracket, with its budget (iterations each trial has trained at its end), how many configurations train in it and how many go on, its state and its trials';

CREATE TABLE hopper.trial_rungs (
    trial_id bigint NOT NULL REFERENCES hopper.trials,
    run_id bigint NOT NULL,
    bracket integer NOT NULL,
    rung integer NOT NULL,
    iteration integer NOT NULL CHECK (iteration >= 1),
    searcher_value double precision,
    rank integer NOT NULL CHECK (rank >= 1),  -- 1: the best of the rung
    promoted boolean NOT NULL,                -- goes on to the next rung
    checkpoint_id bigint REFERENCES hopper.checkpoints,  -- the trial's state at the end of the rung
    PRIMARY KEY (trial_id, rung),
    FOREIGN KEY (run_id, bracket, rung) REFERENCES hopper.search_rungs
);
COMMENT ON TABLE hopper.trial_rungs IS
'the decision about each trial at each rung it trained in: its searcher value, its rank in the rung, whether it survived to the next, and the checkpoint of its state at that point';
CREATE INDEX trial_rungs_rung_idx ON hopper.trial_rungs (run_id, bracket, rung, rank);

CREATE TRIGGER searches_keep_columns BEFORE UPDATE ON hopper.searches
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('run_id');
CREATE TRIGGER search_rungs_keep_columns BEFORE UPDATE ON hopper.search_rungs
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('run_id', 'bracket', 'rung');
CREATE TRIGGER trial_rungs_keep_columns BEFORE UPDATE ON hopper.trial_rungs
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('trial_id', 'run_id', 'bracket', 'rung');

-- Everyone reads; rows are written by the owner of their run (a trial's rows by the owner of its
-- task), and may point only at that run's trials and checkpoints.
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.searches, hopper.search_rungs, hopper.trial_rungs TO PUBLIC;

ALTER TABLE hopper.searches ENABLE ROW LEVEL SECURITY;
CREATE POLICY searches_read ON hopper.searches FOR SELECT USING (true);
CREATE POLICY searches_owner ON hopper.searches
    USING (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = searches.run_id AND hopper.may_modify(r.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = searches.run_id AND hopper.may_modify(r.owner))
                AND (best_checkpoint_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.checkpoint_training ct JOIN hopper.trials t ON t.trial_id = ct.trial_id
                                WHERE ct.checkpoint_id = searches.best_checkpoint_id AND t.run_id = searches.run_id)));

ALTER TABLE hopper.search_rungs ENABLE ROW LEVEL SECURITY;
CREATE POLICY search_rungs_read ON hopper.search_rungs FOR SELECT USING (true);
CREATE POLICY search_rungs_owner ON hopper.search_rungs
    USING (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = search_rungs.run_id AND hopper.may_modify(r.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = search_rungs.run_id AND hopper.may_modify(r.owner)));

ALTER TABLE hopper.trial_rungs ENABLE ROW LEVEL SECURITY;
CREATE POLICY trial_rungs_read ON hopper.trial_rungs FOR SELECT USING (true);
CREATE POLICY trial_rungs_owner ON hopper.trial_rungs
    USING (EXISTS (SELECT 1 FROM hopper.tasks k WHERE k.task_id = trial_rungs.trial_id AND hopper.may_modify(k.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.trials t JOIN hopper.tasks k ON k.task_id = t.trial_id
                        WHERE t.trial_id = trial_rungs.trial_id AND t.run_id = trial_rungs.run_id
                          AND hopper.may_modify(k.owner))
                AND (checkpoint_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = trial_rungs.checkpoint_id
                                AND c.task_id = trial_rungs.trial_id)));

SELECT pg_catalog.pg_extension_config_dump('hopper.searches', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.search_rungs', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.trial_rungs', '');

-- Brackets, rungs, budgets and survivors of every search.
CREATE VIEW hopper.search_brackets WITH (security_invoker = true) AS
SELECT g.run_id, r.name AS run_name, s.automl_method, g.bracket, g.rung, g.iterations AS budget,
       g.iterations - coalesce(lag(g.iterations) OVER (PARTITION BY g.run_id, g.bracket ORDER BY g.rung), 0)
           AS iterations_in_rung,
       g.num_configs, g.num_promoted, g.state, g.mst_keys,
       d.ranking,
       CASE WHEN g.state = 'COMPLETED' THEN coalesce(d.survivors, '{}') END AS survivors,
       d.ranking[1] AS best_mst_key, d.best_value, r.searcher_metric, g.start_time, g.end_time
FROM hopper.search_rungs g
JOIN hopper.searches s ON s.run_id = g.run_id
JOIN hopper.run_records r ON r.run_id = g.run_id
LEFT JOIN LATERAL (
    SELECT array_agg(t.mst_key ORDER BY x.rank) AS ranking,
           array_agg(t.mst_key ORDER BY x.rank) FILTER (WHERE x.promoted) AS survivors,
           (array_agg(x.searcher_value ORDER BY x.rank))[1] AS best_value
    FROM hopper.trial_rungs x JOIN hopper.trials t ON t.trial_id = x.trial_id
    WHERE x.run_id = g.run_id AND x.bracket = g.bracket AND x.rung = g.rung) d ON true;
COMMENT ON VIEW hopper.search_brackets IS
'every rung of every bracket of every adaptive search: budget (iterations in all at its end, and in the rung), how many configurations train and survive, its state, its trials, their ranking by the searcher metric (best first), the survivors and the best value';

-- Each trial of every search: its bracket, status (stopped: at which rung), and its latest state.
CREATE VIEW hopper.search_trials WITH (security_invoker = true) AS
SELECT t.run_id, r.name AS run_name, t.trial_id, t.mst_key, b.bracket, t.status, x.rung AS last_rung,
       CASE WHEN t.status = 'stopped' THEN x.rung END AS stopped_at_rung, x.iteration AS iterations,
       x.searcher_value, x.rank, c.uuid AS checkpoint_uuid, t.model_id, t.compile_params, t.fit_params, t.hparams
FROM hopper.trials t
JOIN hopper.searches s ON s.run_id = t.run_id
JOIN hopper.run_records r ON r.run_id = t.run_id
JOIN hopper.search_rungs b ON b.run_id = t.run_id AND b.rung = 0 AND t.mst_key = ANY (b.mst_keys)
LEFT JOIN LATERAL (
    SELECT y.rung, y.iteration, y.searcher_value, y.rank, y.checkpoint_id FROM hopper.trial_rungs y
    WHERE y.trial_id = t.trial_id ORDER BY y.rung DESC LIMIT 1) x ON true
LEFT JOIN hopper.checkpoints c ON c.checkpoint_id = x.checkpoint_id;
COMMENT ON VIEW hopper.search_trials IS
'every configuration (trial) of every adaptive search: its bracket, status (stopped_at_rung for one stopped early), the last rung it completed with its iterations, searcher value and rank there, and the checkpoint of its state then (ready for hopper.register_model_version)';

GRANT SELECT ON hopper.search_brackets, hopper.search_trials TO PUBLIC;

CREATE PROCEDURE hopper.fit_automl(
    packed_table text DEFAULT NULL,
    model_output_table text DEFAULT NULL,
    model_arch_table text DEFAULT NULL,
    model_selection_table text DEFAULT NULL,
    model_id_list integer[] DEFAULT NULL,
    compile_params_grid jsonb DEFAULT NULL,
    fit_params_grid jsonb DEFAULT NULL,
    automl_method text DEFAULT NULL,
    max_iterations integer DEFAULT NULL,
    eta integer DEFAULT NULL,
    skip_last integer DEFAULT NULL,
    num_brackets integer DEFAULT NULL,
    num_configs integer DEFAULT NULL,
    search_type text DEFAULT NULL,
    random_state bigint DEFAULT NULL,
    validation_table text DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL,
    searcher_metric text DEFAULT NULL,
    pack_brackets boolean DEFAULT NULL,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    run_id bigint DEFAULT NULL)
AS 'MODULE_PATHNAME', 'fit_automl' LANGUAGE C;
COMMENT ON PROCEDURE hopper.fit_automl(text, text, text, text, integer[], jsonb, jsonb, text, integer, integer, integer, integer, integer, text, bigint, text, integer, text, boolean, text, text, bigint) IS
'adaptive model selection by model hopping: draws configurations from a search space (as generate_model_configs, into model_selection_table) and runs hyperband (default) or successive_halving with budget max_iterations (default 9) and eta (default 3); search_type random (default) or grid (successive_halving only); model_selection_table defaults to <model_output_table>_mst; searcher_metric as fit_multiple''s (default: the loss, on the validation table when given); each rung trains its trials together, ranks them by the searcher metric and continues the best 1/eta from their state; writes model_output_table, _info and _summary like fit_multiple and records every decision (hopper.searches, search_rungs, trial_rungs, views search_brackets and search_trials); CALLed on its own it commits after every ring iteration and run_id => continues an interrupted search from its last completed rungs; inside a transaction block or a function it runs in that one transaction';

-- Live progress of training runs (src/pg/training/progress.h): shared memory read by a function,
-- and a view that adds the run's name and owner (hopper.runs) and computes rates and the time left.
CREATE FUNCTION hopper.run_progress_segments(
    OUT run_id bigint, OUT method text, OUT on_worker_node boolean, OUT pid integer, OUT iteration integer,
    OUT num_iterations integer, OUT hop integer, OUT hops_per_iteration integer, OUT models_in_ring integer,
    OUT model_iterations_done bigint, OUT model_iterations_total bigint, OUT best_searcher_value double precision,
    OUT best_mst_key integer, OUT start_time timestamptz, OUT updated timestamptz, OUT dist_key integer,
    OUT mst_key integer, OUT segment_pid integer, OUT buffers_done integer, OUT buffers_total integer,
    OUT rows_done bigint, OUT visit_start timestamptz, OUT hop_start timestamptz, OUT segment_updated timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'run_progress_segments' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION hopper.run_progress_segments() IS
'the raw shared-memory progress of the training runs going on in this database, one row per run and segment; read the view hopper.run_progress';

CREATE VIEW hopper.run_progress WITH (security_invoker = true) AS
WITH p AS (
    SELECT s.*, pg_catalog.clock_timestamp() AS now,
           -- a segment's share of its current visit; a visit that began before this hop counts as not begun
           CASE WHEN s.visit_start >= s.hop_start THEN s.buffers_done::double precision / NULLIF(s.buffers_total, 0)
                ELSE 0 END AS visit_fraction
    FROM hopper.run_progress_segments() s
), f AS (
    SELECT p.*,
           (p.model_iterations_done + p.models_in_ring * (GREATEST(p.hop - 1, 0)
                + COALESCE(pg_catalog.avg(p.visit_fraction) OVER (PARTITION BY p.run_id, p.pid), 0))
                / NULLIF(p.hops_per_iteration, 0))
           / NULLIF(p.model_iterations_total, 0)::double precision AS fraction
    FROM p
)
SELECT f.run_id, r.name AS run_name, f.method, r.owner, f.pid, f.on_worker_node,
       f.iteration, f.num_iterations, f.hop, f.hops_per_iteration, f.models_in_ring,
       f.dist_key AS segment, f.mst_key, f.segment_pid, f.buffers_done, f.buffers_total, f.rows_done,
       round((f.rows_done / NULLIF(EXTRACT(epoch FROM f.segment_updated - f.visit_start), 0))::numeric, 1) AS rows_per_second,
       round(EXTRACT(epoch FROM f.now - f.start_time), 3) AS elapsed_seconds,
       round(LEAST(GREATEST(f.fraction, 0), 1)::numeric, 4) AS fraction_done,
       CASE WHEN f.fraction > 0
            THEN round(EXTRACT(epoch FROM f.now - f.start_time) * (1 - LEAST(f.fraction, 1)::numeric) / f.fraction::numeric, 1)
       END AS estimated_seconds_left,
       f.best_searcher_value, f.best_mst_key, r.searcher_metric, f.updated AS updated_at
FROM f LEFT JOIN hopper.runs r ON r.run_id = f.run_id AND NOT f.on_worker_node;
COMMENT ON VIEW hopper.run_progress IS
'the training runs going on in this database (fit, fit_multiple, fit_data_parallel, fit_automl), live from shared memory: iteration i of N, hop h of H, per segment the configuration it trains (mst_key), buffers and rows done in its current visit, rows/s, elapsed and estimated seconds left, the best searcher value so far, the backend pids; needs hopper in shared_preload_libraries; on Citus the coordinator shows the run and each worker node (on_worker_node) the segments it trains';
GRANT SELECT ON hopper.run_progress TO PUBLIC;

-- Parameter tables: SparseSSP, tables split over servers (ps_create_part), late_adds, part and
-- range_map in hopper.ps_tables (issue 19).
CREATE FUNCTION hopper.ps_create_part(name text, range_map int8range[], part integer, chunk_size integer DEFAULT 1,
                                      consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                      num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create_part' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create_part(text, int8range[], integer, integer, text, integer, integer, real) IS
'creates part number part (from 0) of a parameter table split over several servers: range_map lists every part''s keys in key order, without gap or overlap, inner boundaries multiples of chunk_size; this server holds the keys range_map[part + 1]; otherwise like ps_create';
DROP VIEW hopper.ps_tables;
DROP FUNCTION hopper.ps_tables_internal();
CREATE FUNCTION hopper.ps_tables_internal(
    OUT name text, OUT num_keys bigint, OUT key_lo bigint[], OUT key_hi bigint[], OUT chunk_size integer,
    OUT num_chunks bigint, OUT consistency text, OUT staleness integer, OUT num_workers integer,
    OUT min_clock bigint, OUT max_clock bigint, OUT memory_bytes bigint, OUT owner oid,
    OUT created_at timestamptz, OUT get_calls bigint, OUT get_keys bigint, OUT add_calls bigint,
    OUT add_keys bigint, OUT clocks bigint, OUT waits bigint, OUT late_adds bigint, OUT part integer,
    OUT map_lo bigint[], OUT map_hi bigint[])
RETURNS SETOF record AS 'MODULE_PATHNAME', 'ps_tables_internal' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 10;
COMMENT ON FUNCTION hopper.ps_tables_internal() IS
'the parameter tables of this database, read from shared memory (used by the view hopper.ps_tables)';

CREATE VIEW hopper.ps_tables AS
SELECT t.name, t.num_keys,
       ARRAY(SELECT pg_catalog.int8range(t.key_lo[i], t.key_hi[i])
             FROM pg_catalog.generate_subscripts(t.key_lo, 1) AS i ORDER BY i) AS key_ranges,
       t.chunk_size, t.num_chunks, t.consistency, t.staleness, t.num_workers, t.min_clock, t.max_clock,
       t.memory_bytes, t.owner::regrole AS owner, t.created_at, t.get_calls, t.get_keys, t.add_calls,
       t.add_keys, t.clocks, t.waits, t.late_adds, t.part,
       CASE WHEN t.part IS NOT NULL THEN
           ARRAY(SELECT pg_catalog.int8range(t.map_lo[i], t.map_hi[i])
                 FROM pg_catalog.generate_subscripts(t.map_lo, 1) AS i ORDER BY i) END AS range_map
FROM hopper.ps_tables_internal() AS t;
COMMENT ON VIEW hopper.ps_tables IS
'parameter tables of this database: settings, slowest and fastest worker clock, shared memory used, call/key counters since creation, late_adds (SparseSSP: chunks first written after a Get too far ahead had read them), and for a part of a table split over servers its part number and the range map';
COMMENT ON FUNCTION hopper.ps_create(text, bigint, integer, text, integer, integer, real) IS
'creates parameter table name with keys 0 .. num_keys-1, every value init_value; chunk c covers keys [c*chunk_size, (c+1)*chunk_size); consistency ''bsp'', ''ssp'' (needs staleness), ''sparse_ssp'' (needs staleness; waits only for the workers that wrote the chunks read) or ''asp''; workers 0 .. num_workers-1';
COMMENT ON FUNCTION hopper.ps_get(text, integer, bigint[]) IS
'values of keys (sorted, unique) as worker sees them: waits until the consistency allows (BSP: every worker at this worker''s clock; SSP(s): every worker at clock - s; SparseSSP(s): every worker that wrote their chunks at clock - s, after ending the worker''s previous iteration if its last Get started one; ASP: never)';
COMMENT ON FUNCTION hopper.ps_add(text, integer, bigint[], real[]) IS
'value += delta for each key (sorted, unique); visible at once under SSP, SparseSSP (where it makes the worker a writer of the keys'' chunks) and ASP, when the last worker finishes the iteration under BSP (a BSP Add from a worker ahead of the slowest waits); not undone by ROLLBACK';
