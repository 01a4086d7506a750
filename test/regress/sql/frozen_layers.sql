-- Frozen layers ("trainable": false) and Keras' flat weights (float32 bytes in get_weights() order,
-- as MADlib's load_keras_model stores them) as the weights of an architecture (issue 30).
CREATE SCHEMA test_frozen_layers;
SET search_path = test_frozen_layers, public;
SET client_min_messages = warning;

CREATE TABLE pts AS
SELECT g AS id, (ARRAY['a', 'b', 'c'])[g % 3 + 1] AS label,
       ARRAY[sin(g), cos(g * 1.3), (g % 3) + 0.2 * sin(g * 5), (g % 3 = 1)::int + 0.2 * cos(g * 7)]::float8[] AS x
FROM generate_series(1, 150) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'label', 'x', buffer_size => 50, num_segments => 2, seed => 3);

\set mlp '{"input_dim": 4, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}'
\set mlp_frozen '{"input_dim": 4, "layers": [{"units": 8, "activation": "relu", "trainable": false}, {"units": 3, "activation": "softmax"}]}'
\set adam '$$loss=''categorical_crossentropy'', optimizer=''Adam(lr=0.05)'', metrics=[''accuracy'']$$'

-- ---- transfer learning: a trained model's weights, its first layer (4 * 8 + 8 = 40 weights) frozen ----
CALL hopper.fit('pts_packed', 'base', :'mlp', :adam, 'batch_size=10', 3);
SELECT hopper.load_model_arch('frz_arch', :'mlp_frozen', 'frozen', NULL, (SELECT model_state FROM base)) AS model_id;
SELECT hopper.load_model_selection_table('frz_arch', 'frz_mst', ARRAY[1], ARRAY[:adam], ARRAY['batch_size=10']);
CALL hopper.fit_multiple('pts_packed', 'frz_out', 'frz_mst', 3);
SELECT (hopper.model_weights(f.model_state))[1:40] = (hopper.model_weights(b.model_state))[1:40] AS frozen_unchanged,
       (hopper.model_weights(f.model_state))[41:67] <> (hopper.model_weights(b.model_state))[41:67] AS top_trained,
       hopper.model_state_info(f.model_state) -> 'config' -> 'architecture' -> 'layers' -> 0 -> 'trainable' AS trainable,
       hopper.model_state_info(b.model_state) -> 'config' -> 'architecture' -> 'layers' -> 0 -> 'trainable' AS base_flag,
       -- Adam's two slots cover the 27 trained weights only.
       octet_length(b.model_state) - octet_length(f.model_state) AS bytes_saved
FROM frz_out f, base b;
-- A fresh model with a frozen layer: its first layer keeps the initial weights of the seed.
CALL hopper.fit('pts_packed', 'fresh_frozen', :'mlp_frozen', :adam, 'batch_size=10, seed=9', 2);
CALL hopper.fit('pts_packed', 'fresh_trained', :'mlp', :adam, 'batch_size=10, seed=9', 2);
SELECT (hopper.model_weights(a.model_state))[1:40] <> (hopper.model_weights(b.model_state))[1:40] AS unfrozen_moved,
       (hopper.model_weights(a.model_state))[41:67] <> (hopper.model_weights(b.model_state))[41:67] AS top_differs
FROM fresh_frozen a, fresh_trained b;
-- Warm start of the frozen output goes on with the layer still frozen.
CREATE TABLE before_warm AS SELECT model_state FROM fresh_frozen;
CALL hopper.fit('pts_packed', 'fresh_frozen', :'mlp_frozen', :adam, 'batch_size=10, seed=9', 1, warm_start => true);
SELECT (hopper.model_weights(a.model_state))[1:40] = (hopper.model_weights(b.model_state))[1:40] AS still_frozen,
       a.model_state <> b.model_state AS trained
FROM fresh_frozen a, before_warm b;
-- "trainable" must be a boolean.
SELECT hopper.load_model_arch('frz_arch', '{"input_dim": 4, "layers": [{"units": 3, "trainable": "no"}]}');

-- ---- Keras weights: Dense(2 -> 3, relu), Dense(3 -> 1); kernels [in, out] in C order, then biases ----
-- Little-endian float32 bytes of a real[] (float4send is big-endian).
CREATE FUNCTION keras_bytes(v real[]) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(substring(b FROM 4 FOR 1) || substring(b FROM 3 FOR 1) || substring(b FROM 2 FOR 1)
                      || substring(b FROM 1 FOR 1), ''::bytea ORDER BY i)
    FROM unnest(v) WITH ORDINALITY AS u(f, i), LATERAL (SELECT float4send(f) AS b) s $$;
\set tiny '{"input_dim": 2, "layers": [{"units": 3, "activation": "relu"}, {"units": 1, "activation": "linear"}]}'
SELECT hopper.load_model_arch('kw_arch', :'tiny', 'keras weights', NULL,
                              keras_bytes(ARRAY[1, 2, -1, 0.5, -1, 3, 0.1, 0.2, 0.3, 1, -2, 0.5, 0.25]::real[])) AS model_id;
-- By hand: x = (1, 2): h = relu(1 + 1 + 0.1, 2 - 2 + 0.2, -1 + 6 + 0.3) = (2.1, 0.2, 5.3),
-- y = 2.1 - 0.4 + 2.65 + 0.25 = 4.6; x = (-1, 0.5): h = (0, 0, 2.8), y = 1.4 + 0.25 = 1.65.
SELECT round((hopper.model_forward(model_weights, ARRAY[1, 2]::float8[]))[1]::numeric, 5) AS y1,
       round((hopper.model_forward(model_weights, ARRAY[-1, 0.5]::float8[]))[1]::numeric, 5) AS y2,
       substring(model_weights FROM 1 FOR 8) AS stored_as
FROM kw_arch WHERE model_id = 1;
-- A wrong length names both byte counts (22023).
\set VERBOSITY default
SELECT hopper.load_model_arch('kw_arch', :'tiny', 'short', NULL, keras_bytes(ARRAY[1, 2, 3]::real[]));
DO $$ BEGIN
    PERFORM hopper.load_model_arch('kw_arch', '{"input_dim": 2, "layers": [{"units": 1}]}', 'short', NULL, '\x00'::bytea);
EXCEPTION WHEN OTHERS THEN RAISE WARNING 'SQLSTATE %', SQLSTATE;
END $$;
SELECT count(*) AS rows_left FROM kw_arch;
-- Keras bytes put into the table by hand are read by fit_multiple as the starting weights.
SELECT hopper.load_model_arch('kw_arch', '{"input_dim": 4, "layers": [{"units": 3, "activation": "softmax", "trainable": false}]}',
                              'frozen, weights by hand') AS model_id;
UPDATE kw_arch SET model_weights = keras_bytes(ARRAY(SELECT (i % 7 - 3) / 10.0 FROM generate_series(1, 15) i)::real[])
WHERE model_id = 2;
SELECT hopper.load_model_selection_table('kw_arch', 'kw_mst', ARRAY[2], ARRAY[:adam], ARRAY['batch_size=10']);
CALL hopper.fit_multiple('pts_packed', 'kw_out', 'kw_mst', 1);
SELECT hopper.model_weights(model_state) = ARRAY(SELECT ((i % 7 - 3) / 10.0)::real FROM generate_series(1, 15) i) AS kept_keras_weights
FROM kw_out;
UPDATE kw_arch SET model_weights = keras_bytes(ARRAY[1, 2]::real[]) WHERE model_id = 2;
CALL hopper.fit_multiple('pts_packed', 'kw_bad', 'kw_mst', 1);
