-- The same training on plain PostgreSQL and on Citus: run on both by test/suites/citus.sh, whose
-- outputs must be identical. Everything printed is engine-neutral: model states as md5 of their
-- bytes (bit for bit), each buffer by its segment index (the position of its dist_key in segment
-- order) rather than its dist_key value, and losses and metrics as exact float8 text (evaluation
-- sums are exact, so merging per-shard sums on Citus gives the same bits as the parallel aggregate).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
CREATE SCHEMA bitwise;
SET search_path = bitwise, public;

CREATE TABLE bw_points AS
SELECT g AS id,
       ARRAY[(g % 4) * 2.0 + sin(g * 1.3) * 0.7, ((g / 4) % 3) * 1.5 + cos(g * 0.7) * 0.7, sin(g * 0.11)]::float8[] AS x,
       (ARRAY['a', 'b', 'c', 'd'])[g % 4 + 1] AS label
FROM generate_series(1, 3000) g;
SELECT hopper.preprocess('bw_points', 'bw_packed', 'label', 'x', buffer_size => 60, num_segments => 4,
                         scale => 'standardize', seed => 11);
CREATE TABLE bw_valid AS SELECT * FROM bw_points WHERE id % 5 = 0;
SELECT hopper.preprocess_validation('bw_valid', 'bw_valid_packed', 'label', 'x', 'bw_packed');

SELECT hopper.load_model_arch('bw_arch', '{"input_dim": 3, "layers": [{"units": 32, "activation": "relu"},
    {"units": 16, "activation": "tanh", "dropout": 0.2}, {"units": 4, "activation": "softmax"}]}', 'deep');
SELECT hopper.load_model_arch('bw_arch', '{"input_dim": 3, "layers": [{"units": 4, "activation": "softmax"}]}', 'linear');
-- 4 configurations (2 architectures x 2 optimizers) on the 4 segments.
SELECT hopper.load_model_selection_table('bw_arch', 'bw_mst4', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9, nesterov=True)', metrics=['accuracy']$$],
    ARRAY['batch_size=16, seed=3']);
-- 6 configurations: 2 models wait in every hop.
SELECT hopper.load_model_selection_table('bw_arch', 'bw_mst6', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='RMSprop(lr=0.005)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.05)', metrics=['accuracy']$$],
    ARRAY['batch_size=32, epochs=2']);
-- 2 configurations: 2 segments idle in every hop.
SELECT hopper.load_model_selection_table('bw_arch', 'bw_mst2', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.2)', metrics=['accuracy']$$], ARRAY['batch_size=8']);

CALL hopper.fit_multiple('bw_packed', 'bw_m4', 'bw_mst4', 4, 'bw_valid_packed', 2);
CALL hopper.fit_multiple('bw_packed', 'bw_m6', 'bw_mst6', 3, 'bw_valid_packed', 3);
CALL hopper.fit_multiple('bw_packed', 'bw_m2', 'bw_mst2', 2);
CALL hopper.fit('bw_packed', 'bw_fit', '{"input_dim": 3, "layers": [{"units": 12, "activation": "relu"}, {"units": 4, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=20', 3,
    validation_table => 'bw_valid_packed');
-- Data-parallel training (model averaging through the hierarchical combine): with 3 levels (on Citus
-- the intermediate level runs on each worker) and as the insertion rule decides.
CALL hopper.fit_data_parallel('bw_packed', 'bw_dp3', '{"input_dim": 3, "layers": [{"units": 24, "activation": "relu"}, {"units": 4, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=20', 3, combine_levels => 3);
CALL hopper.fit_data_parallel('bw_packed', 'bw_dp', '{"input_dim": 3, "layers": [{"units": 24, "activation": "relu"}, {"units": 4, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=20', 3);
-- A warm start continues the 4-configuration run.
CALL hopper.fit_multiple('bw_packed', 'bw_m4', 'bw_mst4', 1, warm_start => true);
-- A run of 1 iteration resumed for 2 more from its checkpoints trains exactly the 3 of bw_m6 (6
-- configurations on 4 segments, 2 waiting in every hop, 2 epochs per visit).
CALL hopper.fit_multiple('bw_packed', 'bw_m6_first', 'bw_mst6', 1, 'bw_valid_packed', 3, name => 'bw first');
SELECT run_id AS bw_first FROM hopper.runs WHERE name = 'bw first' \gset
CALL hopper.fit_multiple('bw_packed', 'bw_m6_resumed', 'bw_mst6', 2, 'bw_valid_packed', 3, warm_start_run => :bw_first);

\echo == model states (md5 of every byte)
SELECT run, mst_key, md5(model_state) AS state_md5, length(model_state) AS bytes
FROM (SELECT 'm4' AS run, mst_key, model_state FROM bw_m4 UNION ALL SELECT 'm6', mst_key, model_state FROM bw_m6
      UNION ALL SELECT 'm2', mst_key, model_state FROM bw_m2 UNION ALL SELECT 'fit', mst_key, model_state FROM bw_fit
      UNION ALL SELECT 'dp3', mst_key, model_state FROM bw_dp3 UNION ALL SELECT 'dp', mst_key, model_state FROM bw_dp) s
ORDER BY run, mst_key;
SELECT mst_key, steps, samples_seen FROM bw_m4_info ORDER BY mst_key;
\echo == a resumed run equals an uninterrupted one
SELECT count(*) AS configurations, count(*) FILTER (WHERE a.model_state = b.model_state) AS identical
FROM bw_m6 a JOIN bw_m6_resumed b USING (mst_key);
DO $$ BEGIN
    IF (SELECT count(*) FILTER (WHERE a.model_state = b.model_state) FROM bitwise.bw_m6 a
        JOIN bitwise.bw_m6_resumed b USING (mst_key)) <> 6 THEN
        RAISE EXCEPTION 'the resumed run differs from the uninterrupted one';
    END IF;
END $$;

\echo == buffers by segment index
SELECT dist_keys FROM bw_m6_summary \gset
SELECT pg_catalog.array_position(:'dist_keys'::int[], dist_key) - 1 AS segment, pg_catalog.count(*) AS buffers,
       pg_catalog.md5(pg_catalog.string_agg(buffer_id::text || ':' || pg_catalog.md5(independent_var::text) || pg_catalog.md5(dependent_var::text), ',' ORDER BY buffer_id)) AS contents
FROM bw_packed GROUP BY dist_key ORDER BY 1;
SELECT num_segments, hops_per_iteration, array_length(dist_keys, 1) AS segments FROM bw_m6_summary;

\echo == learning curves (every bit)
SET extra_float_digits = 3;
SELECT mst_key, training_loss, validation_loss, validation_metrics, metrics_iters FROM bw_m4_info ORDER BY mst_key;
SELECT mst_key, training_loss, training_metrics FROM bw_dp_info;
SELECT mst_key, loss, metrics, row_count FROM hopper.evaluate('bw_m6', 'bw_valid_packed') ORDER BY mst_key;
