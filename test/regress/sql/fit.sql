-- hopper.fit, evaluate, predict: a model that learns, its output tables, and every error branch.
-- Each test file works in its own schema, so test files never see each other's tables.
CREATE SCHEMA test_fit;
SET search_path = test_fit, public;
SET client_min_messages = warning;

CREATE TABLE blobs AS
SELECT g AS id,
       ARRAY[(g % 3) * 2.0 + sin(g) * 0.6, ((g / 3) % 2) * 2.0 + cos(g * 1.7) * 0.6]::float8[] AS x,
       CASE (g % 3) + 3 * ((g / 3) % 2) WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN 'c'
                                        WHEN 3 THEN 'd' WHEN 4 THEN 'e' ELSE 'f' END AS label
FROM generate_series(1, 1200) g;
SELECT hopper.preprocess('blobs', 'blobs_packed', 'label', 'x', buffer_size => 50, num_segments => 2,
                         scale => 'standardize', seed => 3);
CREATE TABLE blobs_valid AS SELECT * FROM blobs WHERE id % 4 = 0;
SELECT hopper.preprocess_validation('blobs_valid', 'blobs_valid_packed', 'label', 'x', 'blobs_packed');

CALL hopper.fit('blobs_packed', 'blobs_model',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy', 'top_k_categorical_accuracy'], top_k=2$$,
    'batch_size=25', 8, validation_table => 'blobs_valid_packed', metrics_compute_frequency => 4);

-- A learnable data set is learned (the test that can fail if training breaks).
SELECT training_metrics_final > 0.97 AS learned, validation_metrics_final > 0.97 AS generalises,
       training_loss[1] > training_loss[2] AS loss_fell, metrics_iters, metrics_type, loss_type, status,
       array_length(training_loss, 1) AS evaluations, steps, samples_seen, num_params, model_type
FROM blobs_model_info;
SELECT mst_key, model_id, compile_params, fit_params, model_arch -> 'layers' -> 0 ->> 'units' AS hidden_units,
       model_config -> 'compile' -> 'optimizer' ->> 'name' AS optimizer
FROM blobs_model;
SELECT source_table, validation_table, method, num_iterations, num_models, num_segments, hops_per_iteration,
       class_values, metrics_iters, start_training_time <= end_training_time AS ordered
FROM blobs_model_summary;
SELECT (hopper.model_state_info(model_state) ->> 'num_params')::int AS params,
       hopper.model_state_info(model_state) ->> 'layers' AS layers,
       array_length(hopper.model_weights(model_state), 1) AS weights
FROM blobs_model;

-- The call a user first makes: packed table, output, architecture. compile_params defaults to
-- Adam (with accuracy for a softmax output; said in a NOTICE), fit_params to batch_size=32,
-- num_iterations to 10; the model learns. A linear output gets Adam without metrics (the loss is
-- the mean squared error), and a WARNING: on class labels that is seldom meant.
CALL hopper.fit('blobs_packed', 'blobs_defaults',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}');
SELECT m.compile_params, m.fit_params, s.num_iterations, i.metrics_type, i.loss_type,
       i.training_metrics_final > 0.9 AS learned
FROM blobs_defaults m, blobs_defaults_summary s, blobs_defaults_info i;
CALL hopper.fit('blobs_packed', 'blobs_linear', '{"input_dim": 2, "layers": [{"units": 6}]}', num_iterations => 1);
SELECT m.compile_params, i.metrics_type, i.loss_type FROM blobs_linear m, blobs_linear_info i;

-- evaluate agrees with the info table's last validation figures.
SELECT e.mst_key, abs(e.loss - i.validation_loss_final) < 1e-9 AS same_loss,
       abs((e.metrics ->> 'accuracy')::float8 - i.validation_metrics_final) < 1e-9 AS same_accuracy, e.row_count
FROM hopper.evaluate('blobs_model', 'blobs_valid_packed') e JOIN blobs_model_info i USING (mst_key);

-- Evaluation runs one segment per process and adds the segments' exact sums: the same bits with
-- one process as with one per segment, and the same as one aggregate over the whole table.
SET hopper.parallel_segments = 1;
CREATE TEMP TABLE eval_serial AS SELECT * FROM hopper.evaluate('blobs_model', 'blobs_packed');
RESET hopper.parallel_segments;
SELECT s.loss = p.loss AS same_loss, s.metrics = p.metrics AS same_metrics, s.row_count = p.row_count AS same_rows
FROM eval_serial s JOIN hopper.evaluate('blobs_model', 'blobs_packed') p USING (mst_key);
SELECT sums[1] AS metrics, sums[2] AS rows, sums[3] / sums[2] = whole[2] AS same_loss, sums[4] / sums[2] = whole[3] AS same_accuracy
FROM (SELECT hopper.evaluate_models_sums(ARRAY[m.model_state], d.independent_var, d.dependent_var) AS sums,
             hopper.evaluate_models(ARRAY[m.model_state], d.independent_var, d.dependent_var) AS whole
      FROM blobs_packed d, blobs_model m) x;

-- Validation and evaluation refuse a table packed otherwise than the training data: packed on its
-- own (its own scaling, or its own classes), or against an earlier packing. Accepted before, such
-- tables gave wrong metrics without a sign (the rows' features scaled otherwise, their classes in
-- other output slots).
-- blobs_unscaled: the same rows with their own (no) scaling; blobs_relabelled_own: class a renamed.
SELECT hopper.preprocess('blobs', 'blobs_unscaled', 'label', 'x', buffer_size => 50, num_segments => 2, seed => 3);
CREATE TABLE blobs_relabelled AS SELECT id, x, CASE label WHEN 'a' THEN 'z' ELSE label END AS label FROM blobs;
SELECT hopper.preprocess('blobs_relabelled', 'blobs_relabelled_own', 'label', 'x', buffer_size => 50,
                         num_segments => 2, scale => 'standardize', seed => 3);
SELECT * FROM hopper.evaluate('blobs_model', 'blobs_unscaled');
SELECT * FROM hopper.evaluate('blobs_model', 'blobs_relabelled_own');
CALL hopper.fit('blobs_packed', 'm_own_valid', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}',
                '', '', 1, validation_table => 'blobs_unscaled');
CALL hopper.fit('blobs_packed', 'm_own_valid', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}',
                '', '', 1, validation_table => 'blobs_valid');
SELECT to_regclass('m_own_valid') IS NULL AS no_output;
-- The training table itself, and one packed against it, are alike.
SELECT count(*) FROM hopper.evaluate('blobs_model', 'blobs_packed');
SELECT count(*) FROM hopper.evaluate('blobs_model', 'blobs_valid_packed');

-- predict scores raw rows, scaled like the training data.
SELECT hopper.predict('blobs_model', 'blobs', 'id', 'x', 'blobs_predicted');
SELECT avg((p.estimated_label = b.label)::int) > 0.97 AS accurate, count(*)
FROM blobs_predicted p JOIN blobs b USING (id);
SELECT hopper.predict('blobs_model', 'blobs', 'id', 'x', 'blobs_prob', pred_type => 'prob');
SELECT count(*) AS rows, min(array_length(prob, 1)) AS classes,
       bool_and(abs((SELECT sum(v) FROM unnest(prob) v) - 1) < 1e-5) AS sums_to_one
FROM blobs_prob;

-- The same call gives the same model, bit for bit (seeded initialisation, fixed visiting order).
CALL hopper.fit('blobs_packed', 'blobs_model_again',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy', 'top_k_categorical_accuracy'], top_k=2$$,
    'batch_size=25', 8, validation_table => 'blobs_valid_packed', metrics_compute_frequency => 4);
SELECT a.model_state = b.model_state AS identical FROM blobs_model a, blobs_model_again b;

-- Training metrics: by default the running mean over the minibatches an iteration trained, each
-- measured before its update (as Keras reports them); hopper.training_metrics = exact evaluates the
-- training table again after the iteration. They agree when the updates change nothing: with a
-- learning rate far below float precision every minibatch meets the same model the exact pass sees
-- (only the loss's per-batch rounding may differ).
SELECT training_metrics FROM blobs_model_summary;
CALL hopper.fit('blobs_packed', 'frozen_running',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$optimizer='SGD(lr=1e-30)', metrics=['accuracy', 'top_k_categorical_accuracy'], top_k=2$$, 'batch_size=25', 2);
SET hopper.training_metrics = exact;
CALL hopper.fit('blobs_packed', 'frozen_exact',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$optimizer='SGD(lr=1e-30)', metrics=['accuracy', 'top_k_categorical_accuracy'], top_k=2$$, 'batch_size=25', 2);
RESET hopper.training_metrics;
-- States stored in a table (out of line) and joined to every row are the same states on every row.
CREATE TABLE stored_states (states bytea[]);
ALTER TABLE stored_states ALTER states SET STORAGE EXTERNAL;
INSERT INTO stored_states SELECT ARRAY[m.model_state, m.model_state, a.model_state, a.model_state]
FROM blobs_model m, frozen_running a;
SELECT pg_column_size(states) > 2000 AS out_of_line,
       (SELECT hopper.evaluate_models(t.states, d.independent_var, d.dependent_var) FROM blobs_packed d, stored_states t)
     = (SELECT hopper.evaluate_models((SELECT states FROM stored_states), d.independent_var, d.dependent_var)
        FROM blobs_packed d) AS same_as_a_subquery
FROM stored_states;
-- Every row must carry the same states: a later row's other states were evaluated as the first's.
SELECT hopper.evaluate_models(CASE WHEN d.buffer_id = 0 THEN ARRAY[m.model_state] ELSE ARRAY[a.model_state] END,
                              d.independent_var, d.dependent_var ORDER BY d.buffer_id)
FROM blobs_packed d, blobs_model m, frozen_running a;
SELECT hopper.evaluate_models(CASE WHEN d.buffer_id = 0 THEN ARRAY[m.model_state] ELSE ARRAY[m.model_state, m.model_state] END,
                              d.independent_var, d.dependent_var ORDER BY d.buffer_id)
FROM blobs_packed d, blobs_model m;
SELECT rs.training_metrics AS running, es.training_metrics AS exact,
       hopper.model_weights(r.model_state) = hopper.model_weights(e.model_state) AS same_weights,
       abs(ri.training_loss_final - ei.training_loss_final) < 1e-6 AS same_loss,
       ri.training_metrics_final = ei.training_metrics_final AS same_accuracy,
       ri.training_metrics_final < 0.9 AS untrained
FROM frozen_running_summary rs, frozen_exact_summary es, frozen_running r, frozen_exact e,
     frozen_running_info ri, frozen_exact_info ei;

-- Warm start continues from the stored state (optimizer moments and step counter included).
CALL hopper.fit('blobs_packed', 'blobs_model',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=25', 2,
    warm_start => true);
SELECT steps, warm_start FROM blobs_model_info, blobs_model_summary;

-- A regression model (linear output, mean squared error) on a numeric target.
CREATE TABLE lin AS SELECT g AS id, ARRAY[g % 7, g % 5]::float8[] AS x, 3.0 * (g % 7) - 2.0 * (g % 5) + 1.0 AS y
FROM generate_series(1, 700) g;
SELECT hopper.preprocess('lin', 'lin_packed', 'y', 'x', buffer_size => 50, num_segments => 2, scale => 'standardize');
CALL hopper.fit('lin_packed', 'lin_model', '{"input_dim": 2, "layers": [{"units": 1, "activation": "linear"}]}',
    '{"loss": "mse", "optimizer": "sgd", "learning_rate": 0.05, "metrics": ["mae"]}', '{"batch_size": 10}', 20);
SELECT loss_type, training_loss_final < 1e-4 AS fitted, metrics_type FROM lin_model_info;
SELECT hopper.predict('lin_model', 'lin', 'id', 'x', 'lin_predicted');
-- A regression model has no class probabilities (pred_type prob gave the values without a word).
SELECT hopper.predict('lin_model', 'lin', 'id', 'x', 'lin_prob', pred_type => 'prob');
SELECT max(abs(p.estimated_y - l.y)) < 0.05 AS close FROM lin_predicted p JOIN lin l USING (id);

-- Errors: clear messages, no output tables left behind.
CALL hopper.fit('no_such_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 0);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 3, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 5, "activation": "softmax"}]}', '', '', 1);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "swish"}]}', '', '', 1);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}',
                $$optimizer='Adagradd(lr=0.1)'$$, '', 1);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}',
                '{"learnin_rate": 0.1}', '', 1);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}',
                '', 'batch_size=-3', 1);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}',
                '', '', 1, metrics_compute_frequency => 0);
CALL hopper.fit('blobs_packed', 'blobs_model', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1,
                warm_start => true);
CALL hopper.fit('blobs_packed', 'm1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1,
                validation_table => 'lin_packed');
CALL hopper.fit('blobs_packed', 'blobs_model', '{"input_dim": 2, "layers": [{"units": 8, "activation": "softmax"}]}', '', '', 1,
                warm_start => true);
CALL hopper.fit('blobs_packed', 'blobs_model', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1,
                warm_start => true);
CALL hopper.fit('blobs_packed', 'm1', NULL, '', '', 1);
SELECT count(*) AS leftovers FROM pg_class WHERE (relnamespace = current_schema()::regnamespace AND relname LIKE 'm1%') OR relname LIKE '\_\_hopper%';

-- Corrupted model states are refused, never crash.
SELECT hopper.model_state_info('\x00'::bytea);
SELECT hopper.model_state_info(substr(model_state, 1, length(model_state) - 10)) FROM blobs_model;
SELECT hopper.model_state_info(overlay(model_state placing '\xff'::bytea from 200 for 1)) FROM blobs_model;
SELECT hopper.model_forward(overlay(model_state placing '\x00'::bytea from 1 for 1), ARRAY[1, 2]) FROM blobs_model;
CREATE TABLE broken_model AS SELECT * FROM blobs_model;
UPDATE broken_model SET model_state = overlay(model_state placing '\x42'::bytea from 300 for 1);
CREATE TABLE broken_model_summary AS SELECT * FROM blobs_model_summary;
SELECT hopper.predict('broken_model', 'blobs', 'id', 'x', 'p1');
SELECT * FROM hopper.evaluate('broken_model', 'blobs_packed');
SELECT hopper.model_forward(model_state, ARRAY[1, 2, 3]) FROM blobs_model;

-- evaluate / predict argument errors.
SELECT * FROM hopper.evaluate('blobs_model', 'blobs_packed', mst_key => 99);
SELECT * FROM hopper.evaluate('blobs_model', 'lin_packed');
SELECT hopper.predict('blobs_model', 'blobs', 'id', 'x', 'p1', pred_type => 'class');
SELECT hopper.predict('blobs_model', 'blobs', 'nope', 'x', 'p1');
SELECT hopper.predict('blobs_model', 'blobs', 'id', 'x', 'blobs_predicted');
SELECT count(*) AS leftovers FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE 'p1%';

-- Several epochs per segment visit keep the segment's buffers in memory, within hopper.segment_cache_mb.
CALL hopper.fit('blobs_packed', 'epochs_model',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=25, epochs=3', 2);
SELECT steps, samples_seen, training_metrics_final > 0.97 AS learned FROM epochs_model_info;
SET hopper.segment_cache_mb = 0;
SET hopper.segment_cache_mb = 1;
CREATE TABLE wide AS SELECT g AS id, array_fill(1.0::float8, ARRAY[3000]) AS x, (g % 2)::text AS label
FROM generate_series(1, 300) g;
SELECT hopper.preprocess('wide', 'wide_packed', 'label', 'x', buffer_size => 100, num_segments => 1);
\set SHOW_CONTEXT never
CALL hopper.fit('wide_packed', 'm_wide', '{"input_dim": 3000, "layers": [{"units": 2, "activation": "softmax"}]}',
                '', 'epochs=2', 1);
\set SHOW_CONTEXT errors
RESET hopper.segment_cache_mb;
SELECT count(*) AS leftovers FROM pg_class WHERE (relnamespace = current_schema()::regnamespace AND relname LIKE 'm\_wide%') OR relname LIKE '\_\_hopper%';

-- Inside a transaction block a run holds every working table's lock until it ends: a run that
-- would fill the lock table is refused before it starts (the budget depends on the server's
-- settings, so only the message is shown).
\set VERBOSITY terse
BEGIN;
CALL hopper.fit('blobs_packed', 'm_long', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1000000);
ROLLBACK;
\set VERBOSITY default

-- Reshuffling (fit_params shuffle, on by default): each pass draws its minibatches from a new seeded
-- permutation of a segment's rows, within windows of hopper.shuffle_window_mb. The same call gives
-- the same model; shuffle=False trains the buffers in order (another model); a window smaller than
-- the segment (1 MB of 2.4 MB here: 3 windows) gives another model again, the same every time.
CREATE TABLE shuffled AS SELECT g AS id, ARRAY(SELECT sin(g * k) FROM generate_series(1, 200) k)::float8[] AS x,
       (g % 3)::text AS label FROM generate_series(1, 3000) g;
SELECT hopper.preprocess('shuffled', 'shuffled_packed', 'label', 'x', buffer_size => 250, num_segments => 1);
CREATE FUNCTION pg_temp.weights(model_table text) RETURNS real[] LANGUAGE plpgsql AS $$
DECLARE w real[];
BEGIN
    EXECUTE format('SELECT hopper.model_weights(model_state) FROM %I', model_table) INTO w;
    RETURN w;
END $$;
\set arch '{"input_dim": 200, "layers": [{"units": 3, "activation": "softmax"}]}'
CALL hopper.fit('shuffled_packed', 'sh_a', :'arch', $$optimizer='SGD(lr=0.05)'$$, 'batch_size=32', 2);
CALL hopper.fit('shuffled_packed', 'sh_b', :'arch', $$optimizer='SGD(lr=0.05)'$$, 'batch_size=32, shuffle=True', 2);
CALL hopper.fit('shuffled_packed', 'sh_off', :'arch', $$optimizer='SGD(lr=0.05)'$$, 'batch_size=32, shuffle=False', 2);
SET hopper.shuffle_window_mb = 1;
CALL hopper.fit('shuffled_packed', 'sh_win', :'arch', $$optimizer='SGD(lr=0.05)'$$, 'batch_size=32', 2);
CALL hopper.fit('shuffled_packed', 'sh_win2', :'arch', $$optimizer='SGD(lr=0.05)'$$, 'batch_size=32', 2);
RESET hopper.shuffle_window_mb;
SELECT pg_temp.weights('sh_a') = pg_temp.weights('sh_b') AS default_is_shuffle_and_reproducible,
       pg_temp.weights('sh_a') <> pg_temp.weights('sh_off') AS in_order_differs,
       pg_temp.weights('sh_a') <> pg_temp.weights('sh_win') AS windows_differ,
       pg_temp.weights('sh_win') = pg_temp.weights('sh_win2') AS windows_reproducible;

-- top_k at or above the number of classes is accepted, as Keras and MADlib accept it: every row is
-- in the top k, and the metric is 1 (top_k 6 of the 6 classes, and 9).
CALL hopper.fit('blobs_packed', 'blobs_topk',
    '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}',
    $$metrics=['top_k_accuracy'], top_k=6$$, 'batch_size=25', 1, validation_table => 'blobs_valid_packed');
CALL hopper.fit('blobs_packed', 'blobs_topk9',
    '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}',
    $$metrics=['top_k_accuracy'], top_k=9$$, 'batch_size=25', 1);
SELECT training_metrics_final, validation_metrics_final, metrics_type FROM blobs_topk_info;
SELECT training_metrics_final FROM blobs_topk9_info;

-- Keras' class_weight on an imbalanced target (1 row in 10 is "rare", and its rows overlap the
-- others'): unweighted, the model finds a third of the rare rows (0.32); weighted 9 to 1, 0.80.
-- The weights are in the model's configuration; evaluation is unweighted.
CREATE TABLE skewed AS SELECT g AS id, ARRAY[sin(g * 0.7) + (g % 10 = 0)::int * 0.8, cos(g * 1.3)]::float8[] AS x,
       CASE WHEN g % 10 = 0 THEN 'rare' ELSE 'common' END AS label FROM generate_series(1, 2000) g;
SELECT hopper.preprocess('skewed', 'skewed_packed', 'label', 'x', num_segments => 1, seed => 3);
SELECT class_values FROM skewed_packed_summary;
CALL hopper.fit('skewed_packed', 'skewed_plain', '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
    $$optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=32', 10);
CALL hopper.fit('skewed_packed', 'skewed_weighted', '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
    $$optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=32, class_weight={0: 1, 1: 9}', 10);
SELECT hopper.predict('skewed_plain', 'skewed', 'id', 'x', 'skewed_plain_pred');
SELECT hopper.predict('skewed_weighted', 'skewed', 'id', 'x', 'skewed_weighted_pred');
SELECT (SELECT avg((p.estimated_label = 'rare')::int) FROM skewed_plain_pred p JOIN skewed s USING (id) WHERE s.label = 'rare') < 0.5
         AS plain_misses_rare,
       (SELECT avg((p.estimated_label = 'rare')::int) FROM skewed_weighted_pred p JOIN skewed s USING (id) WHERE s.label = 'rare') > 0.7
         AS weighted_finds_rare,
       (SELECT fit_params FROM skewed_weighted) AS fit_params;
SELECT model_config -> 'fit' -> 'class_weight' AS class_weight FROM skewed_weighted;
-- Refused: a weight per class, categorical cross-entropy only.
CALL hopper.fit('skewed_packed', 'skewed_bad', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
    NULL, 'class_weight={0: 1}', 1);
CALL hopper.fit('skewed_packed', 'skewed_bad', '{"input_dim": 2, "layers": [{"units": 2, "activation": "sigmoid"}]}',
    NULL, 'class_weight={0: 1, 1: 9}', 1);
CALL hopper.fit('skewed_packed', 'skewed_bad', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
    NULL, 'class_weight={0: 1, 2: 9}', 1);
