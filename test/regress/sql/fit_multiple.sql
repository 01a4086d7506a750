-- hopper.fit_multiple: model hopping over segments. Output tables, metrics frequency, the hop
-- record (every (model, segment) pair once per iteration, never a model on two segments), M < S,
-- M = S, M > S, bit-for-bit agreement with hopper.fit, warm start, transfer learning, and every
-- bad input.
-- Each test file works in its own schema, so test files never see each other's tables.
CREATE SCHEMA test_fit_multiple;
SET search_path = test_fit_multiple, public;
SET client_min_messages = warning;

-- Three well separated classes in two features, packed over 3 segments.
CREATE TABLE fm_points AS
SELECT g AS id, ARRAY[(g % 3) * 3.0 + sin(g * 1.3) * 0.5, ((g % 3) = 1)::int * 2.0 + cos(g) * 0.5]::float8[] AS x,
       (ARRAY['red', 'green', 'blue'])[g % 3 + 1] AS label
FROM generate_series(1, 300) g;
SELECT hopper.preprocess('fm_points', 'fm_packed', 'label', 'x', buffer_size => 20, num_segments => 3,
                         scale => 'standardize', seed => 5);
CREATE TABLE fm_valid AS SELECT * FROM fm_points WHERE id % 5 = 0;
SELECT hopper.preprocess_validation('fm_valid', 'fm_valid_packed', 'label', 'x', 'fm_packed');

SELECT hopper.load_model_arch('fm_arch', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"},
                                                                      {"units": 3, "activation": "softmax"}]}', 'hidden') AS model_id;
SELECT hopper.load_model_arch('fm_arch', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', 'linear') AS model_id;
SELECT hopper.load_model_arch('fm_arch', '{"input_dim": 3, "layers": [{"units": 3, "activation": "softmax"}]}', 'wrong input') AS model_id;

-- The hop record of a run, checked against the schedule's promises for M models on S segments.
CREATE FUNCTION fm_hops_ok(hops regclass, m int, s int, iterations int)
RETURNS TABLE (every_pair_once boolean, one_place_per_model boolean, one_model_per_segment boolean,
               hops_per_iteration boolean, waiting_models boolean, busy_segments boolean,
               starts_where_it_ended boolean, hop_statements boolean)
LANGUAGE plpgsql AS $$
DECLARE
    k int := greatest(m, s);
BEGIN
    RETURN QUERY EXECUTE format($q$
      WITH h AS (SELECT * FROM %1$s), t AS (SELECT * FROM h WHERE statement = 'train'),
           placed AS (SELECT * FROM h WHERE statement IN ('train', 'wait'))
      SELECT
        -- each iteration trains every (mst_key, dist_key) pair exactly once
        (SELECT count(*) = %5$s AND bool_and(n = %2$s * %3$s AND d = n)
           FROM (SELECT count(*) n, count(DISTINCT (mst_key, dist_key)) d FROM t GROUP BY iteration) x)
          AND (SELECT count(DISTINCT (mst_key, dist_key)) = %2$s * %3$s FROM t),
        -- in every hop each model is in exactly one place (training on one segment, or waiting)
        (SELECT bool_and(n = 1) FROM (SELECT count(*) n FROM placed GROUP BY iteration, hop, mst_key) x)
          AND (SELECT bool_and(n = %2$s) FROM (SELECT count(*) n FROM placed GROUP BY iteration, hop) x),
        -- no segment trains two models in one hop
        (SELECT coalesce(bool_and(n = 1), true) FROM (SELECT count(*) n FROM t GROUP BY iteration, hop, dist_key) x),
        -- K = max(M, S) hops per iteration
        (SELECT bool_and(n = %4$s) FROM (SELECT count(DISTINCT hop) n FROM placed GROUP BY iteration) x),
        -- M - S models wait in each hop when M > S, none otherwise
        (SELECT count(*) = %5$s * %4$s * greatest(%2$s - %3$s, 0) FROM h WHERE statement = 'wait'),
        -- min(M, S) segments train in each hop (the others idle when M < S)
        (SELECT bool_and(n = least(%2$s, %3$s)) FROM (SELECT count(*) n FROM t GROUP BY iteration, hop) x),
        -- an iteration starts where the previous one ended (no hop between iterations)
        (SELECT coalesce(bool_and(a.dist_key IS NOT DISTINCT FROM b.dist_key), true)
           FROM placed a JOIN placed b ON b.mst_key = a.mst_key AND b.iteration = a.iteration + 1
          WHERE a.hop = %4$s AND b.hop = 1),
        -- K - 1 hop statements per iteration (the first hop of an iteration is skipped)
        (SELECT count(*) = %5$s * (%4$s - 1) FROM h WHERE statement = 'hop')
    $q$, hops, m, s, k, iterations);
END $$;

-- M > S: 4 configurations (2 architectures x 2 optimizers) on 3 segments.
SELECT hopper.generate_model_configs('fm_arch', 'fm_mst4', ARRAY[1, 2],
    '{"loss": "categorical_crossentropy", "metrics": ["accuracy"],
      "optimizer_params_list": [{"optimizer": "adam", "learning_rate": 0.02}, {"optimizer": "sgd", "learning_rate": 0.3}]}',
    '{"batch_size": 10}');
SET hopper.debug_hops = on;
-- The working tables live in the output's schema (here, with debug_hops): another role who knows
-- this backend's pid (pg_stat_activity) created types of their names beforehand and the run failed
-- with 42P07. Their names now end in random digits.
DO $$ BEGIN
    FOR n IN 1..30 LOOP
        EXECUTE format('CREATE TYPE test_fit_multiple.%I AS (x int)', format('__hopper_%s_%s_model_input', pg_backend_pid(), n));
    END LOOP;
END $$;
CALL hopper.fit_multiple('fm_packed', 'fm_out4', 'fm_mst4', 3, 'fm_valid_packed', 2, name => 'four', description => 'M > S');
DO $$ BEGIN
    FOR n IN 1..30 LOOP
        EXECUTE format('DROP TYPE test_fit_multiple.%I', format('__hopper_%s_%s_model_input', pg_backend_pid(), n));
    END LOOP;
END $$;

-- The output table: one row per mst_key with its configuration and final state.
SELECT o.mst_key, o.model_id, o.compile_params = m.compile_params AND o.fit_params = m.fit_params AS same_config,
       o.model_config -> 'compile' -> 'optimizer' ->> 'name' AS optimizer,
       hopper.model_state_info(o.model_state) ->> 'layers' AS layers
FROM fm_out4 o JOIN fm_mst4 m USING (mst_key) ORDER BY mst_key;
SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'fm_out4' ORDER BY ordinal_position;
-- _info: MADlib's column names, learning curves at the metrics iterations, final values.
SELECT column_name FROM information_schema.columns WHERE table_name = 'fm_out4_info' ORDER BY ordinal_position;
SELECT mst_key, model_id, model_type, metrics_iters, metrics_type, loss_type, status,
       array_length(training_loss, 1) AS n_train, array_length(validation_loss, 1) AS n_valid,
       array_length(training_metrics, 1) AS n_train_metrics, array_length(metrics_elapsed_time, 1) AS n_times,
       training_loss_final = training_loss[2] AND validation_loss_final = validation_loss[2]
         AND training_metrics_final = training_metrics[2] AND validation_metrics_final = validation_metrics[2] AS finals_are_last,
       (training_metrics_all -> 'accuracy' ->> 1)::float8 = training_metrics_final AS all_matches,
       metrics_elapsed_time[1] <= metrics_elapsed_time[2] AS times_ordered,
       steps, samples_seen, num_params
FROM fm_out4_info ORDER BY mst_key;
-- The configurations learn (the test that fails if hopping breaks training).
SELECT max(validation_metrics_final) > 0.95 AS best_learned, bool_and(training_loss[2] < training_loss[1]) AS all_improve,
       count(*) AS models
FROM fm_out4_info;
SELECT source_table, validation_table, model_output_table, model_selection_table, model_arch_table, method,
       num_iterations, metrics_compute_frequency, warm_start, name, description, num_models, num_segments,
       array_length(dist_keys, 1) AS dist_keys, hops_per_iteration, metrics_iters, class_values,
       start_training_time <= end_training_time AS ordered
FROM fm_out4_summary;
-- evaluate and predict pick one model of a fit_multiple output with mst_key.
SELECT e.mst_key, abs(e.loss - i.validation_loss_final) < 1e-9 AS same_loss, e.row_count
FROM hopper.evaluate('fm_out4', 'fm_valid_packed') e JOIN fm_out4_info i USING (mst_key) ORDER BY mst_key;
SELECT mst_key, row_count FROM hopper.evaluate('fm_out4', 'fm_valid_packed', mst_key => 3);
SELECT hopper.predict('fm_out4', 'fm_valid', 'id', 'x', 'fm_predicted', mst_key => 1);
SELECT count(*) AS rows, avg((p.estimated_label = v.label)::int) > 0.9 AS accurate FROM fm_predicted p JOIN fm_valid v USING (id);
SELECT hopper.predict('fm_out4', 'fm_valid', 'id', 'x', 'fm_predicted2');

-- The hop record: where every model was in every hop.
SELECT column_name FROM information_schema.columns WHERE table_name = 'fm_out4_hops' ORDER BY ordinal_position;
SELECT iteration, hop, string_agg(mst_key || '@' || coalesce(dist_key::text, 'wait'), ' ' ORDER BY mst_key) AS placement
FROM fm_out4_hops WHERE statement <> 'hop' AND iteration = 1
GROUP BY iteration, hop ORDER BY iteration, hop;
SELECT * FROM fm_hops_ok('fm_out4_hops', 4, 3, 3);

-- M = S: 3 configurations on 3 segments, nobody waits, no segment idles.
SELECT hopper.load_model_selection_table('fm_arch', 'fm_mst3', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.3)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='RMSprop(lr=0.01)', metrics=['accuracy']$$],
    ARRAY['batch_size=10']);
CALL hopper.fit_multiple('fm_packed', 'fm_out3', 'fm_mst3', 2, metrics_compute_frequency => 1);
SELECT * FROM fm_hops_ok('fm_out3_hops', 3, 3, 2);
SELECT mst_key, metrics_iters, array_length(training_loss, 1) AS n_train, validation_loss IS NULL AS no_validation
FROM fm_out3_info ORDER BY mst_key;
SELECT num_models, num_segments, hops_per_iteration, validation_table FROM fm_out3_summary;

-- M < S: 2 configurations on 3 segments, one segment idles in every hop.
SELECT hopper.load_model_selection_table('fm_arch', 'fm_mst2', ARRAY[2, 1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$], ARRAY['batch_size=10']);
CALL hopper.fit_multiple('fm_packed', 'fm_out2', 'fm_mst2', 2);
SELECT * FROM fm_hops_ok('fm_out2_hops', 2, 3, 2);
-- metrics_compute_frequency defaults to the last iteration only (MADlib's default).
SELECT mst_key, metrics_iters FROM fm_out2_info ORDER BY mst_key;
SELECT num_models, hops_per_iteration, metrics_compute_frequency FROM fm_out2_summary;
RESET hopper.debug_hops;
-- The shortest call: num_iterations defaults to 10, as fit's.
CALL hopper.fit_multiple('fm_packed', 'fm_out_short', 'fm_mst2');
SELECT num_iterations, metrics_iters FROM fm_out_short_summary;

-- One configuration: fit_multiple is fit, bit for bit (same driver, same visiting order).
SELECT hopper.load_model_selection_table('fm_arch', 'fm_mst1', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$], ARRAY['batch_size=10']);
CALL hopper.fit_multiple('fm_packed', 'fm_out1', 'fm_mst1', 2);
CALL hopper.fit('fm_packed', 'fm_fit',
    '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=10', 2);
SELECT a.model_state = b.model_state AS identical, length(a.model_state) AS bytes
FROM fm_out1 a, fm_fit b;
SELECT a.training_loss_final = b.training_loss_final AS same_loss FROM fm_out1_info a, fm_fit_info b;
-- With M = S a model's visiting order does not depend on the other models: mst_key 1 of the
-- 3-model run is the same model too.
SELECT a.model_state = b.model_state AS identical_among_three FROM fm_out3 a, fm_out1 b WHERE a.mst_key = 1;
-- No hop record without hopper.debug_hops.
SELECT count(*) AS hop_tables FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname IN ('fm_out1_hops', 'fm_fit_hops');

-- Warm start: existing configurations continue (their step counters keep counting), a new one starts fresh.
INSERT INTO fm_mst4 (model_id, compile_params, fit_params)
VALUES (1, '{"loss": "categorical_crossentropy", "optimizer": "sgd", "learning_rate": 0.1}', '{"batch_size": 20}')
RETURNING mst_key;
CREATE TABLE fm_steps_before AS SELECT mst_key, steps FROM fm_out4_info;
CALL hopper.fit_multiple('fm_packed', 'fm_out4', 'fm_mst4', 1, warm_start => true);
SELECT i.mst_key, i.steps - coalesce(b.steps, 0) AS new_steps, b.steps IS NULL AS fresh, i.metrics_iters
FROM fm_out4_info i LEFT JOIN fm_steps_before b USING (mst_key) ORDER BY mst_key;
SELECT warm_start, num_models, num_iterations, name FROM fm_out4_summary;
SELECT count(*) AS hop_tables FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname = 'fm_out4_hops';
-- ...and a configuration whose architecture changed is refused.
UPDATE fm_mst4 SET model_id = 2 WHERE mst_key = 1;
CALL hopper.fit_multiple('fm_packed', 'fm_out4', 'fm_mst4', 1, warm_start => true);
UPDATE fm_mst4 SET model_id = 1 WHERE mst_key = 1;

-- Transfer learning: an architecture stored with weights starts from them.
SELECT hopper.load_model_arch('fm_arch', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"},
                                                                      {"units": 3, "activation": "softmax"}]}',
                              'hidden, pretrained', NULL, (SELECT model_state FROM fm_out4 WHERE mst_key = 1)) AS model_id;
SELECT hopper.load_model_selection_table('fm_arch', 'fm_mst_transfer', ARRAY[4, 1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='SGD(lr=0.000001)', metrics=['accuracy']$$], ARRAY['batch_size=10']);
CALL hopper.fit_multiple('fm_packed', 'fm_out_transfer', 'fm_mst_transfer', 1);
SELECT t.mst_key, t.model_id,
       (SELECT max(abs(w - s)) < 1e-3 FROM unnest(hopper.model_weights(t.model_state), hopper.model_weights(src.model_state)) AS u(w, s))
         AS starts_from_weights,
       i.training_metrics_final > 0.95 AS accurate_at_once
FROM fm_out_transfer t JOIN fm_out_transfer_info i USING (mst_key), fm_out4 src
WHERE src.mst_key = 1 ORDER BY t.mst_key;
-- Weights of another architecture are refused.
UPDATE fm_arch SET model_weights = (SELECT model_state FROM fm_out4 WHERE mst_key = 3) WHERE model_id = 4;
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst_transfer', 1);
UPDATE fm_arch SET model_weights = '\x0000'::bytea WHERE model_id = 4;
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst_transfer', 1);

-- Bad inputs: clear errors, nothing left behind.
CALL hopper.fit_multiple('fm_no_packed', 'fm_bad', 'fm_mst4', 1);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst4', 0);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst4', -2);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst4', 1, metrics_compute_frequency => 0);
CALL hopper.fit_multiple('fm_packed', 'fm_out4', 'fm_mst4', 1);
CREATE TABLE fm_bad_info (x int);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst4', 1);
DROP TABLE fm_bad_info;
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst4', 1, warm_start => true);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_no_mst', 1);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst4', 1, validation_table => 'fm_points');
CALL hopper.fit_multiple(NULL, 'fm_bad', 'fm_mst4', 1);
CALL hopper.fit_multiple('fm_packed', NULL, 'fm_mst4', 1);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', NULL, 1);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_mst4', NULL);
-- Model selection tables made by hand.
CREATE TABLE fm_hand (mst_key int, model_id int, compile_params text, fit_params text);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
CREATE TABLE fm_hand_summary (model_arch_table text);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
INSERT INTO fm_hand_summary VALUES (NULL);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
UPDATE fm_hand_summary SET model_arch_table = 'fm_no_arch';
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
UPDATE fm_hand_summary SET model_arch_table = 'fm_arch';
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
INSERT INTO fm_hand VALUES (1, 99, '', '');
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
UPDATE fm_hand SET model_id = NULL;
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
UPDATE fm_hand SET model_id = 3;
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
UPDATE fm_hand SET model_id = 2, compile_params = 'loss=';
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
UPDATE fm_hand SET compile_params = $$loss='binary_crossentropy'$$;
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
UPDATE fm_hand SET compile_params = '';
INSERT INTO fm_hand VALUES (1, 1, '', '');
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_hand', 1);
CREATE TABLE fm_nocol (mst_key int, model_id int, compile_params text);
CALL hopper.fit_multiple('fm_packed', 'fm_bad', 'fm_nocol', 1);
SELECT count(*) AS leftovers FROM pg_class WHERE (relnamespace = current_schema()::regnamespace AND relname LIKE 'fm\_bad%') OR relname LIKE '\_\_hopper%';
