-- Reliability: what a hostile review of hopper 0.1.0 broke, one section per defect, each a case that
-- failed before its fix (docs/reliability.md lists them).
-- In a database of its own: the registry rows, settings and roles it creates touch no other test.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS hopper_reliability;
CREATE DATABASE hopper_reliability;
\c hopper_reliability
CREATE EXTENSION hopper;
SET client_min_messages = warning;
-- try(): 'ok', or the SQLSTATE and message of the error.
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE pts AS
SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, (g % 3)::text AS y
FROM generate_series(1, 240) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'y', 'x', buffer_size => 20, num_segments => 2, normalizing_const => 5);
\set arch '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}'

-- ==== 1. hopper drops or replaces only tables it can prove it created ========================================
CALL hopper.fit('pts_packed', 'm1', :'arch', $$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, '', 1);
-- A user's table that merely has the name of a sibling survives a warm start, which is refused
-- before it trains (hopper.debug_hops is off: hopper would never write m1_hops itself).
CREATE TABLE m1_hops AS SELECT g AS precious FROM generate_series(1, 5) g;
SELECT try($$CALL hopper.fit('pts_packed', 'm1', '$$ || :'arch' || $$', '', '', 1, warm_start => true)$$);
SELECT count(*) AS precious_rows_kept FROM m1_hops;
SELECT count(*) AS runs_recorded FROM hopper.runs;
DROP TABLE m1_hops;
-- Its own tables it replaces (and the new ones carry a new mark).
SELECT obj_description('m1'::regclass) ~ '^hopper model output of training run 1 .*\[hopper:[0-9a-f-]{36}\]$' AS marked;
CALL hopper.fit('pts_packed', 'm1', :'arch', $$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, '', 1, warm_start => true);
SELECT kind, table_name, run_id FROM hopper.output_tables WHERE table_name LIKE 'm1%' ORDER BY run_id, kind;

-- A model written by materialize_checkpoint has no _info: a user's m2_info stays untouched.
SELECT hopper.materialize_checkpoint((SELECT uuid FROM hopper.latest_checkpoints WHERE run_id = 2), 'm2');
CREATE TABLE m2_info AS SELECT 'mine' AS note;
SELECT try($$CALL hopper.fit('pts_packed', 'm2', '$$ || :'arch' || $$', '', '', 1, warm_start => true)$$);
SELECT note FROM m2_info;
DROP TABLE m2_info;
SELECT try($$CALL hopper.fit('pts_packed', 'm2', '$$ || :'arch' || $$', '', '', 1, warm_start => true)$$);
SELECT count(*) AS m2_info_written FROM m2_info;

-- A table that looks like a model table but was not written by hopper is not replaced.
CREATE TABLE lookalike AS SELECT * FROM m1;
CREATE TABLE lookalike_summary AS SELECT * FROM m1_summary;
SELECT try($$CALL hopper.fit('pts_packed', 'lookalike', '$$ || :'arch' || $$', '', '', 1, warm_start => true)$$);
SELECT count(*) AS lookalike_kept FROM lookalike;
-- Nor is a hopper table whose mark was removed; a renamed one still is hopper's.
COMMENT ON TABLE m2 IS 'my model now';
SELECT try($$CALL hopper.fit('pts_packed', 'm2', '$$ || :'arch' || $$', '', '', 1, warm_start => true)$$);
ALTER TABLE m1 RENAME TO m1_renamed;
ALTER TABLE m1_info RENAME TO m1_renamed_info;
ALTER TABLE m1_summary RENAME TO m1_renamed_summary;
SELECT try($$CALL hopper.fit('pts_packed', 'm1_renamed', '$$ || :'arch' || $$', '', '', 1, warm_start => true)$$);
-- Every table hopper created is in its catalog.
SELECT kind, count(*) FROM hopper.output_tables GROUP BY kind ORDER BY kind;

-- ==== 2. NULLs in a user's tables are the user's data: 22004 naming the table and column ======================
CREATE TABLE null_model AS SELECT * FROM m1_renamed;
UPDATE null_model SET model_state = NULL;
SELECT try($$SELECT * FROM hopper.evaluate('null_model', 'pts_packed')$$);
SELECT try($$SELECT hopper.predict('null_model', 'pts', 'id', 'x', 'null_pred')$$);
CREATE TABLE keyless_model AS SELECT * FROM m1_renamed;
UPDATE keyless_model SET mst_key = NULL;
SELECT try($$SELECT * FROM hopper.evaluate('keyless_model', 'pts_packed')$$);
-- A packed table (a hand-made copy: hopper's own is partitioned and has no place for NULL) with a
-- NULL dist_key, and a summary with NULL fields.
CREATE TABLE copy_packed AS SELECT * FROM pts_packed;
CREATE TABLE copy_packed_summary AS SELECT * FROM pts_packed_summary;
UPDATE copy_packed SET dist_key = NULL WHERE buffer_id = 3;
SELECT try($$CALL hopper.fit('copy_packed', 'never', '$$ || :'arch' || $$', '', '', 1)$$);
SELECT try($$SELECT * FROM hopper.evaluate('m1_renamed', 'copy_packed')$$);
UPDATE copy_packed SET dist_key = 0 WHERE dist_key IS NULL;
UPDATE copy_packed_summary SET response_type = NULL;
SELECT try($$SELECT hopper.preprocess_validation('pts', 'never_valid', 'y', 'x', 'copy_packed')$$);
SELECT try($$SELECT * FROM hopper.evaluate('m1_renamed', 'copy_packed')$$);

-- ==== 3. numbers that are not finite never become a made-up class ============================================
-- A feature too large for float32 (1e300), or one that overflows once scaled: refused.
SELECT try($$SELECT hopper.model_forward(model_state, ARRAY[1e300, 1]::float8[], 5) FROM m1_renamed$$);
SELECT try($$SELECT hopper.model_forward(model_state, ARRAY[1, 1]::float8[], 1e-320) FROM m1_renamed$$);
SELECT try($$SELECT hopper.preprocess('pts', 'tiny_packed', 'y', 'x', normalizing_const => 1e-320)$$);
SELECT count(*) AS tiny_packed_tables FROM pg_class WHERE relname LIKE 'tiny_packed%';
-- Features NULL or 2-dimensional.
SELECT hopper.model_forward(model_state, NULL::float8[], 5) IS NULL AS null_features_null_output FROM m1_renamed;
SELECT try($$SELECT hopper.model_forward(model_state, ARRAY[[1, 2]]::float8[], 5) FROM m1_renamed$$);
-- argmax of NaNs is NULL, not the first position.
SELECT hopper.argmax(ARRAY['NaN', 'NaN']::real[]) AS argmax_nan, hopper.argmax(ARRAY[1, 'NaN', 3]::real[]) AS argmax_some_nan,
       hopper.argmax(ARRAY[1, 3, 2]::real[]) AS argmax;
-- A model that diverged: its predictions are announced as such.
CALL hopper.fit('pts_packed', 'wild', :'arch', $$optimizer='SGD(lr=1e35)'$$, '', 1);
SELECT status FROM wild_info;
SELECT try($$SELECT hopper.predict('wild', 'pts', 'id', 'x', 'wild_pred')$$);
-- model_average of states that are all left out (here: diverged) is NULL, with a WARNING.
SELECT hopper.model_average(model_state, 1) IS NULL AS no_average FROM wild;
-- Once every model diverged the run ends (Keras' TerminateOnNaN), with a NOTICE saying after which
-- iteration, instead of reporting a NaN loss for each of the iterations left; a regression's WARNING
-- on a target packed raw (scale 'none': by default it is standardized for training) also names a
-- target of large values, as the packing NOTICE does.
CREATE TABLE big_target AS SELECT g AS id, ARRAY[g % 7, g % 5]::float8[] AS x, 50000.0 + g * 1000 AS price
FROM generate_series(1, 200) g;
SET client_min_messages = notice;
SELECT hopper.preprocess('big_target', 'big_target_packed', 'price', 'x', num_segments => 1, scale => 'none');
SET client_min_messages = warning;
CALL hopper.fit('big_target_packed', 'big_target_model', '{"input_dim": 2, "layers": [{"units": 1}]}',
                $$loss='mse', optimizer='SGD(lr=0.5)'$$, 'batch_size=8', 6);
SELECT status, array_length(training_loss, 1) AS iterations_reported FROM big_target_model_info;

-- ==== 4. serving scales features exactly as training did ============================================
-- model_forward reads features into float32 and scales them with training's own code: the outputs of
-- every raw row are bit for bit those of its packed row (float32 already, scaled by preprocess, fed
-- with no scaling). Features with many distinct values and standardize scaling: scaling in double
-- precision, as 0.1.0 did, gave 1-ulp differences in about half of them.
CREATE TABLE wavy AS
SELECT g AS id, ARRAY[sin(g) * 37.3 + 100, cos(g * 1.3) * 11.1, g / 7.0]::float8[] AS x, (g % 3)::text AS y
FROM generate_series(1, 300) g;
SELECT hopper.preprocess('wavy', 'wavy_packed', 'y', 'x', buffer_size => 50, num_segments => 1, scale => 'standardize',
                         normalizing_const => 3);
CALL hopper.fit('wavy_packed', 'wavy_m', '{"input_dim": 3, "layers": [{"units": 8, "activation": "tanh"}, {"units": 3, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)'$$, '', 2);
WITH raw AS (
    SELECT hopper.model_forward(m.model_state, w.x, s.normalizing_const, s.feature_center, s.feature_spread) AS out
    FROM wavy w, wavy_m m, wavy_packed_summary s),
packed AS (
    SELECT hopper.model_forward(m.model_state, ARRAY(SELECT pg_catalog.unnest(p.independent_var[r.i:r.i][1:3]))::float8[],
                                1) AS out
    FROM wavy_packed p CROSS JOIN wavy_m m CROSS JOIN LATERAL generate_series(1, array_length(p.independent_var, 1)) r(i))
SELECT (SELECT count(*) FROM raw) AS rows,
       (SELECT count(*) FROM (SELECT out::text FROM raw EXCEPT ALL SELECT out::text FROM packed) d) AS raw_rows_scored_differently;

-- ==== 5. resumed runs train bit for bit as uninterrupted ones ==============================================
SELECT hopper.load_model_arch('archs', :'arch');
SELECT hopper.load_model_selection_table('archs', 'configs', ARRAY[1],
    ARRAY[$$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, $$optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']$$,
          $$optimizer='RMSprop(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=5', 'batch_size=10']);
-- 6 configurations on 2 segments (models wait their turn), 3 iterations straight ...
CALL hopper.fit_multiple('pts_packed', 'straight', 'configs', 3, name => 'straight');
-- ... or 1, then 2 more from the checkpoints of that run (warm_start_run) ...
CALL hopper.fit_multiple('pts_packed', 'first', 'configs', 1, name => 'first');
SELECT run_id AS first_run FROM hopper.runs WHERE name = 'first' \gset
CALL hopper.fit_multiple('pts_packed', 'resumed', 'configs', 2, warm_start_run => :first_run);
-- ... or from its output table (warm_start).
CALL hopper.fit_multiple('pts_packed', 'first', 'configs', 2, warm_start => true);
SELECT count(*) AS configurations,
       count(*) FILTER (WHERE s.model_state = r.model_state) AS same_as_resumed_from_checkpoints,
       count(*) FILTER (WHERE s.model_state = f.model_state) AS same_as_warm_started_output,
       min(hopper.model_state_info(s.model_state) ->> 'iterations') AS iterations
FROM straight s JOIN resumed r USING (mst_key) JOIN first f USING (mst_key);
-- fit and fit_data_parallel too.
CALL hopper.fit('pts_packed', 'fit3', :'arch', $$optimizer='Adam(lr=0.05)'$$, 'batch_size=7', 3);
CALL hopper.fit('pts_packed', 'fit1', :'arch', $$optimizer='Adam(lr=0.05)'$$, 'batch_size=7', 1);
CALL hopper.fit('pts_packed', 'fit1', :'arch', $$optimizer='Adam(lr=0.05)'$$, 'batch_size=7', 2, warm_start => true);
SELECT a.model_state = b.model_state AS fit_resumes_exactly FROM fit3 a, fit1 b;
CALL hopper.fit_data_parallel('pts_packed', 'dp3', :'arch', $$optimizer='Adam(lr=0.05)'$$, 'batch_size=7', 3);
CALL hopper.fit_data_parallel('pts_packed', 'dp1', :'arch', $$optimizer='Adam(lr=0.05)'$$, 'batch_size=7', 1);
CALL hopper.fit_data_parallel('pts_packed', 'dp1', :'arch', $$optimizer='Adam(lr=0.05)'$$, 'batch_size=7', 2, warm_start => true);
SELECT a.model_state = b.model_state AS data_parallel_resumes_exactly FROM dp3 a, dp1 b;

-- ==== 6. a run's state is truthful when read ===============================================================
-- A run that fails in its second iteration (its validation data turned bad after packing) has
-- committed its first; it reads INTERRUPTED at once, without anyone calling mark_interrupted_runs.
SELECT hopper.preprocess_validation('pts', 'bad_valid', 'y', 'x', 'pts_packed');
UPDATE bad_valid SET independent_var[1][1] = 'NaN' WHERE buffer_id = 0;
CALL hopper.fit('pts_packed', 'broken', :'arch', '', '', 3, validation_table => 'bad_valid', metrics_compute_frequency => 2,
                name => 'broken');
SELECT name, state, (SELECT state FROM hopper.run_records r WHERE r.run_id = v.run_id) AS stored_state,
       hopper.run_is_live(run_id) AS live
FROM hopper.runs v WHERE name = 'broken';
SELECT name, state FROM hopper.runs WHERE name IN ('straight', 'first') ORDER BY run_id;

-- ==== 7. limits that protect ===============================================================================
-- Architecture texts and layer lists of absurd size are refused before any work (54000).
SELECT try($$SELECT hopper.load_model_arch('archs', ('{"input_dim": 2, "layers": [' || repeat('{"units": 2},', 400000) || '{"units": 3}]}')::jsonb)$$);
SELECT try($$SELECT hopper.load_model_arch('archs', ('{"input_dim": 2, "layers": [' || repeat('{"units": 2},', 64) || '{"units": 3}]}')::jsonb)$$);
SELECT try($$SELECT hopper.load_model_arch('archs', '{"input_dim": 2, "layers": [{"units": 2000000}]}')$$);
-- Memory: the budget is planned before training, evaluating or scoring (53200).
SET hopper.max_memory_mb = 1;
SELECT try($$CALL hopper.fit('pts_packed', 'too_big', '{"input_dim": 2, "layers": [{"units": 500}, {"units": 500}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$);
SELECT try($$SELECT * FROM hopper.evaluate('m1_renamed', 'pts_packed')$$) AS evaluate_small_model;
-- The review's case: a 16000 x 16000 SGD model passes the 1 GB state limit but took 7 GB to train;
-- with a 24 GB machine's default budget (a quarter: 6 GB) it is refused before any state is built.
SET hopper.max_memory_mb = 6144;
CREATE TABLE wide AS SELECT g AS id, array_fill(g::float8, ARRAY[16000]) AS x, (g % 2)::text AS y FROM generate_series(1, 4) g;
SELECT hopper.preprocess('wide', 'wide_packed', 'y', 'x', num_segments => 1);
SELECT try($$CALL hopper.fit('wide_packed', 'wide_m', '{"input_dim": 16000, "layers": [{"units": 16000}, {"units": 2, "activation": "softmax"}]}', $o$optimizer='SGD(lr=0.1)'$o$, '', 1)$$);
RESET hopper.max_memory_mb;
-- The backstop of a direct call of train_segment: with steps_per_epoch a step is a whole buffer
-- (here 2,000 rows through 4,000 units, about 90 MB), not batch_size rows (1: under 1 MB).
CREATE TABLE tall AS SELECT g AS id, ARRAY[g % 7, g % 5]::float8[] AS x, (g % 2)::text AS y FROM generate_series(1, 2000) g;
SELECT hopper.preprocess('tall', 'tall_packed', 'y', 'x', num_segments => 1, buffer_size => 2000);
CALL hopper.fit('tall_packed', 'tall_m', '{"input_dim": 2, "layers": [{"units": 4000, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}', $o$optimizer='SGD(lr=0.01)'$o$, 'steps_per_epoch=1, batch_size=1', 1);
SET hopper.max_memory_mb = 16;
SELECT try($$SELECT hopper.train_segment(m.model_state, p.independent_var, p.dependent_var, 1, p.dist_key) IS NULL
             FROM tall_m m, tall_packed p$$);
RESET hopper.max_memory_mb;
-- Disk: a packed table is estimated before anything is written (53100): one-hot classes of every
-- row of a table whose labels are all different.
CREATE TABLE many_labels AS SELECT g AS id, ARRAY[g]::float8[] AS x, 'label ' || g AS y FROM generate_series(1, 3000) g;
SET hopper.max_packed_table_mb = 10;
SELECT try($$SELECT hopper.preprocess('many_labels', 'many_packed', 'y', 'x')$$);
SELECT count(*) AS many_packed_tables FROM pg_class WHERE relname LIKE 'many_packed%';
RESET hopper.max_packed_table_mb;

-- ==== 8. a state of format version 1, written by hopper 0.1.0, still loads ==================================
-- (a 3-4-2 relu/softmax network trained with Adam for 6 steps)
CREATE TABLE v1 AS SELECT 1 AS mst_key, '\x484f505045524d5301000000eb01000006000000000000000c000000000000000200000000000000bc38415b8566094006000000000000001a0000000000000002000000000000007b22617263686974656374757265223a7b22696e7075745f64696d223a332c226c6179657273223a5b7b22756e697473223a342c2261637469766174696f6e223a2272656c75222c227573655f62696173223a747275652c22696e697469616c697a6572223a2268655f756e69666f726d222c2264726f706f7574223a302e307d2c7b22756e697473223a322c2261637469766174696f6e223a22736f66746d6178222c227573655f62696173223a747275652c22696e697469616c697a6572223a22676c6f726f745f756e69666f726d222c2264726f706f7574223a302e307d5d7d2c22636f6d70696c65223a7b226c6f7373223a22736f66746d61785f63726f73735f656e74726f7079222c226c6f73735f676976656e223a66616c73652c226f7074696d697a6572223a7b226e616d65223a226164616d222c226c6561726e696e675f72617465223a302e30352c22626574615f31223a302e392c22626574615f32223a302e3939392c22657073696c6f6e223a31652d30372c226465636179223a302e307d2c227765696768745f6465636179223a302e302c226d657472696373223a5b226163637572616379225d2c22746f705f6b223a357d2c22666974223a7b2262617463685f73697a65223a322c2265706f636873223a312c2273656564223a34327d7dea6c94bf8f9400bf76b9293e76bd1f3fdf3427bfb762f73e72abcc3fa871f83ed7d97e3fc605a6bf540defbe27c4c03f9f9919bea1691fbe4b11453e794bdc3dbab3563febf9153f6a6826bd6131c93ea5953dbfd943943f2957e3be9c09933f8199603e819960bee126db3aac95f3bba06b9e3b7b06023dddf1b53bebcb99bb94fd7fbc738decbc008d1a3c5207f53ab9f0b9bc29f428bdd2c0893c768a423c2d91b5bd389a5bbd43d0603c42d060bce46c9ebae86c9e3ac4c3283cc4c328bce0c3053de0c305bd8d608dbc8b608d3cc2c53436a4b3ca36428802365cdf45383ae2dd352ddd193690b82237c8d92738a73a7136f68078357cd85338e519663851dcea37c5d09b37a7b6a239a4798f39ce044038ca0440383c80ea363a80ea36841eed36841eed36839a1238829a1238bb9bbc37b89bbc37b3dc2f61'::bytea AS model_state;
SELECT info ->> 'format_version' AS format_version, info ->> 'layers' AS layers, info ->> 'steps' AS steps,
       info ->> 'iterations' AS iterations
FROM (SELECT hopper.model_state_info(model_state) AS info FROM v1) i;
SELECT array_length(hopper.model_forward(model_state, ARRAY[0.1, -0.2, 0.3]::float8[]), 1) AS outputs FROM v1;
CREATE TABLE three AS SELECT g AS id, ARRAY[g % 2, g % 3, g % 5]::float8[] AS x, (g % 2)::text AS y FROM generate_series(1, 60) g;
SELECT hopper.preprocess('three', 'three_packed', 'y', 'x', buffer_size => 10, num_segments => 1);
SELECT mst_key, row_count, loss > 0 AS has_loss FROM hopper.evaluate('v1', 'three_packed');
-- Transfer learning from it writes a version 2 state that continues its counters.
SELECT hopper.load_model_arch('archs', '{"input_dim": 3, "layers": [{"units": 4, "activation": "relu", "initializer": "he_uniform"}, {"units": 2, "activation": "softmax"}]}',
                              model_weights => (SELECT model_state FROM v1)) AS v1_arch;
SELECT hopper.load_model_selection_table('archs', 'v1_configs', ARRAY[2], ARRAY[$$optimizer='Adam(lr=0.05)'$$],
                                         ARRAY['batch_size=2']);
CALL hopper.fit_multiple('three_packed', 'from_v1', 'v1_configs', 1);
SELECT info ->> 'format_version' AS format_version, info ->> 'steps' AS steps, info ->> 'iterations' AS iterations
FROM (SELECT hopper.model_state_info(model_state) AS info FROM from_v1) i;

-- ==== A type named like a table hopper is about to create ===================================================
-- CREATE TABLE makes a row type of the table's name, so a type of that name (any role that may create
-- in the schema can make one) failed the CREATE with 42710 -- a fit after its every iteration.
-- Refused before any work, naming the table.
CREATE TYPE tq_summary AS ENUM ('a');
CREATE TYPE tqp_p1 AS ENUM ('a');
SELECT count(*) AS runs_before FROM hopper.runs \gset
SELECT try($$CALL hopper.fit('pts_packed', 'tq', '$$ || :'arch' || $$', '', '', 3)$$) AS fit_type_summary;
SELECT count(*) - :runs_before AS runs_recorded FROM hopper.runs;
SELECT try($$SELECT hopper.preprocess('pts', 'tqp', 'y', 'x', buffer_size => 20, num_segments => 2)$$) AS preprocess_type_partition;
SELECT try($$SELECT hopper.preprocess('pts', 'tq_summary', 'y', 'x')$$) AS preprocess_type_output;
SELECT count(*) AS tables_left FROM pg_class WHERE relname LIKE 'tq%' AND relkind IN ('r', 'p');
DROP TYPE tq_summary, tqp_p1;

-- ==== No unlogged relations =================================================================================
-- PostgreSQL 15's crash recovery can fail to start the server after a crash while unlogged relations are
-- created or truncated (BUG #17731, "could not create file ...: File exists"): a kill -9 of a Citus worker's
-- backend during fit_multiple left the worker down. hopper's working tables (created every iteration,
-- truncated every hop on the statement path, which debug_hops takes) and combine's partials are logged.
CREATE TABLE created_relations (relname text, relpersistence "char");
CREATE FUNCTION note_created() RETURNS event_trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO created_relations
    SELECT c.relname, c.relpersistence FROM pg_event_trigger_ddl_commands() d
    JOIN pg_class c ON c.oid = d.objid WHERE d.classid = 'pg_class'::regclass AND c.relkind IN ('r', 'p');
END $$;
CREATE EVENT TRIGGER note_created ON ddl_command_end WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS')
    EXECUTE FUNCTION note_created();
SET hopper.debug_hops = on;
SELECT hopper.load_model_selection_table('archs', 'logged_configs', ARRAY[2],
    ARRAY[$$optimizer='Adam(lr=0.05)'$$, $$optimizer='SGD(lr=0.1)'$$, $$optimizer='SGD(lr=0.01)'$$], ARRAY['batch_size=2']);
CALL hopper.fit_multiple('three_packed', 'logged_run', 'logged_configs', 2);
RESET hopper.debug_hops;
SELECT count(*) FILTER (WHERE relname LIKE '\_\_hopper%') > 0 AS working_tables_made,
       count(*) FILTER (WHERE relpersistence = 'u') AS unlogged
FROM created_relations;
DROP EVENT TRIGGER note_created;

\c :regress_db
DROP DATABASE hopper_reliability;
