-- hopper_madlib's refusals (issue 25): a required argument that is NULL is refused before anything
-- runs, with 22004 naming the argument (table names in MADlib's words "NULL/empty input table
-- name", which MADlib's own tests look for), never a syntax error showing generated SQL; and output
-- names that need quoting (spaces, capitals, another schema) work end to end.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS hopper_madlib;
CREATE SCHEMA test_madlib_refusals;
CREATE SCHEMA "Other Schema";
SET search_path = test_madlib_refusals, public;
-- The SQLSTATE and message of a statement's error (or that there was none).
CREATE FUNCTION refusal(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE pts AS
SELECT g AS id, ARRAY[g % 3, (g % 3) * 2 + g % 2, g % 5]::float8[] AS x, ('c' || g % 3)::varchar AS y
FROM generate_series(1, 90) g;
\set arch '{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d1", "activation": "softmax", "units": 3, "batch_input_shape": [null, 3], "use_bias": true}}], "backend": "tensorflow"}'
\set compile '$$ loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.1)'', metrics=[''accuracy''] $$'

-- ---- odd output names, end to end ----
SELECT madlib.training_preprocessor_dl('pts', '"Packed Points"', 'y', 'x', 30);
SELECT madlib.validation_preprocessor_dl('pts', '"Other Schema"."Packed Val"', 'y', 'x', '"Packed Points"', 30);
SELECT madlib.load_keras_model('"Arch Table"', :'arch'::json, NULL, 'softmax');
SELECT madlib.madlib_keras_fit('"Packed Points"', '"Mad Model"', '"Arch Table"', 1, :compile, 'batch_size=10', 2,
                               FALSE, '"Other Schema"."Packed Val"');
SELECT model, num_classes, madlib_version LIKE 'hopper %' AS versioned FROM "Mad Model_summary";
SELECT madlib.madlib_keras_fit('"Packed Points"', '"Other Schema".MadModel', '"Arch Table"', 1, :compile, 'batch_size=10', 1);
SELECT model, num_classes FROM "Other Schema".madmodel_summary;
SELECT madlib.madlib_keras_evaluate('"Mad Model"', '"Other Schema"."Packed Val"', '"Mad Eval"');
SELECT metrics_type, loss_type FROM "Mad Eval";
SELECT madlib.madlib_keras_predict('"Other Schema".madmodel', 'pts', 'id', 'x', '"Other Schema"."Mad Predict"');
SELECT count(*) AS predicted FROM "Other Schema"."Mad Predict";
SELECT madlib.load_model_selection_table('"Arch Table"', '"MST Table"', ARRAY[1], ARRAY[:compile], ARRAY['batch_size=10']);
SELECT madlib.madlib_keras_fit_multiple_model('"Packed Points"', '"Multi Model"', '"MST Table"', 1);
SELECT model_info, num_classes FROM "Multi Model_summary";
SELECT madlib.madlib_keras_fit_multiple_model('"Packed Points"', '"Other Schema"."Multi Model"', '"MST Table"', 1);
SELECT model_info FROM "Other Schema"."Multi Model_summary";
-- An output that exists is refused before training (hopper claims the names first).
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', '"Mad Model"', '"Arch Table"', 1, $$ || quote_literal(:compile) || $$, '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_evaluate('"Mad Model"', '"Other Schema"."Packed Val"', '"Mad Eval"')$$);
-- A name that is not one (an unquoted space): 42602 before anything runs.
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', 'bad name', '"Arch Table"', 1, $$ || quote_literal(:compile) || $$, '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit_multiple_model('"Packed Points"', 'bad name', '"MST Table"', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_evaluate('"Mad Model"', '"Other Schema"."Packed Val"', 'bad name')$$);
SELECT refusal($$SELECT madlib.madlib_keras_predict('"Mad Model"', 'pts', 'id', 'x', 'bad name')$$);
-- A packed table is buffers of rows: predict refuses it, as MADlib does (issue 30); nothing is written.
SELECT refusal($$SELECT madlib.madlib_keras_predict('"Mad Model"', '"Packed Points"', 'buffer_id', 'x', 'pred_packed')$$);
SELECT refusal($$SELECT madlib.madlib_keras_predict_byom('"Arch Table"', 1, '"Packed Points"', 'buffer_id', 'x', 'pred_packed')$$);
SELECT to_regclass('pred_packed') AS not_written;

-- ---- every required argument NULL (and table names empty) ----
SELECT refusal($$SELECT madlib.training_preprocessor_dl(NULL, 'o', 'y', 'x')$$);
SELECT refusal($$SELECT madlib.training_preprocessor_dl('', 'o', 'y', 'x')$$);
SELECT refusal($$SELECT madlib.training_preprocessor_dl('pts', NULL, 'y', 'x')$$);
SELECT refusal($$SELECT madlib.training_preprocessor_dl('pts', ' ', 'y', 'x')$$);
SELECT refusal($$SELECT madlib.training_preprocessor_dl('pts', 'o', NULL, 'x')$$);
SELECT refusal($$SELECT madlib.training_preprocessor_dl('pts', 'o', 'y', NULL)$$);
SELECT refusal($$SELECT madlib.validation_preprocessor_dl(NULL, 'o', 'y', 'x', '"Packed Points"')$$);
SELECT refusal($$SELECT madlib.validation_preprocessor_dl('pts', NULL, 'y', 'x', '"Packed Points"')$$);
SELECT refusal($$SELECT madlib.validation_preprocessor_dl('pts', 'o', NULL, 'x', '"Packed Points"')$$);
SELECT refusal($$SELECT madlib.validation_preprocessor_dl('pts', 'o', 'y', NULL, '"Packed Points"')$$);
SELECT refusal($$SELECT madlib.validation_preprocessor_dl('pts', 'o', 'y', 'x', NULL)$$);
SELECT refusal($$SELECT madlib.load_keras_model(NULL, '{}'::json)$$);
SELECT refusal($$SELECT madlib.load_keras_model('"Arch Table"', NULL)$$);
SELECT refusal($$SELECT madlib.delete_keras_model(NULL, 1)$$);
SELECT refusal($$SELECT madlib.delete_keras_model('"Arch Table"', NULL)$$);
SELECT refusal($$SELECT madlib.load_model_selection_table(NULL, 'm', ARRAY[1], ARRAY['loss=''mse'''], ARRAY[''])$$);
SELECT refusal($$SELECT madlib.load_model_selection_table('"Arch Table"', NULL, ARRAY[1], ARRAY['loss=''mse'''], ARRAY[''])$$);
SELECT refusal($$SELECT madlib.load_model_selection_table('"Arch Table"', 'm', NULL, ARRAY['loss=''mse'''], ARRAY[''])$$);
SELECT refusal($$SELECT madlib.load_model_selection_table('"Arch Table"', 'm', ARRAY[1], NULL, ARRAY[''])$$);
SELECT refusal($$SELECT madlib.load_model_selection_table('"Arch Table"', 'm', ARRAY[1], ARRAY['loss=''mse'''], NULL)$$);
SELECT refusal($$SELECT madlib.generate_model_configs(NULL, 'm', ARRAY[1], '{''loss'': [''mse'']}', '{}')$$);
SELECT refusal($$SELECT madlib.generate_model_configs('"Arch Table"', NULL, ARRAY[1], '{''loss'': [''mse'']}', '{}')$$);
SELECT refusal($$SELECT madlib.generate_model_configs('"Arch Table"', 'm', NULL, '{''loss'': [''mse'']}', '{}')$$);
SELECT refusal($$SELECT madlib.generate_model_configs('"Arch Table"', 'm', ARRAY[1], NULL, '{}')$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit(NULL, 'm', '"Arch Table"', 1, 'loss=''mse''', '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', NULL, '"Arch Table"', 1, 'loss=''mse''', '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', '', '"Arch Table"', 1, 'loss=''mse''', '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', 'm', NULL, 1, 'loss=''mse''', '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', 'm', '"Arch Table"', NULL, 'loss=''mse''', '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', 'm', '"Arch Table"', 1, NULL, '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', 'm', '"Arch Table"', 1, 'loss=''mse''', '', NULL)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit_multiple_model(NULL, 'm', '"MST Table"', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit_multiple_model('"Packed Points"', NULL, '"MST Table"', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit_multiple_model('"Packed Points"', '', '"MST Table"', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit_multiple_model('"Packed Points"', 'm', NULL, 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit_multiple_model('"Packed Points"', 'm', '"MST Table"', NULL)$$);
SELECT refusal($$SELECT madlib.madlib_keras_automl(NULL, 'm', '"Arch Table"', 's', ARRAY[1], '{''loss'': [''mse'']}', '{}')$$);
SELECT refusal($$SELECT madlib.madlib_keras_automl('"Packed Points"', NULL, '"Arch Table"', 's', ARRAY[1], '{''loss'': [''mse'']}', '{}')$$);
SELECT refusal($$SELECT madlib.madlib_keras_automl('"Packed Points"', 'm', NULL, 's', ARRAY[1], '{''loss'': [''mse'']}', '{}')$$);
SELECT refusal($$SELECT madlib.madlib_keras_automl('"Packed Points"', 'm', '"Arch Table"', NULL, ARRAY[1], '{''loss'': [''mse'']}', '{}')$$);
SELECT refusal($$SELECT madlib.madlib_keras_automl('"Packed Points"', 'm', '"Arch Table"', 's', NULL, '{''loss'': [''mse'']}', '{}')$$);
SELECT refusal($$SELECT madlib.madlib_keras_automl('"Packed Points"', 'm', '"Arch Table"', 's', ARRAY[1], NULL, '{}')$$);
SELECT refusal($$SELECT madlib.madlib_keras_evaluate(NULL, '"Packed Points"', 'e')$$);
SELECT refusal($$SELECT madlib.madlib_keras_evaluate('"Mad Model"', NULL, 'e')$$);
SELECT refusal($$SELECT madlib.madlib_keras_evaluate('"Mad Model"', '"Packed Points"', NULL)$$);
SELECT refusal($$SELECT madlib.madlib_keras_evaluate('"Mad Model"', '"Packed Points"', '')$$);
SELECT refusal($$SELECT madlib.madlib_keras_predict(NULL, 'pts', 'id', 'x', 'p')$$);
SELECT refusal($$SELECT madlib.madlib_keras_predict('"Mad Model"', NULL, 'id', 'x', 'p')$$);
SELECT refusal($$SELECT madlib.madlib_keras_predict('"Mad Model"', 'pts', NULL, 'x', 'p')$$);
SELECT refusal($$SELECT madlib.madlib_keras_predict('"Mad Model"', 'pts', 'id', NULL, 'p')$$);
SELECT refusal($$SELECT madlib.madlib_keras_predict('"Mad Model"', 'pts', 'id', 'x', NULL)$$);
-- Nothing was written by the refused calls.
SELECT c.relname AS written_by_a_refusal FROM pg_class c
WHERE c.relnamespace = 'test_madlib_refusals'::regnamespace AND c.relname IN ('o', 'm', 'e', 'p', 's') ORDER BY 1;

-- A column of a type some role created (here an enum whose cast to text records its calls) is
-- refused before any cast reads it (42804): its owner's function would run as the caller.
CREATE TABLE cast_calls (n int);
CREATE TYPE paint AS ENUM ('red', 'green');
CREATE FUNCTION paint_text(p paint) RETURNS text LANGUAGE plpgsql AS $$
BEGIN INSERT INTO cast_calls VALUES (1); RETURN p::varchar; END $$;
CREATE CAST (paint AS text) WITH FUNCTION paint_text(paint);
CREATE TABLE painted AS SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x,
  (ARRAY['red', 'green'])[1 + g % 2]::paint AS y FROM generate_series(1, 40) g;
SELECT refusal($$SELECT madlib.training_preprocessor_dl('painted', 'painted_multi', 'y, id', 'x')$$);
SELECT count(*) AS cast_calls FROM cast_calls;
-- The same for hopper's kinds of tables the facade reads itself, and for domains (a value assigned to
-- one runs its CHECK): an architecture table whose model_arch has a cast to jsonb, a model whose
-- _info has a type of its own, a label that is a domain with a CHECK.
CREATE TYPE wrapped AS (j text);
CREATE FUNCTION wrapped_jsonb(w wrapped) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN INSERT INTO cast_calls VALUES (2); RETURN w.j::jsonb; END $$;
CREATE CAST (wrapped AS jsonb) WITH FUNCTION wrapped_jsonb(wrapped);
CREATE TABLE wrapped_arch AS SELECT model_id, ROW(model_arch::text)::wrapped AS model_arch, model_weights
FROM "Arch Table";
CREATE TABLE "Mad Model Copy" AS SELECT * FROM "Mad Model";
CREATE TABLE "Mad Model Copy_summary" AS SELECT * FROM "Mad Model_summary";
CREATE TABLE "Mad Model Copy_info" AS SELECT 1 AS mst_key, ROW('x')::wrapped AS loss_type;
CREATE FUNCTION stars_ok(v int) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN INSERT INTO cast_calls VALUES (3); RETURN true; END $$;
CREATE DOMAIN stars AS int CHECK (stars_ok(VALUE));
CREATE TABLE starred AS SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x,
  CASE WHEN g % 10 = 0 THEN NULL ELSE g % 3 END::stars AS y FROM generate_series(1, 40) g;
TRUNCATE cast_calls;
SELECT refusal($$SELECT madlib.madlib_keras_fit('"Packed Points"', 'wrapped_model', 'wrapped_arch', 1, $$ || quote_literal(:compile) || $$, '', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_evaluate('"Mad Model Copy"', '"Other Schema"."Packed Val"', 'wrapped_eval')$$);
SELECT refusal($$SELECT madlib.training_preprocessor_dl('starred', 'starred_packed', 'y', 'x')$$);
SELECT count(*) AS calls_of_casts_and_checks FROM cast_calls;
-- One enum label is read by hopper.preprocess, by the type's output function: packed, no cast called.
SELECT madlib.training_preprocessor_dl('painted', 'painted_packed', 'y', 'x');
SELECT class_values, (SELECT count(*) FROM cast_calls) AS cast_calls FROM painted_packed_summary;

RESET search_path;
DROP SCHEMA test_madlib_refusals, "Other Schema" CASCADE;
DROP EXTENSION hopper_madlib;
