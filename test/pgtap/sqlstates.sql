-- SQLSTATEs of the foundation's error branches, and numeric tolerances of what it computes.
BEGIN;
SELECT plan(27);
SET LOCAL client_min_messages = warning;

CREATE TEMP TABLE tap_points AS
SELECT g AS id, ARRAY[(g % 2) * 4.0 + sin(g), (g % 2) * -4.0 + cos(g)]::float8[] AS x, (g % 2)::text AS label
FROM generate_series(1, 400) g;
-- Packed tables must be regular tables (parallel workers cannot read temporary ones).
SELECT hopper.preprocess('tap_points', 'public.tap_packed', 'label', 'x', buffer_size => 40, num_segments => 2);

SELECT throws_ok($$SELECT hopper.preprocess('tap_missing', 'tap_o', 'label', 'x')$$, '42P01', NULL, 'missing source table');
SELECT throws_ok($$SELECT hopper.preprocess('tap_points', 'tap_o', 'nope', 'x')$$, '42703', NULL, 'missing column');
SELECT throws_ok($$SELECT hopper.preprocess('tap_points', 'public.tap_packed', 'label', 'x')$$, '42P07', NULL, 'existing output');
SELECT throws_ok($$SELECT hopper.preprocess('tap_points', 'o; drop table tap_points', 'label', 'x')$$, '42602', NULL, 'bad table name');
SELECT throws_ok($$SELECT hopper.preprocess('tap_points', 'tap_o', 'label', 'x', buffer_size => -1)$$, '22023', NULL, 'negative buffer size');
SELECT throws_ok($$SELECT hopper.preprocess('tap_points', NULL, 'label', 'x')$$, '22004', NULL, 'NULL argument');
SELECT throws_ok($$CALL hopper.fit('tap_packed', 'tap_m', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '{', '', 1)$$,
                 '22P02', NULL, 'unparseable compile parameters');
SELECT throws_ok($$CALL hopper.fit('tap_packed', 'tap_m', '{"input_dim": 2, "layers": [{"units": 2, "activation": "elu"}]}', '', '', 1)$$,
                 '22023', NULL, 'unknown activation');
SELECT throws_ok($$CALL hopper.fit('tap_packed', 'tap_m', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', $m$optimizer='Adamaxx()'$m$, '', 1)$$,
                 '22023', NULL, 'unknown optimizer');
SELECT throws_ok($$CALL hopper.fit('tap_packed', 'tap_m', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', $m$optimizer='Ftrl()'$m$, '', 1)$$,
                 '0A000', 'optimizer "Ftrl" is not supported by hopper', 'Keras optimizer hopper does not implement');
SELECT throws_ok($$SELECT hopper.model_state_info('\xdeadbeef'::bytea)$$, '22000', NULL, 'corrupt model state');
-- Convolutional networks: refused before training, with the option or the shapes named.
SELECT throws_ok($$CALL hopper.fit('tap_packed', 'tap_m', '{"input_shape": [2, 2, 1], "layers": [{"type": "flatten"}, {"units": 2, "activation": "softmax"}]}', '', '', 1)$$,
                 '22023', 'model configuration mst_key 1 expects 4 features but packed table public.tap_packed has 2', 'input shape whose product is not the packed width');
SELECT throws_ok($$CALL hopper.fit('tap_packed', 'tap_m', '{"input_shape": [1, 2, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 2}, {"type": "flatten"}, {"units": 2, "activation": "softmax"}]}', '', '', 1)$$,
                 '22023', 'kernel_size 2x2 of layer 1 is larger than its input', 'kernel larger than the input');
SELECT throws_ok(format($$CALL hopper.fit('tap_packed', 'tap_m', %L, '', '', 1)$$,
                        '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1, 2, 1]}}, {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [1, 1], "data_format": "channels_first"}}, {"class_name": "Flatten", "config": {}}, {"class_name": "Dense", "config": {"units": 2, "activation": "softmax"}}]}}'),
                 '22023', 'unsupported data_format "channels_first" in Keras layer 2', 'channels_first named');
SELECT throws_ok(format($$CALL hopper.fit('tap_packed', 'tap_m', %L, '', '', 1)$$,
                        '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1, 2, 1]}}, {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [1, 1], "dilation_rate": [1, 2]}}, {"class_name": "Flatten", "config": {}}, {"class_name": "Dense", "config": {"units": 2, "activation": "softmax"}}]}}'),
                 '22023', 'unsupported dilation_rate [1,2] in Keras layer 2', 'dilation named');
SELECT throws_ok(format($$CALL hopper.fit('tap_packed', 'tap_m', %L, '', '', 1)$$,
                        '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1, 2, 1]}}, {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [1, 1], "groups": 2}}, {"class_name": "Flatten", "config": {}}, {"class_name": "Dense", "config": {"units": 2, "activation": "softmax"}}]}}'),
                 '22023', 'unsupported groups 2 in Keras layer 2', 'groups named');
CALL hopper.fit('tap_packed', 'tap_cnn', '{"input_shape": [1, 2, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": [1, 2]}, {"type": "flatten"}, {"units": 2, "activation": "softmax"}]}', '', '', 1);
SELECT throws_ok($$CALL hopper.fit('tap_packed', 'tap_cnn', '{"input_shape": [1, 2, 1], "layers": [{"type": "batch_normalization"}, {"type": "flatten"}, {"units": 2, "activation": "softmax"}]}', '', '', 1, warm_start => true)$$,
                 '22023', 'model state does not match the architecture', 'warm start from a state of another architecture');
SELECT throws_ok($$SELECT hopper.model_forward(model_state, ARRAY[1, 2, 3]::float8[]) FROM tap_cnn$$,
                 '22000', 'row has 3 features but the model expects 2', 'a CNN scoring a row of another width');
SET LOCAL hopper.max_model_state_mb = 1;
SELECT throws_ok($$CALL hopper.fit('tap_packed', 'tap_m', '{"input_dim": 2, "layers": [{"units": 200000, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}', $m$optimizer='Adam()'$m$, '', 1)$$,
                 '54000', NULL, 'model state over the limit');
-- Adaptive search inside a transaction (pgTAP's): one transaction, no commits; bad budgets 22023.
SELECT hopper.load_model_arch('public.tap_am_arch', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}');
SELECT lives_ok($$CALL hopper.fit_automl('public.tap_packed', 'public.tap_am', 'public.tap_am_arch', model_id_list => '{1}',
                  compile_params_grid => '{"learning_rate": {"uniform": [0.01, 0.3]}}', automl_method => 'successive_halving',
                  num_configs => 2, max_iterations => 2, eta => 2, random_state => 5)$$, 'fit_automl inside a transaction');
SELECT is((SELECT count(*)::int FROM public.tap_am), 2, 'its output table, in the same transaction');
SELECT throws_ok($$CALL hopper.fit_automl('public.tap_packed', 'public.tap_am2', 'public.tap_am_arch', model_id_list => '{1}',
                   compile_params_grid => '{}', eta => 1)$$, '22023', NULL, 'eta below 2');
RESET hopper.max_model_state_mb;

-- Numbers: a two-class problem is learned, losses are finite and evaluate agrees with the info
-- table (with exact training metrics: the default running ones are measured during the iteration).
SET LOCAL hopper.training_metrics = exact;
CALL hopper.fit('tap_packed', 'tap_m', '{"input_dim": 2, "layers": [{"units": 8, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1, momentum=0.9)', metrics=['accuracy']$$, 'batch_size=10', 5);
SELECT cmp_ok(training_metrics_final, '>=', 0.97::float8, 'a separable problem is learned') FROM tap_m_info;
SELECT cmp_ok(training_loss_final, '<', training_loss[1], 'loss decreases') FROM tap_m_info WHERE array_length(training_loss, 1) > 1
UNION ALL SELECT pass('loss decreases (single evaluation)') FROM tap_m_info WHERE array_length(training_loss, 1) = 1;
SELECT cmp_ok(abs(e.loss - i.training_loss_final), '<', 1e-9::float8, 'evaluate reproduces the training loss')
FROM hopper.evaluate('tap_m', 'tap_packed') e, tap_m_info i;
-- The softmax output sums to one within float32 rounding.
SELECT cmp_ok(abs((SELECT sum(v) FROM unnest(hopper.model_forward(model_state, ARRAY[1.0, -1.0])) v) - 1.0)::float8, '<', 1e-6::float8,
              'probabilities sum to one') FROM tap_m;
-- The exact size of the state: header, configuration, parameters (2*8+8 + 8*2+2 = 42) and checksum.
SELECT is((hopper.model_state_info(model_state) ->> 'num_params')::int, 42, 'parameter count') FROM tap_m;

SELECT * FROM finish();
ROLLBACK;
