-- hopper_madlib's custom functions (issue 30): MADlib's object_table of Keras losses and metrics
-- (madlib.<object_table>: id, name, description, object). load_top_k_accuracy_function's metrics are
-- hopper's own top_k_accuracy: compile_params naming one train with it, in fit and in model
-- selection tables; an object loaded as a pickle (Python) is stored and refused (0A000, named) where
-- a model would use it; delete_custom_function deletes by id or name and drops the emptied table.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS hopper_madlib;
CREATE SCHEMA test_madlib_custom_functions;
SET search_path = test_madlib_custom_functions, public;
CREATE FUNCTION refusal(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE pts AS
SELECT g AS id, ARRAY[g % 4, (g % 4) * 2 + g % 2, g % 5]::float8[] AS x, ('c' || g % 4)::varchar AS y
FROM generate_series(1, 80) g;
SELECT madlib.training_preprocessor_dl('pts', 'pts_packed', 'y', 'x', 20);
SELECT madlib.load_keras_model('arch', '{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d1", "activation": "softmax", "units": 4, "batch_input_shape": [null, 3], "use_bias": true}}], "backend": "tensorflow"}'::json);

-- ---- loading: MADlib's table in schema madlib, MADlib's names and descriptions ----
SELECT madlib.load_top_k_accuracy_function('regress_custom_functions', 2);
SELECT madlib.load_top_k_accuracy_function('regress_custom_functions', 3);
-- (a pickle: PROTO 4, NONE, STOP)
SELECT madlib.load_custom_function('regress_custom_functions', '\x80044e2e'::bytea, 'rmse', 'root mean square error');
SELECT id, name, description, object IS NOT NULL AS has_object FROM madlib.regress_custom_functions ORDER BY id;
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'madlib.regress_custom_functions'::regclass AND attnum > 0 ORDER BY attnum;

-- ---- using top-k accuracy: fit, evaluate, model selection ----
SELECT madlib.madlib_keras_fit('pts_packed', 'topk_model', 'arch', 1,
    $$ loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['top_2_accuracy'] $$, 'batch_size=10', 2,
    FALSE, NULL, NULL, FALSE, NULL, NULL, 'regress_custom_functions');
SELECT metrics_type, object_table, cardinality(training_metrics) AS evaluated,
       training_metrics_final BETWEEN 0 AND 1 AS in_range FROM topk_model_summary;
-- hopper's own metric trained it: top_k_accuracy with top_k 2.
SELECT compile_params FROM topk_model;
SELECT madlib.madlib_keras_evaluate('topk_model', 'pts_packed', 'topk_eval');
SELECT metric BETWEEN 0 AND 1 AS in_range, metrics_type FROM topk_eval;
SELECT madlib.load_model_selection_table('arch', 'mst_topk', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['top_3_accuracy']$$], ARRAY['batch_size=10'],
    'regress_custom_functions');
SELECT compile_params FROM mst_topk;
SELECT object_table FROM mst_topk_summary;
SELECT madlib.generate_model_configs('arch', 'mst_topk_grid', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam', 'SGD'], 'lr': [0.01]}],
       'metrics': ['top_2_accuracy']}$$, $${'batch_size': [10]}$$, 'grid', NULL, NULL, 'regress_custom_functions');
SELECT mst_key, compile_params::jsonb->'metrics' AS metrics, compile_params::jsonb->'top_k' AS top_k
FROM mst_topk_grid ORDER BY mst_key;
SELECT object_table FROM mst_topk_grid_summary;
SELECT madlib.madlib_keras_fit_multiple_model('pts_packed', 'topk_multi', 'mst_topk_grid', 1);
SELECT count(*) AS models, bool_and(training_metrics_final BETWEEN 0 AND 1) AS in_range FROM topk_multi_info;
SELECT object_table FROM topk_multi_summary;
-- The loss and metrics as compile_params name them, as madlib_keras_fit's summary (not hopper's
-- softmax_cross_entropy and top_k_accuracy), in _info and in evaluate's output.
SELECT DISTINCT metrics_type, loss_type FROM topk_multi_info;
SELECT madlib.madlib_keras_evaluate('topk_multi', 'pts_packed', 'topk_multi_eval', FALSE, 1);
SELECT metrics_type, loss_type FROM topk_multi_eval;
-- automl: Hyperband and Hyperopt draw from a grid naming top_2_accuracy.
SELECT madlib.madlib_keras_automl('pts_packed', 'topk_automl', 'arch', 'topk_automl_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.01, 0.1, 'log']}],
       'metrics': ['top_2_accuracy']}$$, $${'batch_size': [10]}$$, 'hyperband', 'R=2, eta=2, skip_last=0', 1,
    'regress_custom_functions');
SELECT bool_and(compile_params LIKE '%top_k_accuracy%top_k%2%') AS top_k_2, count(*) > 0 AS trained FROM topk_automl_info;
SELECT object_table FROM topk_automl_summary;
SELECT DISTINCT metrics_type, loss_type FROM topk_automl_info;
SELECT object_table FROM topk_automl_mst_summary;
SELECT madlib.madlib_keras_automl('pts_packed', 'topk_hyperopt', 'arch', 'topk_hyperopt_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.01, 0.1]}],
       'metrics': ['top_2_accuracy']}$$, $${'batch_size': [10]}$$, 'hyperopt', 'num_configs=2, num_iterations=1', 1,
    'regress_custom_functions');
SELECT bool_and(compile_params LIKE '%top_k_accuracy%top_k%2%') AS top_k_2, count(*) AS trained FROM topk_hyperopt_info;
SELECT object_table FROM topk_hyperopt_summary;
SELECT DISTINCT metrics_type, loss_type FROM topk_hyperopt_info;

-- ---- refusals ----
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1,
    $c$ loss='categorical_crossentropy', optimizer='SGD', metrics=['rmse'] $c$, NULL, 1,
    FALSE, NULL, NULL, FALSE, NULL, NULL, 'regress_custom_functions')$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1,
    $c$ loss='rmse', optimizer='SGD' $c$, NULL, 1, FALSE, NULL, NULL, FALSE, NULL, NULL, 'regress_custom_functions')$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1,
    $c$ loss='top_2_accuracy', optimizer='SGD' $c$, NULL, 1, FALSE, NULL, NULL, FALSE, NULL, NULL, 'regress_custom_functions')$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1,
    $c$ loss='categorical_crossentropy', optimizer='SGD', metrics=['top_2_accuracy', 'top_3_accuracy'] $c$, NULL, 1,
    FALSE, NULL, NULL, FALSE, NULL, NULL, 'regress_custom_functions')$$);
SELECT refusal($$SELECT madlib.generate_model_configs('arch', 'x_mst', ARRAY[1],
    $c${'loss': ['rmse'], 'optimizer_params_list': [{'optimizer': ['SGD']}]}$c$, '{}', 'grid', NULL, NULL, 'regress_custom_functions')$$);
SELECT refusal($$SELECT madlib.generate_model_configs('arch', 'x_mst', ARRAY[1],
    $c${'loss': ['categorical_crossentropy'], 'metrics': ['top_2_accuracy', 'top_3_accuracy']}$c$, '{}', 'grid', NULL, NULL,
    'regress_custom_functions')$$);
SELECT refusal($$SELECT madlib.madlib_keras_automl('pts_packed', 'x_model', 'arch', 'x_mst', ARRAY[1],
    $c${'loss': ['categorical_crossentropy'], 'metrics': ['rmse']}$c$, '{}', 'hyperband', 'R=2, eta=2', 1,
    'regress_custom_functions')$$);
SELECT refusal($$SELECT madlib.load_model_selection_table('arch', 'x_mst', ARRAY[1],
    ARRAY[$c$loss='categorical_crossentropy', metrics=['rmse']$c$], ARRAY[''], 'regress_custom_functions')$$);
SELECT to_regclass('x_model') IS NULL AND to_regclass('x_mst') IS NULL AS nothing_written;
-- A table that is not there, one named with a schema, one without MADlib's columns.
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1,
    $c$ loss='categorical_crossentropy', optimizer='SGD', metrics=['top_2_accuracy'] $c$, NULL, 1,
    FALSE, NULL, NULL, FALSE, NULL, NULL, 'no_such_functions')$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1,
    $c$ loss='categorical_crossentropy', optimizer='SGD', metrics=['top_2_accuracy'] $c$, NULL, 1,
    FALSE, NULL, NULL, FALSE, NULL, NULL, 'madlib.regress_custom_functions')$$);
CREATE TABLE madlib.regress_not_functions (id int, name text);
SELECT refusal($$SELECT madlib.load_top_k_accuracy_function('regress_not_functions', 2)$$);
DROP TABLE madlib.regress_not_functions;
-- Bad arguments.
SELECT refusal($$SELECT madlib.load_top_k_accuracy_function('regress_custom_functions', 2)$$);
SELECT refusal($$SELECT madlib.load_top_k_accuracy_function('regress_custom_functions', 0)$$);
SELECT refusal($$SELECT madlib.load_top_k_accuracy_function('regress_custom_functions', NULL)$$);
SELECT refusal($$SELECT madlib.load_top_k_accuracy_function(NULL, 2)$$);
SELECT refusal($$SELECT madlib.load_top_k_accuracy_function('', 2)$$);
SELECT refusal($$SELECT madlib.load_custom_function('regress_custom_functions', NULL, 'f')$$);
SELECT refusal($$SELECT madlib.load_custom_function('regress_custom_functions', '\x00'::bytea, NULL)$$);
-- Not a pickle of protocol 2 to 5 (MADlib's dill.loads refuses them): 22023, nothing added.
SELECT refusal($$SELECT madlib.load_custom_function('regress_custom_functions', 'invalid_obj'::bytea, 'f')$$);
SELECT refusal($$SELECT madlib.load_custom_function('regress_custom_functions', '\x80042e00'::bytea, 'f')$$);
SELECT refusal($$SELECT madlib.load_custom_function('regress_custom_functions', '\x80092e'::bytea, 'f')$$);
SELECT refusal($$SELECT madlib.load_custom_function('regress_custom_functions', '\x802e'::bytea, 'f')$$);
SELECT refusal($$SELECT madlib.load_custom_function('no_functions_yet', ''::bytea, 'f')$$);
SELECT to_regclass('madlib.no_functions_yet') AS not_created;
SELECT refusal($$SELECT madlib.delete_custom_function('regress_custom_functions', 99)$$);
SELECT refusal($$SELECT madlib.delete_custom_function('regress_custom_functions', 'nope')$$);
SELECT refusal($$SELECT madlib.delete_custom_function('regress_custom_functions', NULL::integer)$$);
SELECT refusal($$SELECT madlib.delete_custom_function('no_such_functions', 1)$$);

-- ---- deleting: by id, by name; the last one drops the table ----
SELECT madlib.delete_custom_function('regress_custom_functions', 1);
SELECT madlib.delete_custom_function('regress_custom_functions', 'rmse');
SELECT id, name FROM madlib.regress_custom_functions ORDER BY id;
SELECT madlib.delete_custom_function('regress_custom_functions', 'top_3_accuracy');
SELECT to_regclass('madlib.regress_custom_functions') AS gone;
-- A table of the user's with the same columns is used, but never dropped when emptied: hopper drops
-- only a custom function table it made (its mark in hopper.output_tables).
CREATE TABLE madlib.regress_own_functions (id serial, name text PRIMARY KEY, description text, object bytea);
SELECT madlib.load_top_k_accuracy_function('regress_own_functions', 2);
SELECT madlib.delete_custom_function('regress_own_functions', 'top_2_accuracy');
SELECT to_regclass('madlib.regress_own_functions') IS NOT NULL AS kept, count(*) AS functions
FROM madlib.regress_own_functions;
DROP TABLE madlib.regress_own_functions;
-- Another role's table of the same columns is never written: its trigger would run as the caller (a
-- superuser here). 42501 for adding and deleting, and the trigger never fires.
DROP ROLE IF EXISTS regress_cf_mallory;
CREATE ROLE regress_cf_mallory;
GRANT CREATE, USAGE ON SCHEMA madlib TO regress_cf_mallory;
SET ROLE regress_cf_mallory;
CREATE TABLE madlib.regress_trap_functions (id serial, name text PRIMARY KEY, description text, object bytea);
GRANT ALL ON madlib.regress_trap_functions TO PUBLIC;
GRANT ALL ON SEQUENCE madlib.regress_trap_functions_id_seq TO PUBLIC;
CREATE TABLE madlib.regress_trap_witness (who name);
GRANT INSERT ON madlib.regress_trap_witness TO PUBLIC;
CREATE FUNCTION madlib.regress_trap() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN INSERT INTO madlib.regress_trap_witness VALUES (current_user); RETURN COALESCE(NEW, OLD); END $$;
CREATE TRIGGER trap BEFORE INSERT OR DELETE ON madlib.regress_trap_functions
  FOR EACH ROW EXECUTE FUNCTION madlib.regress_trap();
INSERT INTO madlib.regress_trap_functions (name, object) VALUES ('top_5_accuracy', 'x');
-- ... nor is another role's model selection table appended to by generate_model_configs.
CREATE TABLE madlib.regress_trap_mst (mst_key serial, model_id int, compile_params text, fit_params text);
GRANT ALL ON madlib.regress_trap_mst TO PUBLIC;
GRANT ALL ON SEQUENCE madlib.regress_trap_mst_mst_key_seq TO PUBLIC;
CREATE TRIGGER trap BEFORE INSERT ON madlib.regress_trap_mst FOR EACH ROW EXECUTE FUNCTION madlib.regress_trap();
RESET ROLE;
SELECT refusal($$SELECT madlib.generate_model_configs('arch', 'madlib.regress_trap_mst', ARRAY[1],
    $g$ {'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.1]}]} $g$,
    $g$ {'batch_size': [8]} $g$)$$);
SELECT refusal($$SELECT madlib.load_top_k_accuracy_function('regress_trap_functions', 2)$$);
SELECT refusal($$SELECT madlib.load_custom_function('regress_trap_functions', '\x80042e'::bytea, 'f')$$);
SELECT refusal($$SELECT madlib.delete_custom_function('regress_trap_functions', 'top_5_accuracy')$$);
SELECT who, count(*) FROM madlib.regress_trap_witness GROUP BY who;
DROP TABLE madlib.regress_trap_functions, madlib.regress_trap_mst, madlib.regress_trap_witness;
DROP FUNCTION madlib.regress_trap();
REVOKE ALL ON SCHEMA madlib FROM regress_cf_mallory;
DROP ROLE regress_cf_mallory;

DROP SCHEMA test_madlib_custom_functions CASCADE;
