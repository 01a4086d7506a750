-- Model hopping on plain PostgreSQL trains all the hops of an iteration in one group of processes
-- (src/pg/training/hop_workers.h); with hopper.debug_hops it issues the two statements per hop
-- whose working tables the record reads. Both ways must train bit for bit alike -- states and
-- learning curves for M > S, M = S and M < S (with shuffle, epochs > 1), fit, one process, a warm
-- start -- the group must create no working table, its errors must be the statements' errors, and
-- a cancelled or failed run must leave the next one unharmed.
CREATE SCHEMA test_hop_group;
SET search_path = test_hop_group, public;
SET client_min_messages = warning;

CREATE TABLE hg_points AS
SELECT g AS id, ARRAY[(g % 3) * 3.0 + sin(g * 1.3) * 0.5, ((g % 3) = 1)::int * 2.0 + cos(g) * 0.5]::float8[] AS x,
       (ARRAY['red', 'green', 'blue'])[g % 3 + 1] AS label
FROM generate_series(1, 300) g;
SELECT hopper.preprocess('hg_points', 'hg_packed', 'label', 'x', buffer_size => 20, num_segments => 3,
                         scale => 'standardize', seed => 5);
CREATE TABLE hg_valid AS SELECT * FROM hg_points WHERE id % 5 = 0;
SELECT hopper.preprocess_validation('hg_valid', 'hg_valid_packed', 'label', 'x', 'hg_packed');
SELECT hopper.load_model_arch('hg_arch', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"},
                                                                      {"units": 3, "activation": "softmax"}]}') AS model_id;
-- 5 configurations on 3 segments (M > S), 3 (M = S), 2 (M < S).
SELECT hopper.generate_model_configs('hg_arch', 'hg_mst5', ARRAY[1],
    '{"loss": "categorical_crossentropy", "metrics": ["accuracy"],
      "optimizer_params_list": [{"optimizer": "adam", "learning_rate": [0.01, 0.02, 0.03]},
                                {"optimizer": "sgd", "learning_rate": [0.1, 0.3]}]}', '{"batch_size": 10}');
SELECT hopper.generate_model_configs('hg_arch', 'hg_mst3', ARRAY[1],
    '{"loss": "categorical_crossentropy", "metrics": ["accuracy"],
      "optimizer_params_list": [{"optimizer": "adam", "learning_rate": [0.01, 0.02]},
                                {"optimizer": "sgd", "learning_rate": 0.1}]}', '{"batch_size": 10, "shuffle": true}');
SELECT hopper.generate_model_configs('hg_arch', 'hg_mst2', ARRAY[1],
    '{"loss": "categorical_crossentropy", "metrics": ["accuracy"],
      "optimizer_params_list": [{"optimizer": "adam", "learning_rate": 0.01}, {"optimizer": "sgd", "learning_rate": 0.1}]}',
    '{"batch_size": 10, "epochs": 2}');

-- The working tables every statement per hop creates (__hopper_<pid>_<n>_model_output, ...).
CREATE TABLE hg_ddl (tag text, identity text);
CREATE FUNCTION hg_note_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO test_hop_group.hg_ddl
    SELECT command_tag, object_identity FROM pg_catalog.pg_event_trigger_ddl_commands()
    WHERE object_identity LIKE '%\_\_hopper\_%';
END $$;
CREATE EVENT TRIGGER hg_ddl_end ON ddl_command_end EXECUTE FUNCTION hg_note_ddl();

-- The same run both ways: identical states, identical training and validation curves.
CREATE FUNCTION hg_same(a regclass, b regclass) RETURNS TABLE (models bigint, same_states boolean, same_curves boolean)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        $q$SELECT count(*), bool_and(a.model_state = b.model_state),
                  bool_and(ai.training_loss = bi.training_loss AND ai.training_metrics = bi.training_metrics
                           AND ai.validation_loss IS NOT DISTINCT FROM bi.validation_loss)
           FROM %1$s a JOIN %2$s b USING (mst_key) JOIN %3$s ai USING (mst_key) JOIN %4$s bi USING (mst_key)$q$,
        a, b, a::text || '_info', b::text || '_info');
END $$;

SET hopper.debug_hops = on;
CALL hopper.fit_multiple('hg_packed', 'hg_stmt5', 'hg_mst5', 3, 'hg_valid_packed', 1);
CALL hopper.fit_multiple('hg_packed', 'hg_stmt3', 'hg_mst3', 2, 'hg_valid_packed', 1);
CALL hopper.fit_multiple('hg_packed', 'hg_stmt2', 'hg_mst2', 2);
CALL hopper.fit('hg_packed', 'hg_stmt1', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)'$$, 'batch_size=10', 3);
SELECT count(*) > 0 AS statements_made_working_tables FROM hg_ddl;
TRUNCATE hg_ddl;

SET hopper.debug_hops = off;
CALL hopper.fit_multiple('hg_packed', 'hg_group5', 'hg_mst5', 3, 'hg_valid_packed', 1);
CALL hopper.fit_multiple('hg_packed', 'hg_group3', 'hg_mst3', 2, 'hg_valid_packed', 1);
CALL hopper.fit_multiple('hg_packed', 'hg_group2', 'hg_mst2', 2);
CALL hopper.fit('hg_packed', 'hg_group1', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)'$$, 'batch_size=10', 3);
-- No working table, no training statement: nothing else keeps the group honest about taking over.
SELECT count(*) AS group_working_tables FROM hg_ddl;
SELECT * FROM hg_same('hg_stmt5', 'hg_group5');
SELECT * FROM hg_same('hg_stmt3', 'hg_group3');
SELECT * FROM hg_same('hg_stmt2', 'hg_group2');
SELECT * FROM hg_same('hg_stmt1', 'hg_group1');
SELECT hops_per_iteration, hop_seconds FROM hg_group5_summary;

-- One process (the backend alone) trains the same models.
SET hopper.parallel_segments = 1;
CALL hopper.fit_multiple('hg_packed', 'hg_alone5', 'hg_mst5', 3, 'hg_valid_packed', 1);
RESET hopper.parallel_segments;
SELECT * FROM hg_same('hg_stmt5', 'hg_alone5');

-- A warm start continues alike.
TRUNCATE hg_ddl;
CALL hopper.fit_multiple('hg_packed', 'hg_group5', 'hg_mst5', 2, warm_start => true);
SELECT count(*) AS group_working_tables FROM hg_ddl;
SET hopper.debug_hops = on;
CALL hopper.fit_multiple('hg_packed', 'hg_stmt5', 'hg_mst5', 2, warm_start => true);
SET hopper.debug_hops = off;
SELECT count(*) AS models, bool_and(a.model_state = b.model_state) AS same_after_warm_start
FROM hg_stmt5 a JOIN hg_group5 b USING (mst_key);

-- Errors are the statements' errors, raised in whichever process trains the pair; the next run is
-- unharmed (no shared memory or worker left behind).
\set VERBOSITY terse
SELECT hopper.preprocess('hg_points', 'hg_nan', 'label', 'x', buffer_size => 20, num_segments => 3, seed => 5);
UPDATE hg_nan SET independent_var[1][1] = 'NaN'
WHERE dist_key = (SELECT max(dist_key) FROM hg_nan) AND buffer_id = (SELECT max(buffer_id) FROM hg_nan);
CALL hopper.fit_multiple('hg_nan', 'hg_nan_out', 'hg_mst5', 1);
SET hopper.debug_hops = on;
CALL hopper.fit_multiple('hg_nan', 'hg_nan_out', 'hg_mst5', 1);
SET hopper.debug_hops = off;
-- Cancelled (a run of hours stopped by statement_timeout).
SET statement_timeout = '300ms';
CALL hopper.fit_multiple('hg_packed', 'hg_cancelled', 'hg_mst5', 1000000);
RESET statement_timeout;
\set VERBOSITY default
SELECT to_regclass('hg_nan_out') IS NULL AND to_regclass('hg_cancelled') IS NULL AS no_output_of_failed_runs;
CALL hopper.fit_multiple('hg_packed', 'hg_after', 'hg_mst5', 3, 'hg_valid_packed', 1);
SELECT * FROM hg_same('hg_alone5', 'hg_after');

DROP EVENT TRIGGER hg_ddl_end;
DROP SCHEMA test_hop_group CASCADE;
