-- A regression target of one numeric column is standardized for training by default (scale 'auto',
-- or 'standardize'): the summary records its mean and deviation, the buffers keep it raw, and the
-- model (its architecture's target_scaling) learns (y - mean) / sd and gives predictions, losses
-- and metrics back in the target's own units. Packed raw, as before, a network starting near 0 fit
-- wage data (mean ~9) worse than predicting the mean and salaries (~113,000) at 17x the mean's
-- MSE with the defaults (a user sweep). Tables packed before it (no target_mean column) and scale
-- 'none' train raw.
CREATE SCHEMA test_target_scaling;
SET search_path = test_target_scaling, public;
SET client_min_messages = warning;

-- Salaries-like: around 1e5, from three features and deterministic noise; every fifth row tests.
CREATE TABLE sal AS
SELECT g AS id, (g % 9)::float8 AS years, ((g * 7) % 5)::float8 AS rank, (g % 2)::float8 AS discipline,
       (80000 + 6000 * (g % 9) + 9000 * ((g * 7) % 5) + 5000 * (g % 2) + ((g * 7919) % 2001 - 1000) * 4)::integer
           AS salary
FROM generate_series(1, 1000) g;
CREATE TABLE sal_train AS SELECT * FROM sal WHERE id % 5 <> 0;
CREATE TABLE sal_test AS SELECT * FROM sal WHERE id % 5 = 0;
-- Wage-like: around 10.
CREATE TABLE wage AS
SELECT g AS id, (g % 13)::float8 AS educ, ((g * 3) % 11)::float8 AS exper,
       (4 + 0.6 * (g % 13) + 0.3 * ((g * 3) % 11) + ((g * 7919) % 101 - 50) / 25.0)::numeric(6, 2) AS wage
FROM generate_series(1, 1000) g;
CREATE TABLE wage_train AS SELECT * FROM wage WHERE id % 5 <> 0;
CREATE TABLE wage_test AS SELECT * FROM wage WHERE id % 5 = 0;

SET client_min_messages = notice;
SELECT hopper.preprocess('sal_train', 'sal_packed', 'salary', 'years, rank, discipline',
                         response_type => 'regression', num_segments => 1);
SELECT hopper.preprocess_validation('sal_test', 'sal_val', 'salary', 'years, rank, discipline', 'sal_packed');
SELECT hopper.preprocess('wage_train', 'wage_packed', 'wage', 'educ, exper', num_segments => 1);
SELECT hopper.preprocess_validation('wage_test', 'wage_val', 'wage', 'educ, exper', 'wage_packed');
SET client_min_messages = warning;
-- The training rows' statistics, which the validation table takes; the buffers keep the raw target.
SELECT round(target_mean::numeric, 2) AS mean, round(target_stddev::numeric, 2) AS sd FROM sal_packed_summary;
SELECT abs(s.target_mean - (SELECT avg(salary) FROM sal_train)) < 1e-6
       AND abs(s.target_stddev - (SELECT stddev_pop(salary) FROM sal_train)) < 1e-6 AS training_rows_stats,
       v.target_mean = s.target_mean AND v.target_stddev = s.target_stddev AS validation_takes_training
FROM sal_packed_summary s, sal_val_summary v;
SELECT min(y) > 50000 AS raw_in_buffers FROM sal_packed, unnest(dependent_var) y;

-- The defaults (Adam 0.001, batch 32), 20 epochs: clearly below the mean's MSE on the test rows.
CREATE FUNCTION mean_mse(train regclass, test regclass, col text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE r float8;
BEGIN
    EXECUTE format('SELECT avg((t.%1$I - m.mu)^2) FROM %2$s t, (SELECT avg(%1$I) AS mu FROM %3$s) m', col, test, train)
        INTO r;
    RETURN r;
END $$;
CALL hopper.fit('sal_packed', 'sal_model', '{"layers": [{"units": 16, "activation": "relu"}, {"units": 1}]}',
                '{"metrics": ["mse", "mae"]}', NULL, 20, validation_table => 'sal_val', name => 'sal_fit');
CALL hopper.fit('wage_packed', 'wage_model', '{"layers": [{"units": 16, "activation": "relu"}, {"units": 1}]}',
                '{"metrics": ["mse", "mae"]}', NULL, 20, validation_table => 'wage_val');
SELECT model_config -> 'architecture' -> 'target_scaling' IS NOT NULL AS carries_scaling FROM sal_model;
SELECT e.loss < 0.5 * mean_mse('sal_train', 'sal_test', 'salary') AS sal_beats_mean,
       e.loss > 1e5 AS sal_in_own_units, (e.metrics ->> 'mean_squared_error')::float8 = e.loss AS mse_is_loss
FROM hopper.evaluate('sal_model', 'sal_val') e;
SELECT e.loss < 0.5 * mean_mse('wage_train', 'wage_test', 'wage') AS wage_beats_mean
FROM hopper.evaluate('wage_model', 'wage_val') e;
-- Training's and validation's losses in _info are in own units too: validation's equals evaluate's.
SELECT abs(i.validation_loss_final - e.loss) <= 1e-6 * e.loss AS validation_is_evaluate,
       i.training_loss_final > 1e5 AS training_in_own_units
FROM sal_model_info i, hopper.evaluate('sal_model', 'sal_val') e;

-- hopper.predict, predict_value by name and hopper.evaluate agree, in own units.
SELECT hopper.predict('sal_model', 'sal_test', 'id', 'years, rank, discipline', 'sal_pred');
SELECT hopper.create_model('sal') > 0 AS created;
SELECT hopper.register_model_version('sal', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'sal_fit')) AS v1;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE (hopper.predict_value('sal', ARRAY[t.years, t.rank, t.discipline]))[1]::float8
                              IS DISTINCT FROM p.estimated_salary) AS value_differs,
       min(p.estimated_salary) > 50000 AS predictions_in_own_units,
       abs(avg((p.estimated_salary - t.salary)^2) - (SELECT loss FROM hopper.evaluate('sal_model', 'sal_val')))
           <= 1e-4 * avg((p.estimated_salary - t.salary)^2) AS predict_agrees_with_evaluate
FROM sal_test t JOIN sal_pred p USING (id);

-- scale => 'none' keeps the target raw (as hopper_madlib packs): no statistics, the old NOTICE.
SET client_min_messages = notice;
SELECT hopper.preprocess('sal_train', 'sal_raw', 'salary', 'years, rank, discipline',
                         response_type => 'regression', num_segments => 1, scale => 'none');
SET client_min_messages = warning;
SELECT target_mean IS NULL AND target_stddev IS NULL AS raw FROM sal_raw_summary;
-- A summary written before hopper standardized targets (no such columns) trains raw, as it did.
SELECT hopper.preprocess('sal_train', 'sal_old', 'salary', 'years, rank, discipline',
                         response_type => 'regression', num_segments => 1);
ALTER TABLE sal_old_summary DROP COLUMN target_mean, DROP COLUMN target_stddev;
CALL hopper.fit('sal_old', 'sal_old_model', '{"layers": [{"units": 16, "activation": "relu"}, {"units": 1}]}',
                '{"metrics": ["mse"]}', NULL, 2);
CALL hopper.fit('sal_raw', 'sal_raw_model', '{"layers": [{"units": 16, "activation": "relu"}, {"units": 1}]}',
                '{"metrics": ["mse"]}', NULL, 2);
SELECT (SELECT model_config -> 'architecture' -> 'target_scaling' FROM sal_old_model) IS NULL AS old_raw,
       (SELECT model_config -> 'architecture' -> 'target_scaling' FROM sal_raw_model) IS NULL AS none_raw;
-- Raw, the defaults stay far from the target (the predictions near 0 of the user sweep).
SELECT hopper.preprocess_validation('sal_test', 'sal_raw_val', 'salary', 'years, rank, discipline', 'sal_raw');
SELECT e.loss > 10 * mean_mse('sal_train', 'sal_test', 'salary') AS raw_worse_than_mean
FROM hopper.evaluate('sal_raw_model', 'sal_raw_val') e;

-- A constant target has no deviation: it is centred only (scale 1). Raw, a constant 1e9 diverged
-- in its first iteration (a sweep).
CREATE TABLE flat AS SELECT g AS id, (g % 3)::float8 AS x, 1e9::float8 AS y FROM generate_series(1, 40) g;
SELECT hopper.preprocess('flat', 'flat_packed', 'y', 'x', num_segments => 1);
SELECT target_mean, target_stddev FROM flat_packed_summary;
CALL hopper.fit('flat_packed', 'flat_model', '{"layers": [{"units": 4, "activation": "relu"}, {"units": 1}]}', NULL, NULL, 3);
SELECT training_loss_final < 1 AS learnt_the_constant, status FROM flat_model_info;
-- A scale float32 cannot hold as a normal number is refused (training flushes subnormals: 0).
CALL hopper.fit('flat_packed', 'flat_bad', '{"layers": [{"units": 1}], "target_scaling": {"offset": 0, "scale": 1e-45}}',
                NULL, NULL, 1);

-- A target varying by less than float32's steps at its magnitude (9 around 1,234,567,909, where
-- float32 keeps steps of 128) is warned of with the view that keeps it (it packed as one value and
-- trained to a loss of 0, a sweep).
CREATE TABLE offset_target AS
SELECT g AS id, (g % 7)::float8 AS x, (1234567890 + 3 * (g % 7))::float8 AS y FROM generate_series(1, 60) g;
SET client_min_messages = warning;
SELECT hopper.preprocess('offset_target', 'offset_packed', 'y', 'x', num_segments => 1);

-- An architecture that states its scaling keeps it on a standardized pack (it was replaced).
CALL hopper.fit('sal_packed', 'sal_stated', '{"layers": [{"units": 8, "activation": "relu"}, {"units": 1}],
                "target_scaling": {"offset": 100000, "scale": 30000}}', NULL, NULL, 1);
SELECT model_config -> 'architecture' -> 'target_scaling' AS stated FROM sal_stated;

-- A warm start keeps the scaling its weights were trained under: a model trained raw continued on
-- a table packed with the defaults stays raw, its model table says so, and a WARNING tells (the
-- model table said the new pack's while the model used its own, a sweep).
CALL hopper.fit('sal_raw', 'sal_continued', '{"layers": [{"units": 8, "activation": "relu"}, {"units": 1}]}', NULL, NULL, 1);
CALL hopper.fit('sal_packed', 'sal_continued', '{"layers": [{"units": 8, "activation": "relu"}, {"units": 1}]}', NULL, NULL, 1,
                warm_start => true);
SELECT model_config -> 'architecture' -> 'target_scaling' IS NULL AS still_raw,
       hopper.model_state_info(model_state)::text NOT LIKE '%target_scaling%' AS state_raw
FROM sal_continued;

-- A sigmoid output cannot reach a standardized target: it trains on the raw target, as before.
CREATE TABLE unit AS SELECT g AS id, (g % 3)::float8 AS x, (g % 3) / 2.0 * 0.8 + 0.1 AS y FROM generate_series(1, 60) g;
SELECT hopper.preprocess('unit', 'unit_packed', 'y', 'x', num_segments => 1);
CALL hopper.fit('unit_packed', 'unit_model', '{"layers": [{"units": 1, "activation": "sigmoid"}]}', '{"loss": "mse"}',
                NULL, 1);
SELECT model_config -> 'architecture' -> 'target_scaling' IS NULL AS sigmoid_raw FROM unit_model;
-- An architecture stating a scaling on a bounded output is refused.
CALL hopper.fit('unit_packed', 'unit_bad', '{"layers": [{"units": 1, "activation": "sigmoid"}],
                "target_scaling": {"offset": 1, "scale": 2}}', '{"loss": "mse"}', NULL, 1);
