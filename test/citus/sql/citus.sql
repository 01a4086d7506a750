-- hopper on Citus (a coordinator and 2 workers): packed tables distributed one segment per shard or
-- per worker, the working tables of a run, evaluation, and nothing left behind on any node.
-- Run by test/suites/citus.sh against the coordinator of test/citus-cluster.sh.
CREATE SCHEMA test_citus;
SET search_path = test_citus, public;
SET client_min_messages = warning;

CREATE TABLE cz_points AS
SELECT g AS id, ARRAY[(g % 3) * 3.0 + sin(g * 1.3) * 0.5, ((g % 3) = 1)::int * 2.0 + cos(g) * 0.5]::float8[] AS x,
       (ARRAY['red', 'green', 'blue'])[g % 3 + 1] AS label
FROM generate_series(1, 400) g;

-- One segment per shard: 4 shards over the 2 workers, each segment's dist_key in its own shard.
SELECT hopper.preprocess('cz_points', 'cz_packed', 'label', 'x', buffer_size => 20, num_segments => 4, seed => 5);
SELECT citus_table_type, distribution_column, shard_count FROM citus_tables WHERE table_name = 'cz_packed'::regclass;
SELECT count(DISTINCT nodename) AS workers, count(*) AS shards FROM citus_shards WHERE table_name = 'cz_packed'::regclass;
SELECT count(DISTINCT dist_key) AS segments, count(DISTINCT get_shard_id_for_distribution_column('cz_packed', dist_key)) AS shards_used,
       count(*) AS buffers, sum(independent_var_shape[1]) AS rows
FROM cz_packed;
-- Float data is stored uncompressed out of line on every shard.
SELECT DISTINCT result AS attstorage FROM run_command_on_shards('cz_packed',
  $$SELECT string_agg(attstorage::text, ',' ORDER BY attname) FROM pg_attribute WHERE attrelid = '%s'::regclass AND attname IN ('independent_var', 'dependent_var')$$);
SELECT num_segments, num_buffers, buffers_per_segment FROM cz_packed_summary;

-- Validation data packed like the training data: same segment count, so colocated with it.
CREATE TABLE cz_valid AS SELECT * FROM cz_points WHERE id % 4 = 0;
SELECT hopper.preprocess_validation('cz_valid', 'cz_valid_packed', 'label', 'x', 'cz_packed');
SELECT a.colocation_id = b.colocation_id AS colocated FROM citus_tables a, citus_tables b
WHERE a.table_name = 'cz_packed'::regclass AND b.table_name = 'cz_valid_packed'::regclass;

-- A distributed source table: its rows are read through a copy ordered by their values (shards come
-- back in any order and ctids repeat between shards), so the same seed packs the same buffers, the
-- ones a plain table holding the rows in that order gives.
CREATE TABLE cz_points_distributed AS SELECT * FROM cz_points;
SELECT create_distributed_table('cz_points_distributed', 'id');
SELECT hopper.preprocess('cz_points_distributed', 'cz_from_distributed', 'label', 'x', buffer_size => 20, num_segments => 4, seed => 5);
CREATE TABLE cz_points_ordered AS SELECT * FROM cz_points ORDER BY x, label;
SELECT hopper.preprocess('cz_points_ordered', 'cz_from_ordered', 'label', 'x', buffer_size => 20, num_segments => 4, seed => 5);
SELECT count(*) AS buffers, sum(a.independent_var_shape[1]) AS rows,
       count(*) FILTER (WHERE a.independent_var IS DISTINCT FROM b.independent_var OR a.dependent_var IS DISTINCT FROM b.dependent_var) AS differing
FROM cz_from_distributed a JOIN cz_from_ordered b USING (dist_key, buffer_id);

-- One segment per worker node.
SELECT hopper.preprocess('cz_points', 'cz_per_worker', 'label', 'x', buffer_size => 20, segment_placement => 'worker');
SELECT num_segments FROM cz_per_worker_summary;
SELECT count(DISTINCT c.nodename) AS workers, count(DISTINCT p.dist_key) AS segments
FROM (SELECT DISTINCT dist_key FROM cz_per_worker) p
JOIN citus_shards c ON c.shardid = get_shard_id_for_distribution_column('cz_per_worker', p.dist_key);
SELECT hopper.preprocess('cz_points', 'cz_bad', 'label', 'x', num_segments => 3, segment_placement => 'worker');
SELECT hopper.preprocess('cz_points', 'cz_bad', 'label', 'x', segment_placement => 'rack');
SELECT count(*) AS leftovers FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE 'cz\_bad%';

-- Model hopping with 5 configurations on 4 segments: one model waits in every hop.
SELECT hopper.load_model_arch('cz_arch', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"},
                                                                      {"units": 3, "activation": "softmax"}]}') AS model_id;
SELECT hopper.load_model_selection_table('cz_arch', 'cz_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.3)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='RMSprop(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='Adam(lr=0.005)', metrics=['accuracy']$$],
    ARRAY['batch_size=10']);
SET hopper.debug_hops = on;
CALL hopper.fit_multiple('cz_packed', 'cz_out', 'cz_mst', 2, 'cz_valid_packed', 1);
RESET hopper.debug_hops;
SELECT mst_key, status, array_length(training_loss, 1) AS evaluations, validation_metrics_final > 0.9 AS learned
FROM cz_out_info ORDER BY mst_key;
-- The hop record: 5 hops per iteration, each model trains on every segment once per iteration and
-- waits once; no segment trains two models at once.
SELECT iteration, count(*) FILTER (WHERE statement = 'train') AS trained, count(*) FILTER (WHERE statement = 'wait') AS waited,
       count(DISTINCT hop) AS hops, count(DISTINCT (mst_key, dist_key)) FILTER (WHERE statement = 'train') AS pairs
FROM cz_out_hops GROUP BY iteration ORDER BY iteration;
SELECT count(*) AS collisions FROM (SELECT iteration, hop, dist_key FROM cz_out_hops WHERE statement = 'train'
                                   GROUP BY 1, 2, 3 HAVING count(*) > 1) c;
-- Segments are in ascending dist_key order (as on plain PostgreSQL), numbered node by node: of the 4
-- moves from segment s to s + 1 (and 3 back to 0) only 2 cross between the workers.
SELECT s.dist_keys = (SELECT array_agg(k ORDER BY k) FROM unnest(s.dist_keys) k) AS ascending, num_segments, hops_per_iteration,
       (SELECT count(*) FROM unnest(s.dist_keys) WITH ORDINALITY AS a(k, i)
          JOIN unnest(s.dist_keys) WITH ORDINALITY AS b(k, i) ON b.i = a.i % 4 + 1
          JOIN citus_shards ca ON ca.shardid = get_shard_id_for_distribution_column('cz_packed', a.k)
          JOIN citus_shards cb ON cb.shardid = get_shard_id_for_distribution_column('cz_packed', b.k)
         WHERE ca.nodename <> cb.nodename) AS moves_between_workers
FROM cz_out_summary s;
-- evaluate on Citus (per-shard partial sums merged on the coordinator) agrees with the run's figures.
SELECT e.mst_key, abs(e.loss - i.validation_loss_final) < 1e-9 AS same_loss, e.row_count
FROM hopper.evaluate('cz_out', 'cz_valid_packed') e JOIN cz_out_info i USING (mst_key) ORDER BY mst_key;
SELECT hopper.predict('cz_out', 'cz_valid', 'id', 'x', 'cz_predicted', mst_key => 1);
SELECT count(*) AS rows, avg((p.estimated_label = v.label)::int) > 0.9 AS accurate FROM cz_predicted p JOIN cz_valid v USING (id);
-- A packed table left on the coordinator (undistributed) trains as on one server, in one group of
-- processes; its validation table, which preprocess_validation distributes, is evaluated by
-- statements: the group's parallel workers cannot read a Citus table ("cannot use 2PC in
-- transactions involving multiple servers", a Citus sweep). The same models as the distributed run.
SELECT hopper.preprocess('cz_points', 'cz_local_packed', 'label', 'x', buffer_size => 20, num_segments => 4, seed => 5);
SELECT undistribute_table('cz_local_packed');
CALL hopper.fit_multiple('cz_local_packed', 'cz_local_out', 'cz_mst', 2, 'cz_valid_packed', 1);
SELECT count(*) AS models,
       bool_and(hopper.model_weights(l.model_state) = hopper.model_weights(d.model_state)) AS same_models,
       bool_and(abs(li.validation_loss_final - di.validation_loss_final) < 1e-9) AS same_validation_loss
FROM cz_local_out l JOIN cz_out d USING (mst_key) JOIN cz_local_out_info li USING (mst_key) JOIN cz_out_info di USING (mst_key);
-- A packed table Citus manages without distributing it by dist_key (here a reference table) trains
-- in the backend alone: its parallel workers cannot read it ("cannot use 2PC ...", a Citus sweep).
-- The same models as the distributed run.
SELECT hopper.preprocess('cz_points', 'cz_ref_packed', 'label', 'x', buffer_size => 20, num_segments => 4, seed => 5);
SELECT undistribute_table('cz_ref_packed');
SELECT create_reference_table('cz_ref_packed');
CALL hopper.fit_multiple('cz_ref_packed', 'cz_ref_out', 'cz_mst', 2, 'cz_valid_packed', 1);
SELECT count(*) AS models, bool_and(hopper.model_weights(r.model_state) = hopper.model_weights(d.model_state)) AS same_models
FROM cz_ref_out r JOIN cz_out d USING (mst_key);
-- Numeric columns named one by one in a distributed source (no NULLs: packed as numbers). Checking
-- for NULLs failed there ("a column definition list is required", a Citus sweep).
CREATE TABLE cz_cols AS SELECT id, x[1] AS a, x[2] AS b, label FROM cz_points;
SELECT create_distributed_table('cz_cols', 'id');
SELECT hopper.preprocess('cz_cols', 'cz_cols_packed', 'label', 'a, b', num_segments => 2, seed => 5);
SELECT num_rows, scale, feature_recipe IS NULL AS as_numbers FROM cz_cols_packed_summary;
-- A coordinator table stored by Citus's columnar access method has no TID scans: preprocess packs
-- it through an ordered copy ("UPDATE and CTID scans not supported for ColumnarScan", a Citus
-- sweep), as a distributed table: the buffers of the same rows ordered.
CREATE EXTENSION IF NOT EXISTS citus_columnar;
SET search_path = test_citus, public;  -- the extension's script leaves the session's changed
CREATE TABLE cz_columnar (LIKE cz_points) USING columnar;
INSERT INTO cz_columnar SELECT * FROM cz_points;
SELECT hopper.preprocess('cz_columnar', 'cz_columnar_packed', 'label', 'x', buffer_size => 20, num_segments => 4, seed => 5);
SELECT count(*) AS buffers, count(*) FILTER (WHERE c.independent_var = h.independent_var
                                              AND c.dependent_var = h.dependent_var) AS same
FROM cz_columnar_packed c JOIN cz_from_ordered h USING (dist_key, buffer_id);
-- Packing and training are the coordinator's: called on a worker (Citus MX), they say so up front
-- instead of Citus's XX000 "operation is not allowed on this node" halfway, or a summary table
-- that "does not exist" (a Citus sweep).
SELECT success, result FROM run_command_on_workers(
    $$SELECT hopper.preprocess('cz_points_distributed', 'cz_on_worker', 'label', 'x')$$) ORDER BY nodeport;
SELECT success, result FROM run_command_on_workers(
    $$CALL hopper.fit('cz_cols_packed', 'cz_on_worker', '{"layers": [{"units": 2, "activation": "softmax"}]}')$$)
ORDER BY nodeport;
-- Scoring rows by a registered model's name: the registry is on the coordinator, and Citus runs a
-- select list over a distributed table on its shards, where the model is not known -- said so with
-- the way out; the rows of a MATERIALIZED CTE are scored on the coordinator, as hopper.predict does.
SELECT hopper.create_model('cz-model') > 0 AS created;
SELECT hopper.register_model_version('cz-model',
    (SELECT c.uuid FROM hopper.latest_checkpoints c JOIN hopper.runs r USING (run_id)
     WHERE r.model_output_table ~ '(^|[.])cz_out$' AND c.mst_key = 1)) AS version;
SELECT hopper.predict_class('cz-model', d.x) FROM cz_points_distributed d WHERE d.id = 4;
-- A worker's own registry tables are never read: a role that can log in on a worker could create a
-- model of the name there, and the coordinator's rows were then scored by it (a hostile review).
-- hopper refuses to create one there, and a row put there by hand changes nothing.
SELECT success, result FROM run_command_on_workers($$SELECT hopper.create_model('cz-model')$$) ORDER BY nodeport;
SELECT success FROM run_command_on_workers($$INSERT INTO hopper.models (name) VALUES ('cz-model')$$);
SELECT hopper.predict_class('cz-model', d.x) FROM cz_points_distributed d WHERE d.id = 4;
SELECT success FROM run_command_on_workers($$DELETE FROM hopper.models WHERE name = 'cz-model'$$);
WITH r AS MATERIALIZED (SELECT * FROM cz_points_distributed)
SELECT count(*) AS scored, count(*) FILTER (WHERE hopper.predict_class('cz-model', r.x) = p.estimated_label::text) AS as_predict
FROM r JOIN cz_predicted p USING (id);

-- The hierarchical combine: without a topology table, the shards' placement is the topology (group =
-- node: 2 groups of 2 segments); the intermediate level runs once per worker, and only its states
-- travel to the coordinator: half the bytes of 2 levels, the same result.
SELECT levels, producers, decision ->> 'groups' AS groups, decision ->> 'nodes' AS nodes,
       (SELECT array_agg(v::int ORDER BY v) FROM jsonb_each_text(decision -> 'producers_per_group') AS e(k, v)) AS per_group,
       result ->> 'row_count' AS rows
FROM hopper.hierarchical_combine('cz_packed', 'metrics', '{independent_var, dependent_var}',
                                 model_state => (SELECT model_state FROM cz_out WHERE mst_key = 1), levels => 3);
SELECT two.bytes_crossing_groups = 2 * three.bytes_crossing_groups AS halved,
       abs((two.result ->> 'loss')::float8 - (three.result ->> 'loss')::float8) < 1e-12 AS same_loss
FROM hopper.hierarchical_combine('cz_packed', 'metrics', '{independent_var, dependent_var}',
                                 model_state => (SELECT model_state FROM cz_out WHERE mst_key = 1), levels => 2) AS two,
     hopper.hierarchical_combine('cz_packed', 'metrics', '{independent_var, dependent_var}',
                                 model_state => (SELECT model_state FROM cz_out WHERE mst_key = 1), levels => 3) AS three;
-- Data-parallel training averages the copies the same way: 3 levels give the same model as 2.
CALL hopper.fit_data_parallel('cz_packed', 'cz_dp3', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=10', 2, combine_levels => 3);
CALL hopper.fit_data_parallel('cz_packed', 'cz_dp2', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=10', 2, combine_levels => 2);
SELECT a.model_state = b.model_state AS identical, i.training_loss[2] < i.training_loss[1] AS learning
FROM cz_dp3 a, cz_dp2 b, cz_dp3_info i;

-- Settings the training reads on the workers go with the statements: a segment cache too small for
-- 2 epochs fails there, and the run leaves nothing behind on any node.
CREATE TABLE cz_wide AS SELECT g AS id, array_fill(1.0::float8, ARRAY[3000]) AS x, (g % 2)::text AS label
FROM generate_series(1, 200) g;
SELECT hopper.preprocess('cz_wide', 'cz_wide_packed', 'label', 'x', buffer_size => 100, num_segments => 2);
SET hopper.segment_cache_mb = 1;
\set VERBOSITY terse
CALL hopper.fit('cz_wide_packed', 'cz_wide_model', '{"input_dim": 3000, "layers": [{"units": 2, "activation": "softmax"}]}',
                '', 'epochs=2', 1);
\set VERBOSITY default
RESET hopper.segment_cache_mb;
SELECT count(*) AS outputs FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE 'cz\_wide\_model%';
SELECT nodeid, result AS working_tables
FROM run_command_on_all_nodes($$SELECT count(*) FROM pg_class WHERE relname LIKE '\_\_hopper%'$$) ORDER BY nodeid;
-- ... and a run inside a transaction block that is rolled back leaves nothing either.
BEGIN;
CALL hopper.fit('cz_packed', 'cz_rolled_back', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 2);
ROLLBACK;
SELECT nodeid, result AS working_tables
FROM run_command_on_all_nodes($$SELECT count(*) FROM pg_class WHERE relname LIKE '\_\_hopper%' OR relname LIKE 'cz\_rolled%'$$) ORDER BY nodeid;
SELECT count(*) AS prepared_transactions FROM pg_prepared_xacts;
