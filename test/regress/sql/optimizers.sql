-- Keras' Adagrad, Adadelta, Adamax and Nadam (tf.keras 2.x): trained through hopper.fit and through
-- the MADlib facade (MADlib's transfer-learning notebook compiles with optimizer='adadelta'); their
-- slots travel in the model state, so a run resumed from a checkpoint mid-way ends as the run
-- trained straight through. Optimizers of Keras that hopper does not implement are refused with 0A000.
CREATE SCHEMA test_optimizers;
SET search_path = test_optimizers, public;
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; hnt text;
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    RETURN st || ': ' || msg || coalesce(' | DETAIL: ' || nullif(det, ''), '') || coalesce(' | HINT: ' || nullif(hnt, ''), '');
END $$;

CREATE TABLE pts AS
SELECT g AS id, ARRAY[(g % 10) / 10.0, (g % 7) / 7.0, ((g * 3) % 11) / 11.0]::float8[] AS x,
       CASE WHEN (g % 10) + (g % 7) > 8 THEN 'hi' ELSE 'lo' END AS y
FROM generate_series(1, 120) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'y', 'x', buffer_size => 40, num_segments => 2);
\set arch '{"input_dim": 3, "layers": [{"units": 6, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]}'

-- ---- each optimizer trains; a checkpoint after every iteration ----
CALL hopper.fit('pts_packed', 'm_adagrad', :'arch', $$optimizer='Adagrad(lr=0.05)', metrics=['accuracy']$$, 'batch_size=8', 4,
                name => 'opt_adagrad', checkpoint_frequency => 1);
CALL hopper.fit('pts_packed', 'm_adadelta', :'arch', $$optimizer='adadelta', metrics=['accuracy']$$, 'batch_size=8', 4,
                name => 'opt_adadelta', checkpoint_frequency => 1);
CALL hopper.fit('pts_packed', 'm_adamax', :'arch', $$optimizer='Adamax(learning_rate=0.02, beta_1=0.85, beta_2=0.99)', metrics=['accuracy']$$, 'batch_size=8', 4,
                name => 'opt_adamax', checkpoint_frequency => 1);
CALL hopper.fit('pts_packed', 'm_nadam', :'arch', $$optimizer='Nadam(lr=0.02, schedule_decay=0.004)', metrics=['accuracy']$$, 'batch_size=8', 4,
                name => 'opt_nadam', checkpoint_frequency => 1);
SELECT 'adagrad' AS opt, m.model_config -> 'compile' -> 'optimizer' AS optimizer,
       hopper.model_state_info(m.model_state) ->> 'optimizer_slots' AS slots, i.status,
       array_length(i.training_loss, 1) AS evaluations, i.training_loss[4] < i.training_loss[1] AS loss_fell
FROM m_adagrad m, m_adagrad_info i
UNION ALL
SELECT 'adadelta' AS opt, m.model_config -> 'compile' -> 'optimizer' AS optimizer,
       hopper.model_state_info(m.model_state) ->> 'optimizer_slots' AS slots, i.status,
       array_length(i.training_loss, 1) AS evaluations, i.training_loss[4] < i.training_loss[1] AS loss_fell
FROM m_adadelta m, m_adadelta_info i
UNION ALL
SELECT 'adamax' AS opt, m.model_config -> 'compile' -> 'optimizer' AS optimizer,
       hopper.model_state_info(m.model_state) ->> 'optimizer_slots' AS slots, i.status,
       array_length(i.training_loss, 1) AS evaluations, i.training_loss[4] < i.training_loss[1] AS loss_fell
FROM m_adamax m, m_adamax_info i
UNION ALL
SELECT 'nadam' AS opt, m.model_config -> 'compile' -> 'optimizer' AS optimizer,
       hopper.model_state_info(m.model_state) ->> 'optimizer_slots' AS slots, i.status,
       array_length(i.training_loss, 1) AS evaluations, i.training_loss[4] < i.training_loss[1] AS loss_fell
FROM m_nadam m, m_nadam_info i
ORDER BY opt;
-- 38 parameters (3*6+6 + 6*2+2), all trainable: a state of 72 header bytes, the configuration, 38
-- floats of parameters, 2 x 38 of slots, the training totals and the CRC.
SELECT hopper.model_state_info(model_state) ->> 'num_params' AS params, octet_length(model_state) AS bytes
FROM m_adadelta;

-- ---- resumed from the checkpoint of iteration 2, two more iterations end bit for bit as the
-- straight run: Adagrad's accumulator, Adadelta's two accumulators, Adamax's moment and infinity
-- norm, Nadam's moments and its step count (its momentum schedule) all travel in the state ----
SELECT uuid AS ckpt FROM hopper.checkpoints_expanded WHERE run_name = 'opt_adagrad' AND iteration = 2 \gset
CALL hopper.fit('pts_packed', 'r_adagrad', :'arch', $$optimizer='Adagrad(lr=0.05)', metrics=['accuracy']$$, 'batch_size=8', 2,
                warm_start_checkpoint => :'ckpt');
SELECT uuid AS ckpt FROM hopper.checkpoints_expanded WHERE run_name = 'opt_adadelta' AND iteration = 2 \gset
CALL hopper.fit('pts_packed', 'r_adadelta', :'arch', $$optimizer='adadelta', metrics=['accuracy']$$, 'batch_size=8', 2,
                warm_start_checkpoint => :'ckpt');
SELECT uuid AS ckpt FROM hopper.checkpoints_expanded WHERE run_name = 'opt_adamax' AND iteration = 2 \gset
CALL hopper.fit('pts_packed', 'r_adamax', :'arch', $$optimizer='Adamax(learning_rate=0.02, beta_1=0.85, beta_2=0.99)', metrics=['accuracy']$$, 'batch_size=8', 2,
                warm_start_checkpoint => :'ckpt');
SELECT uuid AS ckpt FROM hopper.checkpoints_expanded WHERE run_name = 'opt_nadam' AND iteration = 2 \gset
CALL hopper.fit('pts_packed', 'r_nadam', :'arch', $$optimizer='Nadam(lr=0.02, schedule_decay=0.004)', metrics=['accuracy']$$, 'batch_size=8', 2,
                warm_start_checkpoint => :'ckpt');
SELECT 'adagrad' AS opt, a.model_state = b.model_state AS resumed_exactly FROM m_adagrad a, r_adagrad b
UNION ALL
SELECT 'adadelta' AS opt, a.model_state = b.model_state AS resumed_exactly FROM m_adadelta a, r_adadelta b
UNION ALL
SELECT 'adamax' AS opt, a.model_state = b.model_state AS resumed_exactly FROM m_adamax a, r_adamax b
UNION ALL
SELECT 'nadam' AS opt, a.model_state = b.model_state AS resumed_exactly FROM m_nadam a, r_nadam b
ORDER BY opt;
-- Another optimizer from a checkpoint keeps the weights and starts its own slots: Adagrad's
-- accumulator at initial_accumulator_value, as a fresh Adagrad does (test_optimizer.cpp reads it).
SELECT uuid AS ckpt FROM hopper.checkpoints_expanded WHERE run_name = 'opt_adamax' AND iteration = 4 \gset
CALL hopper.fit('pts_packed', 'switched', :'arch', $$optimizer='Adagrad(lr=0.05, initial_accumulator_value=0.5)'$$,
                'batch_size=8', 1, warm_start_checkpoint => :'ckpt');
SELECT model_config -> 'compile' -> 'optimizer' ->> 'name' AS optimizer,
       hopper.model_state_info(model_state) ->> 'optimizer_slots' AS slots
FROM switched;

-- ---- names hopper knows but does not implement: 0A000; unknown names: 22023 with the list ----
SELECT pg_temp.try($$CALL hopper.fit('pts_packed', 'no', '{"input_dim": 3, "layers": [{"units": 2, "activation": "softmax"}]}', $q$optimizer='Ftrl(lr=0.1)'$q$, '', 1)$$);
SELECT pg_temp.try($$CALL hopper.fit('pts_packed', 'no', '{"input_dim": 3, "layers": [{"units": 2, "activation": "softmax"}]}', $q$optimizer='AdamW'$q$, '', 1)$$);
SELECT pg_temp.try($$CALL hopper.fit('pts_packed', 'no', '{"input_dim": 3, "layers": [{"units": 2, "activation": "softmax"}]}', $q$optimizer='keras.optimizers.Lion'$q$, '', 1)$$);
SELECT pg_temp.try($$CALL hopper.fit('pts_packed', 'no', '{"input_dim": 3, "layers": [{"units": 2, "activation": "softmax"}]}', $q$optimizer='Adagradd'$q$, '', 1)$$);
SELECT pg_temp.try($$CALL hopper.fit('pts_packed', 'no', '{"input_dim": 3, "layers": [{"units": 2, "activation": "softmax"}]}', $q$optimizer='Nadam(decay=0.01)'$q$, '', 1)$$);
SELECT pg_temp.try($$CALL hopper.fit('pts_packed', 'no', '{"input_dim": 3, "layers": [{"units": 2, "activation": "softmax"}]}', $q$optimizer='Adadelta(momentum=0.9)'$q$, '', 1)$$);

-- ---- the MADlib facade: MADlib's transfer-learning notebook compiles with optimizer='adadelta' ----
CREATE EXTENSION hopper_madlib;
SELECT madlib.training_preprocessor_dl('pts', 'pts_madlib_packed', 'y', 'x');
SELECT madlib.load_keras_model('model_arch_library', $$
{"class_name": "Sequential", "config": [
 {"class_name": "Dense", "config": {"name": "h", "activation": "tanh", "units": 6, "batch_input_shape": [null, 3]}},
 {"class_name": "Dense", "config": {"name": "out", "activation": "softmax", "units": 2}}]}
$$);
SELECT madlib.madlib_keras_fit('pts_madlib_packed', 'madlib_adadelta', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adadelta', metrics=['accuracy'] $$, $$ batch_size=8, epochs=1 $$, 3);
SELECT madlib.madlib_keras_fit('pts_madlib_packed', 'madlib_nadam', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='Nadam(lr=0.01)', metrics=['accuracy'] $$, $$ batch_size=8 $$, 3);
SELECT madlib.madlib_keras_fit('pts_madlib_packed', 'madlib_adagrad', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='Adagrad(lr=0.01)', metrics=['accuracy'] $$, $$ batch_size=8 $$, 3);
SELECT madlib.madlib_keras_fit('pts_madlib_packed', 'madlib_adamax', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='Adamax(lr=0.002, beta_1=0.9, beta_2=0.999)', metrics=['accuracy'] $$,
    $$ batch_size=8 $$, 3);
SELECT 'adadelta' AS opt, btrim(compile_params) AS compile_params, array_length(training_loss, 1) AS losses,
       training_loss_final > 0 AS finite_loss FROM madlib_adadelta_summary
UNION ALL
SELECT 'adagrad', btrim(compile_params), array_length(training_loss, 1), training_loss_final > 0 FROM madlib_adagrad_summary
UNION ALL
SELECT 'adamax', btrim(compile_params), array_length(training_loss, 1), training_loss_final > 0 FROM madlib_adamax_summary
UNION ALL
SELECT 'nadam', btrim(compile_params), array_length(training_loss, 1), training_loss_final > 0 FROM madlib_nadam_summary
ORDER BY 1;
SELECT pg_temp.try($$SELECT madlib.madlib_keras_fit('pts_madlib_packed', 'madlib_ftrl', 'model_arch_library', 1,
    $q$ loss='categorical_crossentropy', optimizer='Ftrl' $q$, $q$ batch_size=8 $q$, 1)$$);

DROP SCHEMA test_optimizers CASCADE;
DROP EXTENSION hopper_madlib;
