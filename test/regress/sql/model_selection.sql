-- Model selection tables: load_model_arch, delete_model_arch, load_model_selection_table,
-- generate_model_configs (grid and seeded random search), and every error branch.
-- Each test file works in its own schema, so test files never see each other's tables.
CREATE SCHEMA test_model_selection;
SET search_path = test_model_selection, public;
SET client_min_messages = warning;

-- SQLSTATE of a statement that must fail (the tests print the message too, where it matters).
CREATE FUNCTION ms_sqlstate(statement text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE statement;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

-- A small trained model, for transfer-learning weights.
CREATE TABLE ms_points AS
SELECT g AS id, ARRAY[(g % 3) * 2.0 + sin(g) * 0.3, cos(g) * 0.3]::float8[] AS x, (g % 3)::text AS label
FROM generate_series(1, 120) g;
SELECT hopper.preprocess('ms_points', 'ms_packed', 'label', 'x', buffer_size => 20, num_segments => 2);
CALL hopper.fit('ms_packed', 'ms_trained',
    '{"input_dim": 2, "layers": [{"units": 4, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}', '', '', 1);

-- load_model_arch creates the table and numbers the architectures; Keras JSON is accepted.
SELECT hopper.load_model_arch('ms_arch',
    '{"input_dim": 2, "layers": [{"units": 4, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
    'small', 'one hidden layer of 4') AS model_id;
SELECT hopper.load_model_arch('ms_arch',
    '{"class_name": "Sequential", "config": {"name": "s", "layers": [
        {"class_name": "Dense", "config": {"units": 8, "activation": "tanh", "batch_input_shape": [null, 2]}},
        {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}') AS model_id;
SELECT hopper.load_model_arch('ms_arch', '{"input_dim": 2, "layers": [{"units": 1, "activation": "linear"}]}',
                              name => 'regression') AS model_id;
-- Transfer learning: weights of a trained model with the same architecture.
SELECT hopper.load_model_arch('ms_arch',
    '{"input_dim": 2, "layers": [{"units": 4, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
    'small, pretrained', NULL, (SELECT model_state FROM ms_trained)) AS model_id;
SELECT model_id, model_arch -> 'layers' -> 0 ->> 'units' AS first_units, model_weights IS NOT NULL AS has_weights,
       name, description, created_at <= now() AS dated
FROM ms_arch ORDER BY model_id;
SELECT column_name, data_type, is_nullable FROM information_schema.columns
WHERE table_name = 'ms_arch' ORDER BY ordinal_position;

-- load_model_arch errors.
SELECT hopper.load_model_arch(NULL, '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}');
SELECT hopper.load_model_arch('ms_arch', NULL);
SELECT hopper.load_model_arch('ms_arch', '{"input_dim": 2, "layers": [{"units": 3, "activation": "swish"}]}');
SELECT hopper.load_model_arch('ms_arch', '[1, 2]');
SELECT hopper.load_model_arch('ms_arch', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                              model_weights => '\x0102'::bytea);
SELECT hopper.load_model_arch('ms_arch', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                              model_weights => (SELECT model_state FROM ms_trained));
SELECT hopper.load_model_arch('ms_arch',
    '{"input_dim": 2, "layers": [{"units": 4, "activation": "tanh"}, {"units": 3, "activation": "softmax"}]}',
    model_weights => (SELECT model_state FROM ms_trained));
SELECT hopper.load_model_arch('ms_arch; DROP TABLE ms_arch', '{"input_dim": 2, "layers": [{"units": 1}]}');
SELECT hopper.load_model_arch('no_such_schema.ms_arch', '{"input_dim": 2, "layers": [{"units": 1}]}');
-- Existing tables made elsewhere: only the columns a call fills are required.
CREATE TABLE ms_arch_manual (model_id integer GENERATED ALWAYS AS IDENTITY, model_arch json);
SELECT hopper.load_model_arch('ms_arch_manual', '{"input_dim": 2, "layers": [{"units": 1}]}') AS model_id;
SELECT model_id, model_arch::text FROM ms_arch_manual;
SELECT hopper.load_model_arch('ms_arch_manual', '{"input_dim": 2, "layers": [{"units": 1}]}', name => 'x');
SELECT hopper.load_model_arch('ms_arch_manual', '{"input_dim": 2, "layers": [{"units": 1}]}', description => 'x');
SELECT hopper.load_model_arch('ms_arch_manual', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                              model_weights => (SELECT model_state FROM ms_trained));
SELECT hopper.load_model_arch('ms_arch_manual',
    '{"input_dim": 2, "layers": [{"units": 4, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
    model_weights => (SELECT model_state FROM ms_trained));
SELECT hopper.load_model_arch('ms_arch_model_id_seq', '{"input_dim": 2, "layers": [{"units": 1}]}');
CREATE TABLE ms_arch_nodefault (model_id integer, model_arch jsonb);
SELECT hopper.load_model_arch('ms_arch_nodefault', '{"input_dim": 2, "layers": [{"units": 1}]}');
CREATE TABLE ms_arch_noid (id serial, model_arch jsonb);
SELECT hopper.load_model_arch('ms_arch_noid', '{"input_dim": 2, "layers": [{"units": 1}]}');
CREATE TABLE ms_arch_text (model_id serial, model_arch text);
SELECT hopper.load_model_arch('ms_arch_text', '{"input_dim": 2, "layers": [{"units": 1}]}');
CREATE TABLE ms_arch_noarch (model_id serial);
SELECT hopper.load_model_arch('ms_arch_noarch', '{"input_dim": 2, "layers": [{"units": 1}]}');
CREATE TABLE ms_arch_textweights (model_id serial, model_arch jsonb, model_weights text);
SELECT hopper.load_model_arch('ms_arch_textweights',
    '{"input_dim": 2, "layers": [{"units": 4, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
    model_weights => (SELECT model_state FROM ms_trained));
SELECT ms_sqlstate($$SELECT hopper.load_model_arch('ms_arch', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                                                   model_weights => '\x00'::bytea)$$) AS not_a_state,
       ms_sqlstate($$SELECT hopper.load_model_arch('ms_arch_nodefault', '{"input_dim": 2, "layers": [{"units": 1}]}')$$) AS no_default;

-- delete_model_arch.
SELECT hopper.load_model_arch('ms_arch', '{"input_dim": 2, "layers": [{"units": 2, "activation": "sigmoid"}]}') AS model_id;
SELECT hopper.delete_model_arch('ms_arch', 5);
SELECT array_agg(model_id ORDER BY model_id) AS model_ids FROM ms_arch;
SELECT hopper.delete_model_arch('ms_arch', 5);
SELECT hopper.delete_model_arch('ms_no_arch', 1);
SELECT hopper.delete_model_arch('ms_arch', NULL);
SELECT hopper.delete_model_arch(NULL, 1);
SELECT hopper.delete_model_arch('ms_arch_noid', 1);

-- load_model_selection_table: the cross product, model_id slowest, fit parameters fastest.
SELECT hopper.load_model_selection_table('ms_arch', 'ms_mst', ARRAY[2, 1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy']$$,
          '{"optimizer": "adam", "learning_rate": 0.01}'],
    ARRAY['batch_size=8', 'batch_size=16, epochs=2']);
SELECT * FROM ms_mst ORDER BY mst_key;
SELECT model_arch_table, search_type, compile_params_grid, fit_params_grid, num_configs, random_state FROM ms_mst_summary;
-- Rows added by hand get the next key.
INSERT INTO ms_mst (model_id, compile_params, fit_params) VALUES (4, '', '') RETURNING mst_key;
DELETE FROM ms_mst WHERE mst_key = 9;
-- A schema-qualified, quoted output name, and an architecture table found through the search path.
CREATE SCHEMA "MS Schema";
SELECT hopper.load_model_selection_table('ms_arch', '"MS Schema"."Selection"', ARRAY[3], ARRAY['loss=''mse'''], ARRAY['']);
SELECT * FROM "MS Schema"."Selection";
SELECT model_arch_table FROM "MS Schema"."Selection_summary";

-- load_model_selection_table errors.
SELECT hopper.load_model_selection_table(NULL, 'ms_e', ARRAY[1], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', NULL, ARRAY[1], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', NULL, ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], NULL, ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY[''], NULL);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[]::int[], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY[]::text[], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY[''], ARRAY[]::text[]);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1, NULL], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY['', NULL], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1, 2, 1], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1],
    ARRAY[$$optimizer='SGD(lr=0.1)'$$, '{"optimizer": "sgd", "learning_rate": 0.1}'], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY[''], ARRAY['batch_size=32', '']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY['', '{"learnin_rate": 0.1}'], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY[$$optimizer='Ftrl'$$], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY['loss='], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY[''], ARRAY['validation_split=0.1']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1, 7], ARRAY[''], ARRAY['']);
-- A loss that does not fit the output layer of one of the architectures.
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1, 3],
    ARRAY[$$loss='categorical_crossentropy'$$], ARRAY['']);
-- top_k at the number of classes is accepted (as in Keras and MADlib: the metric is then 1).
SELECT hopper.load_model_selection_table('ms_arch', 'ms_topk', ARRAY[1],
    ARRAY[$$metrics=['top_k_accuracy'], top_k=3$$], ARRAY['']);
SELECT mst_key, compile_params FROM ms_topk;
DROP TABLE ms_topk, ms_topk_summary;
SELECT hopper.load_model_selection_table('ms_arch', 'ms_mst', ARRAY[1], ARRAY[''], ARRAY['']);
CREATE TABLE ms_e_summary (x int);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY[''], ARRAY['']);
DROP TABLE ms_e_summary;
SELECT hopper.load_model_selection_table('ms_no_arch', 'ms_e', ARRAY[1], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch_noarch', 'ms_e', ARRAY[1], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch_noid', 'ms_e', ARRAY[1], ARRAY[''], ARRAY['']);
-- Reading an architecture table needs SELECT on it.
CREATE ROLE regress_hopper_ms_nobody;
GRANT USAGE ON SCHEMA hopper, test_model_selection TO regress_hopper_ms_nobody;
SET ROLE regress_hopper_ms_nobody;
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1], ARRAY[''], ARRAY['']);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{}');
SELECT hopper.load_model_arch('ms_arch', '{"input_dim": 2, "layers": [{"units": 1}]}');
RESET ROLE;
DROP OWNED BY regress_hopper_ms_nobody;
DROP ROLE regress_hopper_ms_nobody;
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e bad name', ARRAY[1], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', repeat('m', 60), ARRAY[1], ARRAY[''], ARRAY['']);
CREATE TABLE ms_arch_bad (model_id int, model_arch jsonb);
INSERT INTO ms_arch_bad VALUES (1, '{"input_dim": 2, "layers": []}'), (2, NULL), (3, '{}'), (3, '{}');
SELECT hopper.load_model_selection_table('ms_arch_bad', 'ms_e', ARRAY[1], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch_bad', 'ms_e', ARRAY[2], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch_bad', 'ms_e', ARRAY[3], ARRAY[''], ARRAY['']);
SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY(SELECT generate_series(1, 101)),
    ARRAY(SELECT 'learning_rate=' || g || 'e-3' FROM generate_series(1, 10) g),
    ARRAY(SELECT 'batch_size=' || g FROM generate_series(1, 10) g));
SELECT ms_sqlstate($$SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY(SELECT generate_series(1, 101)),
    ARRAY(SELECT 'learning_rate=' || g || 'e-3' FROM generate_series(1, 10) g),
    ARRAY(SELECT 'batch_size=' || g FROM generate_series(1, 10) g))$$) AS too_many,
       ms_sqlstate($$SELECT hopper.load_model_selection_table('ms_arch', 'ms_e', ARRAY[1, 7], ARRAY[''], ARRAY[''])$$) AS unknown_id,
       ms_sqlstate($$SELECT hopper.load_model_selection_table('ms_arch', 'ms_mst', ARRAY[1], ARRAY[''], ARRAY[''])$$) AS exists;

-- generate_model_configs, grid search: every combination, keys alphabetical, the last one fastest.
SELECT hopper.generate_model_configs('ms_arch', 'ms_grid', ARRAY[1, 2],
    '{"loss": "categorical_crossentropy", "metrics": ["accuracy"],
      "optimizer_params_list": [{"optimizer": "sgd", "momentum": [0.9, 0.99]},
                                {"optimizer": "adam", "learning_rate": [0.001, 0.01]}]}',
    '{"batch_size": [8, 16]}');
SELECT * FROM ms_grid ORDER BY mst_key;
SELECT model_arch_table, search_type, compile_params_grid ->> 'loss' AS loss, fit_params_grid, num_configs, random_state
FROM ms_grid_summary;
-- Every generated configuration is one fit_multiple accepts: parse them all back.
SELECT count(*) AS configs, bool_and(m.compile_params::jsonb ? 'optimizer') AS all_have_optimizer FROM ms_grid m;
SELECT hopper.generate_model_configs('ms_arch', 'ms_grid_defaults', ARRAY[3], '{"loss": "mse"}', '{}');
SELECT * FROM ms_grid_defaults;

-- Random search: seeded, log-uniform learning rates, integer batch sizes, distinct configurations.
SELECT hopper.generate_model_configs('ms_arch', 'ms_random', ARRAY[1, 2],
    '{"optimizer": ["sgd", "adam"], "learning_rate": {"log_uniform": [0.0001, 0.1]}, "metrics": ["accuracy"]}',
    '{"batch_size": {"int_uniform": [4, 64]}, "epochs": 1}',
    search_type => 'random', num_configs => 6, random_state => 42);
SELECT * FROM ms_random ORDER BY mst_key;
SELECT search_type, num_configs, random_state FROM ms_random_summary;
SELECT bool_and((compile_params::jsonb ->> 'learning_rate')::float8 BETWEEN 0.0001 AND 0.1) AS lr_in_range,
       bool_and((fit_params::jsonb ->> 'batch_size')::int BETWEEN 4 AND 64) AS batch_in_range,
       count(DISTINCT (model_id, compile_params, fit_params)) AS distinct_configs
FROM ms_random;
-- The same random_state gives the same table; another gives another.
SELECT hopper.generate_model_configs('ms_arch', 'ms_random_again', ARRAY[1, 2],
    '{"optimizer": ["sgd", "adam"], "learning_rate": {"log_uniform": [0.0001, 0.1]}, "metrics": ["accuracy"]}',
    '{"batch_size": {"int_uniform": [4, 64]}, "epochs": 1}',
    search_type => 'Random', num_configs => 6, random_state => 42);
SELECT hopper.generate_model_configs('ms_arch', 'ms_random_other', ARRAY[1, 2],
    '{"optimizer": ["sgd", "adam"], "learning_rate": {"log_uniform": [0.0001, 0.1]}, "metrics": ["accuracy"]}',
    '{"batch_size": {"int_uniform": [4, 64]}, "epochs": 1}',
    search_type => 'random', num_configs => 6, random_state => 43);
SELECT (SELECT array_agg((model_id, compile_params, fit_params) ORDER BY mst_key) FROM ms_random) =
       (SELECT array_agg((model_id, compile_params, fit_params) ORDER BY mst_key) FROM ms_random_again) AS same_seed_same_table,
       (SELECT array_agg((model_id, compile_params, fit_params) ORDER BY mst_key) FROM ms_random) =
       (SELECT array_agg((model_id, compile_params, fit_params) ORDER BY mst_key) FROM ms_random_other) AS other_seed_same_table;
-- Without random_state a seed is drawn (setseed makes it reproducible) and recorded in the summary.
SELECT setseed(0.25);
SELECT hopper.generate_model_configs('ms_arch', 'ms_random_drawn', ARRAY[1],
    '{"learning_rate": {"uniform": [0.01, 0.2]}}', '{}', 'random', 3);
SELECT random_state IS NOT NULL AS recorded FROM ms_random_drawn_summary;
SELECT random_state AS drawn_state FROM ms_random_drawn_summary \gset
SELECT hopper.generate_model_configs('ms_arch', 'ms_random_redrawn', ARRAY[1],
    '{"learning_rate": {"uniform": [0.01, 0.2]}}', '{}', 'random', 3, random_state => :drawn_state);
SELECT (SELECT array_agg(compile_params ORDER BY mst_key) FROM ms_random_drawn) =
       (SELECT array_agg(compile_params ORDER BY mst_key) FROM ms_random_redrawn) AS reproduced;

-- generate_model_configs errors.
SELECT hopper.generate_model_configs(NULL, 'ms_e', ARRAY[1], '{}', '{}');
SELECT hopper.generate_model_configs('ms_arch', NULL, ARRAY[1], '{}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', NULL, '{}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], NULL, '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', NULL);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[]::int[], '{}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1, 1], '{}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[9], '{}', '{}');
SELECT hopper.generate_model_configs('ms_no_arch', 'ms_e', ARRAY[1], '{}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_grid', ARRAY[1], '{}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{}', 'bayesian');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '[1, 2]', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '"batch_size"');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"learnin_rate": [0.1]}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{"batch_size": [0, 8]}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": []}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": [0.1, 0.2, 0.1]}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"optimizer": ["sgd", "SGD"]}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"optimizer": ["sgd", "adam"], "momentum": 0.9}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"optimizer": {"name": "adam"}}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"metrics": ["accuracy", ["mae"]]}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"optimizer_params_list": []}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1],
    '{"optimizer_params_list": [{"optimizer_params_list": [{}]}]}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": 0.1, "optimizer_params_list": [{"lr": 0.2}]}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1, 3], '{"loss": ["categorical_crossentropy"]}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": {"log_uniform": [0.0001, 0.1]}}', '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{}', num_configs => 3);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{}', random_state => 3);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1, 2],
    (SELECT jsonb_object_agg('k' || k, '[0,1,2,3,4,5,6,7,8,9]'::jsonb) FROM generate_series(1, 10) k), '{}');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{}', 'random');
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{}', 'random', 0);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{}', 'random', 10001);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1, 2], '{"optimizer": ["sgd", "adam"]}', '{}', 'random', 5, 1);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"optimizer": ["sgd", "SGD"]}', '{}', 'random', 2, 1);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": {"normal": [0, 1]}}', '{}', 'random', 1, 1);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": {"uniform": [0.1]}}', '{}', 'random', 1, 1);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": {"uniform": [0.2, 0.1]}}', '{}', 'random', 1, 1);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": {"log_uniform": [0, 0.1]}}', '{}', 'random', 1, 1);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{"batch_size": {"int_uniform": [1.5, 4]}}', 'random', 1, 1);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"learning_rate": {"uniform": [0, 0.1]}}', '{}', 'random', 1, 1);
SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"optimizer": "adam", "momentum": [0.9]}', '{}', 'random', 1, 1);
SELECT ms_sqlstate($$SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1, 2],
    (SELECT jsonb_object_agg('k' || k, '[0,1,2,3,4,5,6,7,8,9]'::jsonb) FROM generate_series(1, 10) k), '{}')$$) AS huge_grid,
       ms_sqlstate($$SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{}', '{}', 'random', 10001)$$) AS too_many,
       ms_sqlstate($$SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": [1, 1]}', '{}')$$) AS duplicate,
       ms_sqlstate($$SELECT hopper.generate_model_configs('ms_arch', 'ms_e', ARRAY[1], '{"lr": [0.1}', '{}')$$) AS bad_json;
-- Nothing was left behind by the failed calls.
SELECT count(*) AS leftovers FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE 'ms\_e%';

-- The functions are documented and honest about what they do.
SELECT p.proname, p.provolatile, p.proparallel, p.proisstrict, obj_description(p.oid, 'pg_proc') IS NOT NULL AS documented
FROM pg_proc p WHERE p.pronamespace = 'hopper'::regnamespace
  AND p.proname IN ('load_model_arch', 'delete_model_arch', 'load_model_selection_table', 'generate_model_configs')
ORDER BY p.proname;
