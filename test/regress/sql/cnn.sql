-- Convolutional networks everywhere a model goes: fit, fit_multiple, fit_data_parallel (model
-- averaging includes batch normalization's moving statistics), evaluate, predict, model_forward,
-- checkpoints, model versions, warm start, transfer learning (load_model_arch with weights) and
-- model_state_info. Small data: 8x8x1 images of three kinds of bars.
-- Each test file works in its own schema, so test files never see each other's tables.
CREATE SCHEMA test_cnn;
SET search_path = test_cnn, public;
SET client_min_messages = warning;

-- A horizontal bar (class h), a vertical bar (v) or a diagonal (d) at one of 6 places, with a
-- little deterministic noise. Pixels in HWC order: row i, column j at index i * 8 + j.
CREATE TABLE bars AS
SELECT g AS id, (ARRAY['h', 'v', 'd'])[g % 3 + 1] AS label,
       ARRAY(SELECT CASE WHEN (g % 3 = 0 AND i = (g / 3) % 6 + 1) OR (g % 3 = 1 AND j = (g / 3) % 6 + 1)
                           OR (g % 3 = 2 AND i - j = (g / 3) % 6 - 3) THEN 1.0 ELSE 0.0 END
                     + 0.15 * sin(g * 7 + i * 8 + j)
             FROM generate_series(0, 7) i, generate_series(0, 7) j ORDER BY i, j)::float8[] AS x
FROM generate_series(1, 180) g;
SELECT hopper.preprocess('bars', 'bars_packed', 'label', 'x', buffer_size => 30, num_segments => 2, seed => 4);
CREATE TABLE bars_valid AS SELECT * FROM bars WHERE id % 3 = 0 OR id % 5 = 0;
SELECT hopper.preprocess_validation('bars_valid', 'bars_valid_packed', 'label', 'x', 'bars_packed');

-- Two architectures: hopper's JSON (Conv2D, MaxPooling2D, Flatten, Dense) and a Keras
-- Sequential model (Conv2D without bias, BatchNormalization, Activation, GlobalAveragePooling2D, Dense).
\set conv_pool '{"input_shape": [8, 8, 1], "layers": [{"type": "conv2d", "filters": 4, "kernel_size": 3, "activation": "relu"}, {"type": "max_pooling2d", "pool_size": 2}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}'
\set conv_bn '{"class_name": "Sequential", "config": {"name": "bn", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 8, 8, 1], "name": "in"}}, {"class_name": "Conv2D", "config": {"name": "c", "filters": 4, "kernel_size": [3, 3], "padding": "same", "use_bias": false, "activation": "linear"}}, {"class_name": "BatchNormalization", "config": {"name": "bn", "momentum": 0.9}}, {"class_name": "Activation", "config": {"name": "a", "activation": "relu"}}, {"class_name": "GlobalAveragePooling2D", "config": {"name": "gap"}}, {"class_name": "Dense", "config": {"name": "out", "units": 3, "activation": "softmax"}}]}}'
\set adam '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.03)'', metrics=[''accuracy'']$$'

-- ---- fit: a CNN learns, its run is recorded, a checkpoint per metrics iteration ----
CALL hopper.fit('bars_packed', 'cp_model', :'conv_pool', :adam, 'batch_size=10', 6,
                validation_table => 'bars_valid_packed', metrics_compute_frequency => 3, name => 'cnn conv_pool');
SELECT training_loss[1] > training_loss[2] AS loss_fell, validation_metrics_final > 0.9 AS generalises,
       metrics_iters, status, steps, num_params, model_type
FROM cp_model_info;
-- model_state_info: 4 * 9 + 4 conv, 36 * 3 + 3 dense parameters; the layers and the config.
SELECT hopper.model_state_info(model_state) ->> 'layers' AS layers,
       (hopper.model_state_info(model_state) ->> 'num_params')::int AS params,
       (hopper.model_state_info(model_state) ->> 'format_version')::int AS format,
       hopper.model_state_info(model_state) -> 'config' -> 'architecture' AS architecture,
       array_length(hopper.model_weights(model_state), 1) AS weights
FROM cp_model;

-- evaluate agrees with the info table's last validation figures.
SELECT abs(e.loss - i.validation_loss_final) < 1e-9 AS same_loss,
       abs((e.metrics ->> 'accuracy')::float8 - i.validation_metrics_final) < 1e-9 AS same_accuracy, e.row_count
FROM hopper.evaluate('cp_model', 'bars_valid_packed') e, cp_model_info i;

-- predict (class and probabilities) and model_forward agree with each other.
SELECT hopper.predict('cp_model', 'bars', 'id', 'x', 'cp_predicted');
SELECT avg((p.estimated_label = b.label)::int) > 0.9 AS accurate, count(*) FROM cp_predicted p JOIN bars b USING (id);
SELECT hopper.predict('cp_model', 'bars', 'id', 'x', 'cp_prob', pred_type => 'prob');
SELECT bool_and(abs((SELECT sum(v) FROM unnest(prob) v) - 1) < 1e-5) AS sums_to_one,
       bool_and((SELECT max(abs(a - b)) FROM unnest(p.prob, hopper.model_forward(m.model_state, b.x)) AS u(a, b)) < 1e-6)
         AS forward_agrees
FROM cp_prob p JOIN bars b USING (id), cp_model m;
-- The same call gives the same model, bit for bit.
CALL hopper.fit('bars_packed', 'cp_model_again', :'conv_pool', :adam, 'batch_size=10', 6,
                validation_table => 'bars_valid_packed', metrics_compute_frequency => 3);
SELECT a.model_state = b.model_state AS identical FROM cp_model a, cp_model_again b;

-- Checkpoints: one per metrics iteration; the last is the output model, bit for bit.
SELECT iteration, (hopper.model_state_info(hopper.checkpoint_state(uuid)) ->> 'layers') AS layers
FROM hopper.checkpoints_expanded WHERE run_name = 'cnn conv_pool' ORDER BY iteration;
SELECT hopper.checkpoint_state(l.uuid) = m.model_state AS same_state
FROM hopper.latest_checkpoints l, cp_model m WHERE l.run_name = 'cnn conv_pool';
-- A model version of it: its state is the checkpoint's, and a materialized version predicts the same.
SELECT hopper.create_model('bars-cnn', 'bars on 8x8 images') > 0 AS created;
SELECT hopper.register_model_version('bars-cnn', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'cnn conv_pool')) AS version;
SELECT hopper.model_version_state('bars-cnn', 1) = m.model_state AS same_state FROM cp_model m;
SELECT hopper.materialize_model_version('bars-cnn', 'cp_version');
SELECT hopper.predict('cp_version', 'bars', 'id', 'x', 'cp_version_predicted');
SELECT bool_and(a.estimated_label = b.estimated_label) AS same_predictions, count(*)
FROM cp_version_predicted a JOIN cp_predicted b USING (id);

-- Warm start continues from the stored state; a warm start from the first checkpoint continues from it.
CALL hopper.fit('bars_packed', 'cp_model', :'conv_pool', :adam, 'batch_size=10', 2, warm_start => true);
SELECT i.steps, s.warm_start, (hopper.model_state_info(m.model_state) ->> 'steps')::int AS state_steps
FROM cp_model_info i, cp_model_summary s, cp_model m;
SELECT uuid AS first_checkpoint FROM hopper.checkpoints_expanded WHERE run_name = 'cnn conv_pool' AND iteration = 3 \gset
CALL hopper.fit('bars_packed', 'cp_from_checkpoint', :'conv_pool', :adam, 'batch_size=10', 1,
                warm_start_checkpoint => :'first_checkpoint');
SELECT steps, (hopper.model_state_info(hopper.checkpoint_state(:'first_checkpoint')) ->> 'steps')::int AS checkpoint_steps
FROM cp_from_checkpoint_info;

-- ---- batch normalization and global average pooling (Keras JSON) ----
CALL hopper.fit('bars_packed', 'bn_model', :'conv_bn', :adam, 'batch_size=10', 8,
                validation_table => 'bars_valid_packed', metrics_compute_frequency => 4);
SELECT training_loss[1] > training_loss[2] AS loss_fell, validation_metrics_final > 0.8 AS generalises, status, num_params
FROM bn_model_info;
-- Parameters: conv 36, then gamma 37-40, beta 41-44, moving mean 45-48, moving variance 49-52, dense 53-67.
-- The moving statistics moved away from their start (mean 0, variance 1) and are kept in the state.
SELECT hopper.model_state_info(model_state) ->> 'layers' AS layers,
       (hopper.model_state_info(model_state) ->> 'num_params')::int AS params,
       hopper.model_state_info(model_state) -> 'config' -> 'architecture' -> 'layers' -> 1 AS batch_normalization,
       (SELECT bool_and(w <> 0) FROM unnest((hopper.model_weights(model_state))[45:48]) w) AS moving_mean_moved,
       (SELECT bool_and(w > 0 AND w <> 1) FROM unnest((hopper.model_weights(model_state))[49:52]) w) AS moving_variance_moved
FROM bn_model;
-- Inference uses the moving statistics: model_forward, predict and evaluate agree.
SELECT hopper.predict('bn_model', 'bars_valid', 'id', 'x', 'bn_prob', pred_type => 'prob');
SELECT bool_and((SELECT max(abs(a - b)) FROM unnest(p.prob, hopper.model_forward(m.model_state, v.x)) AS u(a, b)) < 1e-6)
         AS forward_agrees,
       abs(avg(((SELECT array_position(p.prob, (SELECT max(q) FROM unnest(p.prob) q))) =
                array_position(ARRAY['d', 'h', 'v'], v.label))::int)
           - (SELECT (metrics ->> 'accuracy')::float8 FROM hopper.evaluate('bn_model', 'bars_valid_packed'))) < 1e-9
         AS evaluate_agrees
FROM bn_prob p JOIN bars_valid v USING (id), bn_model m;

-- ---- fit_data_parallel: the copies' average includes the moving statistics ----
-- One warm-started iteration is, by hand: every segment trains a copy of the model, and the
-- copies are averaged weighted by their rows. Every parameter agrees, the moving statistics too.
CREATE TABLE bn_start AS SELECT model_state FROM bn_model;
CREATE TABLE bn_copies AS
SELECT d.dist_key, hopper.train_segment(m.model_state, d.independent_var, d.dependent_var, 1, d.dist_key) AS model_state,
       sum(array_length(d.dependent_var, 1))::bigint AS rows
FROM bars_packed d, bn_start m GROUP BY d.dist_key;
CREATE TABLE bn_by_hand AS SELECT hopper.model_average(model_state, rows) AS model_state FROM bn_copies;
CALL hopper.fit_data_parallel('bars_packed', 'bn_model', :'conv_bn', :adam, 'batch_size=10', 1, warm_start => true);
SELECT (SELECT count(DISTINCT (hopper.model_weights(model_state))[45:52]) FROM bn_copies) AS distinct_copy_statistics,
       hopper.model_weights(h.model_state) = hopper.model_weights(m.model_state) AS same_weights,
       (hopper.model_weights(m.model_state))[45:52] <> (SELECT (hopper.model_weights(model_state))[45:52] FROM bn_start)
         AS statistics_changed,
       (SELECT max(abs(a.w - c.w)) < 1e-6
        FROM (SELECT i, w FROM unnest((hopper.model_weights(m.model_state))[45:52]) WITH ORDINALITY AS u(w, i)) a
        JOIN (SELECT i, sum(w * rows) / sum(rows) AS w
              FROM bn_copies, unnest((hopper.model_weights(model_state))[45:52]) WITH ORDINALITY AS u(w, i) GROUP BY i) c
        USING (i)) AS weighted_mean
FROM bn_by_hand h, bn_model m;
SELECT method, warm_start FROM bn_model_summary;
-- From scratch, with validation.
CALL hopper.fit_data_parallel('bars_packed', 'bn_dp', :'conv_bn', :adam, 'batch_size=10', 8,
                              validation_table => 'bars_valid_packed', metrics_compute_frequency => 4);
SELECT training_loss[1] > training_loss[2] AS loss_fell, validation_metrics_final > 0.7 AS generalises, status FROM bn_dp_info;

-- ---- fit_multiple: both architectures, two optimizers each, on two segments ----
SELECT hopper.load_model_arch('cnn_arch', :'conv_pool', 'conv_pool') AS model_id;
SELECT hopper.load_model_arch('cnn_arch', :'conv_bn', 'conv_bn') AS model_id;
SELECT hopper.load_model_selection_table('cnn_arch', 'cnn_mst', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.03)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']$$],
    ARRAY['batch_size=10']);
CALL hopper.fit_multiple('bars_packed', 'cnn_out', 'cnn_mst', 6, 'bars_valid_packed', 3, name => 'cnn selection');
SELECT o.mst_key, o.model_id, hopper.model_state_info(o.model_state) ->> 'layers' AS layers, i.status,
       i.training_loss[1] > i.training_loss[2] AS loss_fell, i.validation_metrics_final > 0.6 AS learned
FROM cnn_out o JOIN cnn_out_info i USING (mst_key) ORDER BY mst_key;
SELECT mst_key, count(*) AS checkpoints FROM hopper.checkpoints_expanded WHERE run_name = 'cnn selection' GROUP BY mst_key ORDER BY 1;
-- Warm start: every configuration continues (steps keep counting).
CREATE TABLE cnn_steps_before AS SELECT mst_key, steps FROM cnn_out_info;
CALL hopper.fit_multiple('bars_packed', 'cnn_out', 'cnn_mst', 1, warm_start => true);
SELECT i.mst_key, i.steps > b.steps AS continued FROM cnn_out_info i JOIN cnn_steps_before b USING (mst_key) ORDER BY 1;

-- ---- transfer learning: an architecture stored with the weights of a trained CNN ----
SELECT hopper.load_model_arch('cnn_arch', :'conv_bn', 'conv_bn, pretrained', NULL,
                              (SELECT model_state FROM bn_dp)) AS model_id;
SELECT hopper.load_model_selection_table('cnn_arch', 'cnn_mst_transfer', ARRAY[3],
    ARRAY[$$loss='categorical_crossentropy', optimizer='SGD(lr=0.000001)', metrics=['accuracy']$$], ARRAY['batch_size=10']);
CALL hopper.fit_multiple('bars_packed', 'cnn_transfer', 'cnn_mst_transfer', 1);
-- The weights barely move; the moving statistics start from the stored ones (momentum 0.9 over
-- 9 steps on the same data keeps them close).
SELECT (SELECT max(abs(w - s)) < 1e-3 FROM unnest((hopper.model_weights(t.model_state))[1:44], (hopper.model_weights(src.model_state))[1:44]) AS u(w, s))
         AS starts_from_weights,
       (SELECT max(abs(w - s)) < 1e-3 FROM unnest((hopper.model_weights(t.model_state))[53:67], (hopper.model_weights(src.model_state))[53:67]) AS u(w, s))
         AS dense_from_weights,
       i.validation_metrics_final IS NULL AND i.training_metrics_final > 0.7 AS accurate_at_once
FROM cnn_transfer t JOIN cnn_transfer_info i USING (mst_key), bn_dp src;
-- Weights of the other architecture are refused, naming both shapes.
UPDATE cnn_arch SET model_weights = (SELECT model_state FROM cp_model) WHERE model_id = 3;
CALL hopper.fit_multiple('bars_packed', 'cnn_bad', 'cnn_mst_transfer', 1);
SELECT hopper.load_model_arch('cnn_arch', :'conv_bn', 'mismatch', NULL, (SELECT model_state FROM cp_model));
-- A warm start of a CNN output with another architecture is refused too, nothing is changed.
CREATE TABLE cp_before AS SELECT model_state FROM cp_model;
CALL hopper.fit('bars_packed', 'cp_model', :'conv_bn', :adam, 'batch_size=10', 1, warm_start => true);
SELECT b.model_state = m.model_state AS unchanged FROM cp_before b, cp_model m;
SELECT count(*) AS leftovers FROM pg_class
WHERE (relnamespace = current_schema()::regnamespace AND relname LIKE 'cnn\_bad%') OR relname LIKE '\_\_hopper%';
