-- Embeddings of categorical columns and architectures that leave their input width to the packed
-- table (issue 27, items 2 and 3): an embedding layer binds a categorical column by name, whether
-- preprocess packed it one-hot or as a code; input_dim left out is the packed table's width. The
-- resolved architecture is what the model states record, so predict on raw rows needs nothing new.
CREATE SCHEMA test_embeddings;
SET search_path = test_embeddings, public;
SET client_min_messages = warning;

CREATE TABLE shop AS
SELECT g AS id, (g % 7) * 0.25 AS weight,
       (ARRAY['north', 'south', 'east', 'west'])[1 + g % 4] AS region,
       (ARRAY['a', 'b', 'c', 'd', 'e', 'f'])[1 + (g / 4) % 6] AS brand,
       CASE WHEN ((g % 4) IN (0, 3)) <> ((g / 4) % 6 < 3) THEN 'yes' ELSE 'no' END AS bought
FROM generate_series(1, 480) g;

-- region one-hot (4 slots and one for unseen values), brand as one code.
SELECT hopper.preprocess('shop', 'shop_packed', 'bought', 'weight, region, brand', buffer_size => 40,
                         num_segments => 2, seed => 1, columns => '{"brand": {"encoding": "codes"}}');
SELECT independent_dim, feature_recipe -> 'columns' -> 2 ->> 'encoding' AS brand_encoding FROM shop_packed_summary;

-- input_dim left out, an embedding of each column (their vocabularies left out too).
CALL hopper.fit('shop_packed', 'shop_model',
    '{"layers": [{"type": "embedding", "column": "region", "output_dim": 2},
                 {"type": "embedding", "column": "brand", "output_dim": 3},
                 {"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=20', 15,
    name => 'embeddings_shop');
SELECT training_metrics_final > 0.95 AS learned FROM shop_model_info;
-- The model records the resolved architecture: the packed width and each embedding's binding.
SELECT model_config -> 'architecture' ->> 'input_dim' AS input_dim,
       l ->> 'column' AS column, l -> 'input_dim' AS vocabulary, l -> 'offset' AS "offset", l -> 'width' AS width
FROM shop_model, LATERAL jsonb_array_elements(model_config -> 'architecture' -> 'layers') WITH ORDINALITY AS e(l, i)
WHERE i <= 2 ORDER BY i;
SELECT model_arch ? 'input_dim' AS as_given FROM shop_model;
-- Parameters: region's 5x2 (4 values and "<unknown>", one-hot) and brand's 7x3 (6 codes and "<unknown>")
-- embeddings; weight and the two vectors (1 + 2 + 3) into 8 units; 8 into 2.
SELECT hopper.model_state_info(model_state) ->> 'num_params' AS num_params FROM shop_model;
-- The last row of each table, "<unknown>", which no training row has, starts as zeros and stays so:
-- an unseen value adds nothing instead of a random vector.
SELECT w[9:10] AS region_unknown, w[29:31] AS brand_unknown, w[7:8] <> '{0,0}' AS region_trained
FROM (SELECT hopper.model_weights(model_state) AS w FROM shop_model) s;

-- Predict on raw rows with unseen values (an unknown region and brand).
CREATE TABLE shop_new AS
SELECT id, weight, CASE WHEN id % 10 = 0 THEN 'space' ELSE region END AS region,
       CASE WHEN id % 15 = 0 THEN 'zzz' ELSE brand END AS brand, bought
FROM shop WHERE id % 2 = 0;
SELECT hopper.predict('shop_model', 'shop_new', 'id', 'weight, region, brand', 'shop_pred');
SELECT count(*) AS rows, count(estimated_bought) AS predicted,
       avg((estimated_bought = bought)::int) FILTER (WHERE id % 10 <> 0 AND id % 15 <> 0) > 0.95 AS accurate
FROM shop_pred JOIN shop_new USING (id);

-- The run's checkpoint holds the resolved model: registered and materialized, it predicts as the
-- model table does.
SELECT hopper.create_model('embeddings-shop') > 0 AS created;
SELECT hopper.register_model_version('embeddings-shop',
    (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'embeddings_shop')) AS version;
SELECT hopper.materialize_model_version('embeddings-shop', 'shop_registered', version => 1);
SELECT hopper.predict('shop_registered', 'shop_new', 'id', '*', 'shop_registered_prob', pred_type => 'prob');
SELECT hopper.predict('shop_model', 'shop_new', 'id', '*', 'shop_prob', pred_type => 'prob');
SELECT count(*) AS rows, bool_and(a.prob = b.prob) AS same_as_model_table
FROM shop_prob a JOIN shop_registered_prob b USING (id);
SELECT hopper.delete_model('embeddings-shop');

-- A warm start continues the resolved model.
CALL hopper.fit('shop_packed', 'shop_model',
    '{"layers": [{"type": "embedding", "column": "region", "output_dim": 2},
                 {"type": "embedding", "column": "brand", "output_dim": 3},
                 {"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=20', 2,
    warm_start => true);
SELECT (hopper.model_state_info(model_state) ->> 'iterations')::int AS iterations FROM shop_model;

-- Transfer learning with the embedding tables frozen (the resolved architecture, as the model
-- records it): the 5x2 + 7x3 = 31 table values stay, the dense layers train on.
SELECT hopper.load_model_arch('shop_frozen_arch',
    jsonb_set(jsonb_set(model_config -> 'architecture', '{layers,0,trainable}', 'false'), '{layers,1,trainable}', 'false'),
    'frozen embeddings', NULL, model_state) AS model_id FROM shop_model;
SELECT hopper.load_model_selection_table('shop_frozen_arch', 'shop_frozen_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.05)', metrics=['accuracy']$$], ARRAY['batch_size=20']);
CALL hopper.fit_multiple('shop_packed', 'shop_frozen', 'shop_frozen_mst', 2);
SELECT (hopper.model_weights(f.model_state))[1:31] = (hopper.model_weights(m.model_state))[1:31] AS tables_unchanged,
       (hopper.model_weights(f.model_state))[32:105] <> (hopper.model_weights(m.model_state))[32:105] AS dense_trained
FROM shop_frozen f, shop_model m;

-- A search space over encodings: one-hot read as it is, or through an embedding (which reads a
-- one-hot block as a lookup), architectures without input_dim in one model selection table, trained
-- by model hopping (and an embedding of codes by data-parallel averaging).
SELECT hopper.preprocess('shop', 'shop_onehot', 'bought', 'weight, region, brand', buffer_size => 40,
                         num_segments => 2, seed => 1);
SELECT hopper.load_model_arch('shop_arch',
    '{"layers": [{"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}') AS plain_id;
SELECT hopper.load_model_arch('shop_arch',
    '{"layers": [{"type": "embedding", "column": "brand", "output_dim": 2, "dropout": 0.1},
                 {"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}') AS embedding_id;
SELECT hopper.load_model_selection_table('shop_arch', 'shop_mst', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.05)', metrics=['accuracy']$$], ARRAY['batch_size=20']);
CALL hopper.fit_multiple('shop_onehot', 'shop_multi', 'shop_mst', 12);
SELECT mst_key, model_config -> 'architecture' ->> 'input_dim' AS input_dim,
       jsonb_array_length(model_config -> 'architecture' -> 'layers') AS layers,
       hopper.model_state_info(model_state) ->> 'num_params' AS num_params
FROM shop_multi ORDER BY mst_key;
SELECT mst_key, training_metrics_final > 0.6 AS trained FROM shop_multi_info ORDER BY mst_key;
CALL hopper.fit_data_parallel('shop_packed', 'shop_avg',
    '{"layers": [{"type": "embedding", "column": "brand", "output_dim": 2},
                 {"units": 8, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=20', 10);
SELECT training_metrics_final > 0.6 AS trained FROM shop_avg_info;
-- An adaptive search over the same two architectures.
CALL hopper.fit_automl('shop_onehot', 'shop_automl', 'shop_arch', model_id_list => '{1,2}',
    compile_params_grid => '{"loss": "categorical_crossentropy", "optimizer": "adam", "learning_rate": [0.05], "metrics": ["accuracy"]}',
    fit_params_grid => '{"batch_size": [20]}', automl_method => 'successive_halving', max_iterations => 2, eta => 2,
    search_type => 'grid');
SELECT model_config -> 'architecture' ->> 'input_dim' AS input_dim,
       jsonb_array_length(model_config -> 'architecture' -> 'layers') AS layers
FROM shop_automl ORDER BY layers;

-- A Keras functional model of the same shape (tf.keras 2's to_json()): the InputLayer "brand" binds
-- the column; "numeric" stands for the features no embedding reads (weight and region's one-hot).
\set keras_functional '{"class_name": "Functional", "config": {"name": "model", "layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 6], "dtype": "float32", "name": "numeric"}, "name": "numeric", "inbound_nodes": []}, {"class_name": "InputLayer", "config": {"batch_input_shape": [null, 1], "dtype": "int32", "name": "brand"}, "name": "brand", "inbound_nodes": []}, {"class_name": "Embedding", "config": {"name": "embedding", "trainable": true, "dtype": "float32", "input_dim": 7, "output_dim": 3, "embeddings_initializer": {"class_name": "RandomUniform", "config": {"minval": -0.05, "maxval": 0.05, "seed": null}}, "embeddings_regularizer": null, "activity_regularizer": null, "embeddings_constraint": null, "mask_zero": false, "input_length": null}, "name": "embedding", "inbound_nodes": [[["brand", 0, 0, {}]]]}, {"class_name": "Flatten", "config": {"name": "flatten", "trainable": true, "dtype": "float32", "data_format": "channels_last"}, "name": "flatten", "inbound_nodes": [[["embedding", 0, 0, {}]]]}, {"class_name": "Concatenate", "config": {"name": "concatenate", "trainable": true, "dtype": "float32", "axis": -1}, "name": "concatenate", "inbound_nodes": [[["numeric", 0, 0, {}], ["flatten", 0, 0, {}]]]}, {"class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype": "float32", "units": 8, "activation": "relu", "use_bias": true}, "name": "dense", "inbound_nodes": [[["concatenate", 0, 0, {}]]]}, {"class_name": "Dense", "config": {"name": "dense_1", "trainable": true, "dtype": "float32", "units": 2, "activation": "softmax", "use_bias": true}, "name": "dense_1", "inbound_nodes": [[["dense", 0, 0, {}]]]}], "input_layers": [["numeric", 0, 0], ["brand", 0, 0]], "output_layers": [["dense_1", 0, 0]]}, "keras_version": "2.15.0", "backend": "tensorflow"}'
CALL hopper.fit('shop_packed', 'shop_keras', :'keras_functional',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=20', 10);
SELECT training_metrics_final > 0.6 AS trained,
       model_config -> 'architecture' -> 'layers' -> 0 AS embedding FROM shop_keras_info, shop_keras;

-- Refused: an embedding of a column the table does not have, of a numeric column, with another
-- vocabulary, on a table packed from an array (no columns); embeddings after a dense layer; the same
-- column twice; an activation; a width the table does not have.
SET client_min_messages = error;
\set VERBOSITY default
CALL hopper.fit('shop_packed', 'bad_model',
    '{"layers": [{"type": "embedding", "column": "colour", "output_dim": 2}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
-- brand is packed as codes: a model without its embedding would read them as a quantity.
CALL hopper.fit('shop_packed', 'bad_model', '{"layers": [{"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
CALL hopper.fit('shop_packed', 'bad_model',
    '{"layers": [{"type": "embedding", "column": "weight", "output_dim": 2}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
CALL hopper.fit('shop_packed', 'bad_model',
    '{"layers": [{"type": "embedding", "column": "brand", "output_dim": 2, "input_dim": 50}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE arr AS SELECT g AS id, ARRAY[g % 3, g % 2]::float8[] AS x, (g % 2)::text AS y FROM generate_series(1, 40) g;
SELECT hopper.preprocess('arr', 'arr_packed', 'y', 'x', buffer_size => 20);
CALL hopper.fit('arr_packed', 'bad_model',
    '{"layers": [{"type": "embedding", "column": "x", "output_dim": 2}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
CALL hopper.fit('shop_packed', 'bad_model',
    '{"layers": [{"units": 4}, {"type": "embedding", "column": "brand", "output_dim": 2}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
CALL hopper.fit('shop_packed', 'bad_model',
    '{"layers": [{"type": "embedding", "column": "brand", "output_dim": 2}, {"type": "embedding", "column": "brand", "output_dim": 2}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
CALL hopper.fit('shop_packed', 'bad_model',
    '{"layers": [{"type": "embedding", "column": "brand", "output_dim": 2, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
CALL hopper.fit('shop_packed', 'bad_model',
    '{"input_dim": 9, "layers": [{"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
-- A Keras graph hopper cannot map exactly: Concatenate takes the numeric input after the embedding.
SELECT replace(:'keras_functional', '[["numeric", 0, 0, {}], ["flatten", 0, 0, {}]]', '[["flatten", 0, 0, {}], ["numeric", 0, 0, {}]]') AS keras_swapped \gset
CALL hopper.fit('shop_packed', 'bad_model', :'keras_swapped', $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
-- The Keras model's numeric input is not as wide as the features no embedding reads.
SELECT replace(:'keras_functional', '"batch_input_shape": [null, 6]', '"batch_input_shape": [null, 5]') AS keras_narrow \gset
CALL hopper.fit('shop_packed', 'bad_model', :'keras_narrow', $$loss='categorical_crossentropy'$$, 'batch_size=20', 1);
\echo :LAST_ERROR_SQLSTATE
-- Weights need a known width; a model state of an unresolved architecture cannot be made.
SELECT hopper.load_model_arch('shop_arch', '{"layers": [{"units": 2, "activation": "softmax"}]}', NULL, NULL,
                              '\x0000803f0000803f'::bytea);
\echo :LAST_ERROR_SQLSTATE
-- A model state as weights of an architecture that leaves its width to the table: the resolved one is needed.
SELECT hopper.load_model_arch('shop_arch', model_arch, NULL, NULL, model_state) FROM shop_model;
\echo :LAST_ERROR_SQLSTATE
-- A code out of range given to the model directly.
SELECT hopper.model_forward(model_state, ARRAY[0.5, 1, 0, 0, 0, 0, 17]::float8[], 1.0, NULL, NULL) FROM shop_model;
\echo :LAST_ERROR_SQLSTATE
SELECT count(*) AS bad_models FROM pg_catalog.pg_class WHERE relname LIKE 'bad_model%';
