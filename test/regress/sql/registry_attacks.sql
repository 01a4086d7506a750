-- Two unprivileged roles attacking each other through plain INSERT, UPDATE and DELETE on every table
-- of hopper's registry (not through its functions, which check the same things). Mallory tries to
-- plant a model in Alice's run, to give rows away, to rewrite what others rely on, and to remove or
-- change Alice's rows; Alice tries to corrupt a checkpoint Bob registered. Each attempt must fail,
-- and Alice's run must read as before. In a database of its own.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS hopper_registry_attacks;
CREATE DATABASE hopper_registry_attacks;
\c hopper_registry_attacks
CREATE EXTENSION hopper;
SET client_min_messages = warning;
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE stmt;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN 'ok, ' || n || ' rows';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f-]{27}', '<uuid>', 'g');
END $$;
DROP ROLE IF EXISTS hopper_att_alice;
DROP ROLE IF EXISTS hopper_att_bob;
DROP ROLE IF EXISTS hopper_att_mallory;
CREATE ROLE hopper_att_alice;
CREATE ROLE hopper_att_bob;
CREATE ROLE hopper_att_mallory;
GRANT USAGE ON SCHEMA hopper TO hopper_att_alice, hopper_att_bob, hopper_att_mallory;
GRANT CREATE, USAGE ON SCHEMA public TO hopper_att_alice, hopper_att_bob, hopper_att_mallory;
GRANT EXECUTE ON FUNCTION try(text) TO PUBLIC;

-- Alice trains: a run, its trials, metrics and checkpoints, all hers.
SET ROLE hopper_att_alice;
CREATE TABLE alice_src AS SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 120) g;
SELECT hopper.preprocess('alice_src', 'alice_packed', 'y', 'x', buffer_size => 20, num_segments => 2);
CALL hopper.fit('alice_packed', 'alice_m', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 2, name => 'alice run');
SELECT hopper.create_model('alice-model');
RESET ROLE;
SELECT run_id AS alice_run, (SELECT trial_id FROM hopper.trials WHERE run_id = r.run_id) AS alice_trial
FROM hopper.runs r WHERE name = 'alice run' \gset
SELECT checkpoint_id AS alice_ckpt, uuid AS alice_uuid FROM hopper.latest_checkpoints WHERE run_id = :alice_run \gset
-- What Alice's run looks like before the attacks.
CREATE TABLE before AS
SELECT mst_key, checkpoint_id, iteration, searcher_value FROM hopper.best_checkpoints WHERE run_id = :alice_run;

-- ---- Mallory plants a checkpoint with a winning score in Alice's run ----
SET ROLE hopper_att_mallory;
-- (a) a checkpoint under Alice's training task
SELECT try(format($$INSERT INTO hopper.checkpoints (task_id, format, storage, state) VALUES (%s, 'hopper_model_state_v1', 'database', 'ACTIVE')$$, :alice_trial));
-- ... or written as Alice outright
SELECT try($$INSERT INTO hopper.checkpoints (format, storage, owner) VALUES ('x', 'database', 'hopper_att_alice')$$);
-- (b) her own task and checkpoint, then the checkpoint moved to Alice's task, or given to Alice
SELECT hopper.create_task('IMPORT') AS mallory_task \gset
SELECT try(format($$INSERT INTO hopper.checkpoints (task_id, format, storage, state) VALUES (%s, 'hopper_model_state_v1', 'database', 'ACTIVE')$$, :mallory_task));
SELECT checkpoint_id AS mallory_ckpt FROM hopper.checkpoints WHERE owner = 'hopper_att_mallory' \gset
SELECT try(format($$UPDATE hopper.checkpoints SET task_id = %s WHERE checkpoint_id = %s$$, :alice_trial, :mallory_ckpt));
SELECT try(format($$UPDATE hopper.checkpoints SET owner = 'hopper_att_alice' WHERE checkpoint_id = %s$$, :mallory_ckpt));
SELECT try(format($$UPDATE hopper.tasks SET owner = 'hopper_att_alice' WHERE task_id = %s$$, :mallory_task));
SELECT try(format($$UPDATE hopper.tasks SET task_type = 'TRAINING' WHERE task_id = %s$$, :mallory_task));
-- (c) its training facts pointing at Alice's trial (the checkpoint's task must be that trial)
SELECT try(format($$INSERT INTO hopper.checkpoint_training (checkpoint_id, trial_id, iteration, searcher_value, signed_searcher_value) VALUES (%s, %s, 99, 1, -1)$$, :mallory_ckpt, :alice_trial));
-- (d) a trial of her own under Alice's run, and metrics for Alice's trial
SELECT hopper.create_task('IMPORT') AS mallory_task2 \gset
SELECT try(format($$INSERT INTO hopper.trials (trial_id, run_id, mst_key, model_arch, compile_params, fit_params, model_config, hparams) VALUES (%s, %s, 99, '{}', '', '', '{}', '{}')$$, :mallory_task2, :alice_run));
SELECT try(format($$INSERT INTO hopper.trial_metrics (trial_id, iteration, steps_completed, training_metrics) VALUES (%s, 99, 1, '{}')$$, :alice_trial));
-- (e) a run of her own, then given to Alice; or her trial moved into Alice's run
SELECT try($$INSERT INTO hopper.run_records (method, source_table, model_output_table, num_iterations, metrics_compute_frequency, checkpoint_frequency, searcher_metric, smaller_is_better, data) VALUES ('fit', 's', 'o', 1, 1, 1, 'loss', true, '{}')$$);
SELECT run_id AS mallory_run FROM hopper.run_records WHERE owner = 'hopper_att_mallory' \gset
SELECT try(format($$INSERT INTO hopper.trials (trial_id, run_id, mst_key, model_arch, compile_params, fit_params, model_config, hparams) VALUES (%s, %s, 1, '{}', '', '', '{}', '{}')$$, :mallory_task2, :mallory_run));
SELECT try(format($$UPDATE hopper.trials SET run_id = %s WHERE trial_id = %s$$, :alice_run, :mallory_task2));
SELECT try(format($$UPDATE hopper.run_records SET owner = 'hopper_att_alice' WHERE run_id = %s$$, :mallory_run));
SELECT try(format($$UPDATE hopper.runs SET owner = 'hopper_att_alice' WHERE run_id = %s$$, :mallory_run));

-- ---- Mallory changes or removes Alice's rows: RLS hides them from UPDATE and DELETE ----
SELECT try(format($$UPDATE hopper.runs SET description = 'mine', state = 'COMPLETED' WHERE run_id = %s$$, :alice_run));
SELECT try(format($$UPDATE hopper.runs SET description = 'mine' WHERE run_id = %s$$, :alice_run));
SELECT try(format($$UPDATE hopper.run_records SET searcher_metric = 'loss' WHERE run_id = %s$$, :alice_run));
SELECT try(format($$UPDATE hopper.trials SET status = 'diverged' WHERE trial_id = %s$$, :alice_trial));
SELECT try(format($$UPDATE hopper.trial_metrics SET searcher_value = -1e9 WHERE trial_id = %s$$, :alice_trial));
SELECT try(format($$UPDATE hopper.checkpoint_training SET signed_searcher_value = -1e9 WHERE trial_id = %s$$, :alice_trial));
SELECT try(format($$UPDATE hopper.checkpoints SET metadata = '{"x": 1}' WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$UPDATE hopper.checkpoints SET version_count = 7 WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try($$UPDATE hopper.models SET description = 'mine' WHERE name = 'alice-model'$$);
SELECT try(format($$DELETE FROM hopper.checkpoint_chunks WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$INSERT INTO hopper.checkpoint_chunks (checkpoint_id, chunk_no, data) VALUES (%s, 99, '\x00')$$, :alice_ckpt));
SELECT try(format($$DELETE FROM hopper.checkpoint_training WHERE trial_id = %s$$, :alice_trial));
SELECT try(format($$DELETE FROM hopper.trial_metrics WHERE trial_id = %s$$, :alice_trial));
SELECT try(format($$DELETE FROM hopper.trials WHERE trial_id = %s$$, :alice_trial));
SELECT try(format($$DELETE FROM hopper.checkpoints WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$DELETE FROM hopper.runs WHERE run_id = %s$$, :alice_run));
SELECT try(format($$DELETE FROM hopper.tasks WHERE task_id = %s$$, :alice_trial));
SELECT try($$DELETE FROM hopper.models WHERE name = 'alice-model'$$);
SELECT try($$DELETE FROM hopper.output_tables WHERE owner = 'hopper_att_alice'$$);
-- ... nor add to Alice's model, nor claim her tables.
SELECT try(format($$INSERT INTO hopper.model_versions (model_id, checkpoint_id) SELECT model_id, %s FROM hopper.models WHERE name = 'alice-model'$$, :alice_ckpt));
SELECT try($$INSERT INTO hopper.output_tables (token, kind, schema_name, table_name, owner) VALUES (gen_random_uuid(), 'model', 'public', 'alice_m', 'hopper_att_alice')$$);
SELECT try($$UPDATE hopper.output_tables SET table_name = 'x'$$);
-- Her own model may hold versions of Alice's checkpoint (that is what registering is), but only as hers.
SELECT hopper.create_model('mallory-model');
SELECT try(format($$INSERT INTO hopper.model_versions (model_id, checkpoint_id, owner) SELECT model_id, %s, 'hopper_att_alice' FROM hopper.models WHERE name = 'mallory-model'$$, :alice_ckpt));
SELECT try(format($$INSERT INTO hopper.model_versions (model_id, checkpoint_id) SELECT model_id, %s FROM hopper.models WHERE name = 'mallory-model'$$, :alice_ckpt));
SELECT try($$UPDATE hopper.model_versions SET owner = 'hopper_att_alice'$$);
SELECT try($$UPDATE hopper.models SET owner = 'hopper_att_alice' WHERE name = 'mallory-model'$$);
RESET ROLE;

-- ---- Mallory row-locks Alice's checkpoints: the UPDATE policy, which row locks apply, was open to
-- every role (registering rewrote another role's row), so one SELECT ... FOR UPDATE in an open
-- transaction locked every role's checkpoints and stalled their registrations, warm starts,
-- deletions and gc until it ended. Now she locks and updates only her own; registering locks the
-- checkpoint as hopper's owner, through a trigger function she may not attach anywhere ----
SET ROLE hopper_att_mallory;
SELECT count(*) AS alice_checkpoints_read FROM hopper.checkpoints WHERE owner = 'hopper_att_alice';
SELECT count(*) AS locked_for_update FROM (SELECT 1 FROM hopper.checkpoints WHERE owner = 'hopper_att_alice' FOR UPDATE) s;
SELECT count(*) AS locked_for_no_key_update FROM (SELECT 1 FROM hopper.checkpoints WHERE owner = 'hopper_att_alice' FOR NO KEY UPDATE) s;
SELECT count(*) AS locked_for_share FROM (SELECT 1 FROM hopper.checkpoints WHERE owner = 'hopper_att_alice' FOR SHARE) s;
SELECT count(*) AS locked_for_key_share FROM (SELECT 1 FROM hopper.checkpoints WHERE owner = 'hopper_att_alice' FOR KEY SHARE) s;
-- (Nor through the views over them, owned by hopper's owner: locking through a view needs UPDATE on it.)
SELECT try(format($$SELECT 1 FROM hopper.checkpoints_expanded WHERE run_id = %s FOR UPDATE OF checkpoints_expanded$$, :alice_run));
SELECT try($$UPDATE hopper.checkpoints SET state = state WHERE owner = 'hopper_att_alice'$$);
SELECT count(*) AS own_locked FROM (SELECT 1 FROM hopper.checkpoints WHERE owner = 'hopper_att_mallory' FOR UPDATE) s;
-- Registering Alice's checkpoint into her own model still rewrites (locks) its row, in her transaction.
BEGIN;
INSERT INTO hopper.model_versions (model_id, checkpoint_id) SELECT model_id, :alice_ckpt FROM hopper.models WHERE name = 'mallory-model';
SELECT xmin = pg_current_xact_id()::xid AS rewritten_by_registration FROM hopper.checkpoints WHERE checkpoint_id = :alice_ckpt;
ROLLBACK;
-- ... and refuses what it refused (a checkpoint that does not exist, one that is not COMPLETED).
SELECT try($$INSERT INTO hopper.model_versions (model_id, checkpoint_id) SELECT model_id, -1 FROM hopper.models WHERE name = 'mallory-model'$$);
SELECT try(format($$INSERT INTO hopper.model_versions (model_id, checkpoint_id) SELECT model_id, %s FROM hopper.models WHERE name = 'mallory-model'$$, :mallory_ckpt));
-- The trigger function runs as hopper's owner: not hers to attach to a table of hers and feed any checkpoint.
CREATE TABLE mallory_versions (checkpoint_id bigint);
SELECT try($$CREATE TRIGGER grab BEFORE INSERT ON mallory_versions FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_lock_checkpoint()$$);
RESET ROLE;
-- Attached by a superuser anyway, it refuses to run anywhere but on hopper.model_versions.
CREATE TRIGGER grab BEFORE INSERT ON mallory_versions FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_lock_checkpoint();
SET ROLE hopper_att_mallory;
SELECT try(format($$INSERT INTO mallory_versions VALUES (%s)$$, :alice_ckpt));
RESET ROLE;
DROP TABLE mallory_versions;
-- Alice still may not delete the checkpoint Mallory registered.
SET ROLE hopper_att_alice;
SELECT try(format($$SELECT hopper.delete_checkpoints(ARRAY['%s'::uuid])$$, :'alice_uuid'));
RESET ROLE;

-- ---- Mallory locks hopper's tables against every role's writes (an open transaction hung every
-- role's hopper calls until it ended): refused above ROW EXCLUSIVE, what her own writes take ----
SET ROLE hopper_att_mallory;
SELECT try($$LOCK TABLE hopper.models, hopper.checkpoints IN ACCESS EXCLUSIVE MODE$$);
SELECT try($$LOCK TABLE hopper.run_records IN SHARE MODE$$);
SELECT try($$LOCK TABLE hopper.runs IN EXCLUSIVE MODE$$);
SELECT try($$LOCK TABLE hopper.tasks IN ROW EXCLUSIVE MODE$$);
-- ... nor through a view of her own (LOCK TABLE locks what a view reads, with its owner's rights),
-- or a view over that view.
CREATE VIEW mallory_pin AS SELECT model_id FROM hopper.models;
CREATE VIEW mallory_pin2 AS SELECT * FROM mallory_pin;
SELECT try($$LOCK TABLE mallory_pin IN ACCESS EXCLUSIVE MODE$$);
SELECT try($$LOCK TABLE mallory_pin2 IN SHARE MODE$$);
-- However deep the views stack (the check stopped at 32 levels; 33 locked hopper.models).
DO $$
BEGIN
    FOR i IN 3..40 LOOP
        EXECUTE format('CREATE VIEW mallory_pin%s AS SELECT * FROM mallory_pin%s', i, i - 1);
    END LOOP;
END $$;
SELECT try($$LOCK TABLE mallory_pin40 IN ACCESS EXCLUSIVE MODE$$);
DO $$
BEGIN
    FOR i IN REVERSE 40..3 LOOP
        EXECUTE format('DROP VIEW mallory_pin%s', i);
    END LOOP;
END $$;
DROP VIEW mallory_pin2, mallory_pin;
RESET ROLE;
-- Their owner may (the superuser running this test).
SELECT try($$LOCK TABLE hopper.models IN ACCESS EXCLUSIVE MODE$$);

-- ---- Alice corrupts a checkpoint of hers that Bob registered ----
SET ROLE hopper_att_bob;
SELECT hopper.create_model('bob-model');
SELECT hopper.register_model_version('bob-model', :'alice_uuid') AS bob_version;
RESET ROLE;
SET ROLE hopper_att_alice;
SELECT try(format($$UPDATE hopper.checkpoints SET checksum = 'sha256:00' WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$UPDATE hopper.checkpoints SET size_bytes = 1 WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$UPDATE hopper.checkpoints SET steps_completed = 0 WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$UPDATE hopper.checkpoints SET metadata = '{"data": {"response_type": "regression"}}' WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$UPDATE hopper.checkpoints SET owner = 'hopper_att_bob' WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$UPDATE hopper.checkpoints SET state = 'ERROR' WHERE checkpoint_id = %s$$, :alice_ckpt));
SELECT try(format($$DELETE FROM hopper.checkpoints WHERE checkpoint_id = %s$$, :alice_ckpt));
-- ... nor through her run's record of how its data was packed, which Bob's version predicts by
-- (class values, scaling: it was accepted, and swapped his version's labels), nor by dropping it.
SELECT try(format($$UPDATE hopper.run_records SET data = data || '{"class_values": ["2", "1", "0"]}' WHERE run_id = %s$$, :alice_run));
SELECT try(format($$UPDATE hopper.run_records SET data = NULL WHERE run_id = %s$$, :alice_run));
SELECT try(format($$DELETE FROM hopper.run_records WHERE run_id = %s$$, :alice_run));
-- Her own unregistered, completed checkpoint: payload facts fixed too (a checkpoint is what it was).
SELECT try(format($$UPDATE hopper.checkpoints SET checksum = 'sha256:00' WHERE task_id = %s AND checkpoint_id <> %s$$, :alice_trial, :alice_ckpt));
-- What she may still do with her own rows: describe them.
SELECT try(format($$UPDATE hopper.runs SET description = 'tuned' WHERE run_id = %s$$, :alice_run));
SELECT try(format($$UPDATE hopper.trials SET status = 'completed' WHERE trial_id = %s$$, :alice_trial));
RESET ROLE;

-- ---- Alice's run reads as before; Bob's version still loads ----
SELECT count(*) AS changed_best_checkpoints FROM (
    SELECT mst_key, checkpoint_id, iteration, searcher_value FROM hopper.best_checkpoints WHERE run_id = :alice_run
    EXCEPT SELECT * FROM before) d;
SELECT count(*) AS trials_in_alice_run FROM hopper.trials WHERE run_id = :alice_run;
SELECT count(*) AS checkpoints_in_alice_run FROM hopper.checkpoints_expanded WHERE run_id = :alice_run;
SELECT description, state FROM hopper.runs WHERE run_id = :alice_run;
SELECT length(hopper.model_version_state('bob-model', 1)) > 0 AS bob_version_loads;
SELECT owner, count(*) FROM hopper.checkpoints GROUP BY owner ORDER BY owner;
-- ---- Mallory's own table with a trigger: hopper's guards then run at trigger depth 2 ----
-- (issue 25) A depth check let her rewrite anyone's registration counters: a count of 0 on the
-- checkpoint Bob registered made Alice's routine gc delete it (Bob's version then unusable), a huge
-- one on another made it undeletable. Whether a checkpoint is registered now comes from
-- hopper.model_versions alone, and every other depth-2 write is held to the same rules as a plain one.
SELECT checkpoint_id AS alice_other_ckpt FROM hopper.checkpoints_expanded
WHERE run_id = :alice_run AND checkpoint_id <> :alice_ckpt ORDER BY iteration LIMIT 1 \gset
SET ROLE hopper_att_mallory;
CREATE TABLE mallory_log (n serial, result text);
CREATE TABLE mallory_bait (registered bigint, other bigint, run bigint);
CREATE FUNCTION mallory_forge() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
    INSERT INTO mallory_log (result) SELECT try(s) FROM unnest(ARRAY[
        format('UPDATE hopper.checkpoints SET version_count = 0 WHERE checkpoint_id = %s', NEW.registered),
        format('UPDATE hopper.checkpoints SET version_count = 1000000 WHERE checkpoint_id = %s', NEW.other),
        format('UPDATE hopper.checkpoints SET state = ''DELETED'' WHERE checkpoint_id = %s', NEW.registered),
        format('UPDATE hopper.checkpoints SET metadata = ''{"x": 1}'' WHERE checkpoint_id = %s', NEW.other),
        'UPDATE hopper.models SET next_version = 1 WHERE name = ''mallory-model''',
        'UPDATE hopper.models SET next_version = 1000 WHERE name = ''bob-model''',
        'DELETE FROM hopper.model_versions WHERE owner = ''hopper_att_bob''',
        format('UPDATE hopper.run_records SET state = ''ERROR'' WHERE run_id = %s', NEW.run),
        format('DELETE FROM hopper.checkpoint_chunks WHERE checkpoint_id = %s', NEW.registered),
        -- her own trial naming Alice's checkpoint as its warm-start source (gc kept those)
        format('UPDATE hopper.trials SET warm_start_checkpoint_id = %s', NEW.other)]) WITH ORDINALITY AS u(s, i)
    ORDER BY i;
    RETURN NULL;
END $f$;
CREATE TRIGGER mallory_forge AFTER INSERT ON mallory_bait FOR EACH ROW EXECUTE FUNCTION mallory_forge();
INSERT INTO mallory_bait VALUES (:alice_ckpt, :alice_other_ckpt, :alice_run);
SELECT n, result FROM mallory_log ORDER BY n;
RESET ROLE;
-- Alice's routine gc, keeping nothing it need not: the checkpoint Bob registered stays, the other goes.
SET ROLE hopper_att_alice;
SELECT checkpoint_uuid = :'alice_uuid' AS registered_one, iteration
FROM hopper.gc_checkpoints(:alice_run, keep_best_per_run => 0, keep_latest_per_configuration => 0);
SELECT try(format($$SELECT hopper.delete_checkpoints(ARRAY['%s'::uuid])$$, :'alice_uuid'));
RESET ROLE;
SELECT state, version_count FROM hopper.checkpoints_expanded WHERE run_id = :alice_run ORDER BY iteration;
-- Bob's version still loads and scores.
SET ROLE hopper_att_bob;
CREATE TABLE bob_src AS SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x FROM generate_series(1, 30) g;
SELECT length(hopper.model_version_state('bob-model', 1)) > 0 AS bob_version_loads;
SELECT hopper.materialize_model_version('bob-model', 'bob_m', 1);
SELECT hopper.predict('bob_m', 'bob_src', 'id', 'x', 'bob_scored');
SELECT count(*) FILTER (WHERE estimated_y IS NOT NULL) AS bob_rows_scored FROM bob_scored;
RESET ROLE;

-- Mallory takes the name of the architecture table Alice is about to load into, with a trigger that
-- would run as whoever inserts (deleting Alice's model with her rights, or, for a superuser, anything).
-- hopper.load_model_arch and delete_model_arch write only into a table of the caller's own.
SET ROLE hopper_att_mallory;
CREATE TABLE arch_trigger_log (who name);
GRANT INSERT ON arch_trigger_log TO PUBLIC;
CREATE TABLE shared_archs (model_id serial PRIMARY KEY, model_arch jsonb NOT NULL, name text, description text,
                           model_weights bytea);
GRANT SELECT, INSERT, DELETE ON shared_archs TO PUBLIC;
GRANT USAGE ON SEQUENCE shared_archs_model_id_seq TO PUBLIC;
INSERT INTO shared_archs (model_arch) VALUES ('{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}');
CREATE FUNCTION plant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.arch_trigger_log VALUES (current_user);
    PERFORM hopper.delete_model('alice-model');
    RETURN COALESCE(NEW, OLD);
END $$;
CREATE TRIGGER plant BEFORE INSERT OR DELETE ON shared_archs FOR EACH ROW EXECUTE FUNCTION plant();
RESET ROLE;
SET ROLE hopper_att_alice;
SELECT try($$SELECT hopper.load_model_arch('shared_archs', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}')$$);
SELECT try($$SELECT hopper.delete_model_arch('shared_archs', 1)$$);
SELECT count(*) AS alice_models FROM hopper.models WHERE name = 'alice-model';
RESET ROLE;
SELECT count(*) AS trigger_ran FROM arch_trigger_log;
-- Her own table she may load into again and again.
SET ROLE hopper_att_alice;
SELECT hopper.load_model_arch('alice_archs', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}') AS first_id,
       hopper.load_model_arch('alice_archs', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}') AS second_id;
RESET ROLE;

-- Mallory makes a table where Alice's warm start will look for the hops table of her model, with the
-- mark of Alice's model in its comment and a row for that mark in hopper.output_tables (any role may
-- record one for itself). The warm start is refused before it trains (it trained every iteration
-- and then failed to drop Mallory's table), and records no run.
SELECT (regexp_match(obj_description('alice_m'::regclass, 'pg_class'), '\[hopper:([0-9a-f-]{36})\]'))[1] AS alice_token \gset
SET ROLE hopper_att_mallory;
CREATE TABLE alice_m_hops (note text);
SELECT set_config('hopper_test.alice_token', :'alice_token', false) IS NOT NULL AS token_known;
DO $$ BEGIN
    EXECUTE format('COMMENT ON TABLE alice_m_hops IS %L',
                   'looks like hopper''s [hopper:' || current_setting('hopper_test.alice_token') || ']');
END $$;
INSERT INTO hopper.output_tables (token, kind, schema_name, table_name) VALUES (:'alice_token', 'model_hops', 'public', 'alice_m_hops');
RESET ROLE;
SET ROLE hopper_att_alice;
SELECT try($$CALL hopper.fit('alice_packed', 'alice_m', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                             $q$optimizer='SGD(lr=0.1)', metrics=['accuracy']$q$, '', 2, name => 'alice warm', warm_start => true)$$);
SELECT count(*) AS warm_runs_recorded FROM hopper.runs WHERE name = 'alice warm';
RESET ROLE;

-- The alias history: Mallory may add rows only as the triggers write them -- about her own model,
-- under its name, now; not rows that read, in the history of Alice's model name, as a change to it,
-- nor a change dated to come.
SET ROLE hopper_att_mallory;
SELECT try($$INSERT INTO hopper.model_alias_history (model_id, model_name, alias, from_version, to_version)
             SELECT model_id, 'alice-model', 'champion', 1, 42 FROM hopper.models WHERE name = 'mallory-model'$$);
SELECT try($$INSERT INTO hopper.model_alias_history (model_id, model_name, alias, to_version, change_time)
             SELECT model_id, name, 'champion', 1, now() + interval '1 year' FROM hopper.models WHERE name = 'mallory-model'$$);
SELECT try($$INSERT INTO hopper.model_alias_history (model_id, model_name, alias, to_version)
             SELECT model_id, name, 'champion', 1 FROM hopper.models WHERE name = 'mallory-model'$$);
RESET ROLE;
SELECT count(*) AS history_naming_alice_model FROM hopper.model_alias_history WHERE model_name = 'alice-model';

-- Mallory claims the ids the registry hands out next (INSERT ... OVERRIDING SYSTEM VALUE): with
-- INSERT on the whole tables, every later run, task, checkpoint and model of every other role failed
-- with 23505 until she deleted them. PUBLIC may not insert into an identity column.
SET ROLE hopper_att_mallory;
SELECT try($$INSERT INTO hopper.tasks (task_id, task_type) OVERRIDING SYSTEM VALUE
             SELECT g, 'SQUAT' FROM generate_series((SELECT max(task_id) + 1 FROM hopper.tasks), (SELECT max(task_id) + 50 FROM hopper.tasks)) g$$);
SELECT try($$INSERT INTO hopper.models (model_id, name) OVERRIDING SYSTEM VALUE
             SELECT g, 'squat' || g FROM generate_series((SELECT max(model_id) + 1 FROM hopper.models), (SELECT max(model_id) + 50 FROM hopper.models)) g$$);
SELECT try($$INSERT INTO hopper.runs (run_id) OVERRIDING SYSTEM VALUE VALUES (1000)$$);
SELECT try($$INSERT INTO hopper.run_records (run_id) OVERRIDING SYSTEM VALUE VALUES (1000)$$);
SELECT try($$INSERT INTO hopper.checkpoints (checkpoint_id) OVERRIDING SYSTEM VALUE VALUES (1000)$$);
SELECT try($$INSERT INTO hopper.model_versions (version_id) OVERRIDING SYSTEM VALUE VALUES (1000)$$);
SELECT try($$INSERT INTO hopper.model_alias_history (change_id) OVERRIDING SYSTEM VALUE VALUES (1000)$$);
-- Her own rows still take their ids from the sequences.
SELECT try($$INSERT INTO hopper.tasks (task_type) VALUES ('SQUAT')$$);
RESET ROLE;
SELECT table_name, column_name FROM information_schema.column_privileges
WHERE table_schema = 'hopper' AND grantee = 'PUBLIC' AND privilege_type = 'INSERT'
  AND (table_name, column_name) IN (SELECT c.relname::text, a.attname::text FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                                    WHERE c.relnamespace = 'hopper'::regnamespace AND a.attidentity <> '');
-- Alice's next run, task and model take the next ids as before.
SET ROLE hopper_att_alice;
CALL hopper.fit('alice_packed', 'alice_m2', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 1);
SELECT hopper.create_model('alice-model-2') > 0 AS created;
SELECT hopper.create_task('IMPORT', 'after the squat') > 0 AS created;
RESET ROLE;

-- A superuser may reassign rows (someone left).
UPDATE hopper.models SET owner = 'hopper_att_bob' WHERE name = 'alice-model';
SELECT owner FROM hopper.models WHERE name = 'alice-model';

\c :regress_db
DROP DATABASE hopper_registry_attacks;
DROP ROLE hopper_att_alice;
DROP ROLE hopper_att_bob;
DROP ROLE hopper_att_mallory;
