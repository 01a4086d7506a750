-- hopper_madlib: Apache MADlib's deep-learning SQL on plain PostgreSQL. The examples of MADlib's
-- user documentation for Keras (iris), adapted only in schema name -- and in the train/test split
-- (every fifth row is a test row, for output that does not depend on random numbers; MADlib's
-- train_test_split is tested on its own). Then what hopper cannot honour, refused with 0A000.
-- test/scripts/madlib_yardstick.sh runs MADlib's own examples and tests unchanged.
CREATE EXTENSION hopper_madlib;
CREATE SCHEMA test_madlib;
SET search_path = test_madlib, public;
SET client_min_messages = warning;
-- MADlib's help forms: madlib.<function>() and madlib.<function>('usage').
SELECT madlib.madlib_keras_fit();
SELECT madlib.madlib_keras_predict('usage');
SELECT madlib.madlib_keras_evaluate('no such option');
-- Each names its function with a description and its signature (an entry missing from the facade's
-- help list would leave them empty).
SELECT f, h ~ ('(^|\n)' || f || ': \S') AND h ~ ('(^|\n)' || f || '\([a-z_]') AS names_it,
       strpos(h, 'docs/madlib.md') > 0 AS points_to_docs
FROM (VALUES
    ('training_preprocessor_dl', madlib.training_preprocessor_dl()),
    ('validation_preprocessor_dl', madlib.validation_preprocessor_dl()),
    ('load_keras_model', madlib.load_keras_model()),
    ('delete_keras_model', madlib.delete_keras_model()),
    ('load_model_selection_table', madlib.load_model_selection_table()),
    ('generate_model_configs', madlib.generate_model_configs()),
    ('madlib_keras_fit', madlib.madlib_keras_fit()),
    ('madlib_keras_fit_multiple_model', madlib.madlib_keras_fit_multiple_model()),
    ('madlib_keras_automl', madlib.madlib_keras_automl()),
    ('madlib_keras_evaluate', madlib.madlib_keras_evaluate()),
    ('madlib_keras_predict', madlib.madlib_keras_predict()),
    ('madlib_keras_predict_byom', madlib.madlib_keras_predict_byom()),
    ('load_custom_function', madlib.load_custom_function()),
    ('load_top_k_accuracy_function', madlib.load_top_k_accuracy_function()),
    ('delete_custom_function', madlib.delete_custom_function()),
    ('train_test_split', madlib.train_test_split()),
    ('hyperband_schedule', madlib.hyperband_schedule()),
    ('gpu_configuration', madlib.gpu_configuration())) v(f, h)
ORDER BY f;
SELECT madlib.load_keras_model('usage') = madlib.load_keras_model('USAGE') AS case_blind,
       madlib.madlib_keras_automl('help') = madlib.madlib_keras_automl() AS help_is_summary;
-- The first cell of MADlib's notebooks: MADlib's build string, its version where MADlib's code reads
-- it (the last word before the first comma), naming hopper_madlib and its version.
SELECT split_part(split_part(madlib.version(), ',', 1), ' ', -1) AS madlib_version,
       madlib.version() ~ '^MADlib version: [0-9.]+, git revision: ' AS madlib_shape,
       strpos(madlib.version(), 'hopper_madlib ' || (SELECT extversion FROM pg_extension WHERE extname = 'hopper_madlib')) > 0
           AS names_hopper_madlib;

CREATE TABLE iris_data(id serial, attributes numeric[], class_text varchar);
INSERT INTO iris_data(id, attributes, class_text) VALUES
(1,ARRAY[5.1,3.5,1.4,0.2],'Iris-setosa'),
(2,ARRAY[4.9,3.0,1.4,0.2],'Iris-setosa'),
(3,ARRAY[4.7,3.2,1.3,0.2],'Iris-setosa'),
(4,ARRAY[4.6,3.1,1.5,0.2],'Iris-setosa'),
(5,ARRAY[5.0,3.6,1.4,0.2],'Iris-setosa'),
(6,ARRAY[5.4,3.9,1.7,0.4],'Iris-setosa'),
(7,ARRAY[4.6,3.4,1.4,0.3],'Iris-setosa'),
(8,ARRAY[5.0,3.4,1.5,0.2],'Iris-setosa'),
(9,ARRAY[4.4,2.9,1.4,0.2],'Iris-setosa'),
(10,ARRAY[4.9,3.1,1.5,0.1],'Iris-setosa'),
(11,ARRAY[5.4,3.7,1.5,0.2],'Iris-setosa'),
(12,ARRAY[4.8,3.4,1.6,0.2],'Iris-setosa'),
(13,ARRAY[4.8,3.0,1.4,0.1],'Iris-setosa'),
(14,ARRAY[4.3,3.0,1.1,0.1],'Iris-setosa'),
(15,ARRAY[5.8,4.0,1.2,0.2],'Iris-setosa'),
(16,ARRAY[5.7,4.4,1.5,0.4],'Iris-setosa'),
(17,ARRAY[5.4,3.9,1.3,0.4],'Iris-setosa'),
(18,ARRAY[5.1,3.5,1.4,0.3],'Iris-setosa'),
(19,ARRAY[5.7,3.8,1.7,0.3],'Iris-setosa'),
(20,ARRAY[5.1,3.8,1.5,0.3],'Iris-setosa'),
(21,ARRAY[5.4,3.4,1.7,0.2],'Iris-setosa'),
(22,ARRAY[5.1,3.7,1.5,0.4],'Iris-setosa'),
(23,ARRAY[4.6,3.6,1.0,0.2],'Iris-setosa'),
(24,ARRAY[5.1,3.3,1.7,0.5],'Iris-setosa'),
(25,ARRAY[4.8,3.4,1.9,0.2],'Iris-setosa'),
(26,ARRAY[5.0,3.0,1.6,0.2],'Iris-setosa'),
(27,ARRAY[5.0,3.4,1.6,0.4],'Iris-setosa'),
(28,ARRAY[5.2,3.5,1.5,0.2],'Iris-setosa'),
(29,ARRAY[5.2,3.4,1.4,0.2],'Iris-setosa'),
(30,ARRAY[4.7,3.2,1.6,0.2],'Iris-setosa'),
(31,ARRAY[4.8,3.1,1.6,0.2],'Iris-setosa'),
(32,ARRAY[5.4,3.4,1.5,0.4],'Iris-setosa'),
(33,ARRAY[5.2,4.1,1.5,0.1],'Iris-setosa'),
(34,ARRAY[5.5,4.2,1.4,0.2],'Iris-setosa'),
(35,ARRAY[4.9,3.1,1.5,0.1],'Iris-setosa'),
(36,ARRAY[5.0,3.2,1.2,0.2],'Iris-setosa'),
(37,ARRAY[5.5,3.5,1.3,0.2],'Iris-setosa'),
(38,ARRAY[4.9,3.1,1.5,0.1],'Iris-setosa'),
(39,ARRAY[4.4,3.0,1.3,0.2],'Iris-setosa'),
(40,ARRAY[5.1,3.4,1.5,0.2],'Iris-setosa'),
(41,ARRAY[5.0,3.5,1.3,0.3],'Iris-setosa'),
(42,ARRAY[4.5,2.3,1.3,0.3],'Iris-setosa'),
(43,ARRAY[4.4,3.2,1.3,0.2],'Iris-setosa'),
(44,ARRAY[5.0,3.5,1.6,0.6],'Iris-setosa'),
(45,ARRAY[5.1,3.8,1.9,0.4],'Iris-setosa'),
(46,ARRAY[4.8,3.0,1.4,0.3],'Iris-setosa'),
(47,ARRAY[5.1,3.8,1.6,0.2],'Iris-setosa'),
(48,ARRAY[4.6,3.2,1.4,0.2],'Iris-setosa'),
(49,ARRAY[5.3,3.7,1.5,0.2],'Iris-setosa'),
(50,ARRAY[5.0,3.3,1.4,0.2],'Iris-setosa'),
(51,ARRAY[7.0,3.2,4.7,1.4],'Iris-versicolor'),
(52,ARRAY[6.4,3.2,4.5,1.5],'Iris-versicolor'),
(53,ARRAY[6.9,3.1,4.9,1.5],'Iris-versicolor'),
(54,ARRAY[5.5,2.3,4.0,1.3],'Iris-versicolor'),
(55,ARRAY[6.5,2.8,4.6,1.5],'Iris-versicolor'),
(56,ARRAY[5.7,2.8,4.5,1.3],'Iris-versicolor'),
(57,ARRAY[6.3,3.3,4.7,1.6],'Iris-versicolor'),
(58,ARRAY[4.9,2.4,3.3,1.0],'Iris-versicolor'),
(59,ARRAY[6.6,2.9,4.6,1.3],'Iris-versicolor'),
(60,ARRAY[5.2,2.7,3.9,1.4],'Iris-versicolor'),
(61,ARRAY[5.0,2.0,3.5,1.0],'Iris-versicolor'),
(62,ARRAY[5.9,3.0,4.2,1.5],'Iris-versicolor'),
(63,ARRAY[6.0,2.2,4.0,1.0],'Iris-versicolor'),
(64,ARRAY[6.1,2.9,4.7,1.4],'Iris-versicolor'),
(65,ARRAY[5.6,2.9,3.6,1.3],'Iris-versicolor'),
(66,ARRAY[6.7,3.1,4.4,1.4],'Iris-versicolor'),
(67,ARRAY[5.6,3.0,4.5,1.5],'Iris-versicolor'),
(68,ARRAY[5.8,2.7,4.1,1.0],'Iris-versicolor'),
(69,ARRAY[6.2,2.2,4.5,1.5],'Iris-versicolor'),
(70,ARRAY[5.6,2.5,3.9,1.1],'Iris-versicolor'),
(71,ARRAY[5.9,3.2,4.8,1.8],'Iris-versicolor'),
(72,ARRAY[6.1,2.8,4.0,1.3],'Iris-versicolor'),
(73,ARRAY[6.3,2.5,4.9,1.5],'Iris-versicolor'),
(74,ARRAY[6.1,2.8,4.7,1.2],'Iris-versicolor'),
(75,ARRAY[6.4,2.9,4.3,1.3],'Iris-versicolor'),
(76,ARRAY[6.6,3.0,4.4,1.4],'Iris-versicolor'),
(77,ARRAY[6.8,2.8,4.8,1.4],'Iris-versicolor'),
(78,ARRAY[6.7,3.0,5.0,1.7],'Iris-versicolor'),
(79,ARRAY[6.0,2.9,4.5,1.5],'Iris-versicolor'),
(80,ARRAY[5.7,2.6,3.5,1.0],'Iris-versicolor'),
(81,ARRAY[5.5,2.4,3.8,1.1],'Iris-versicolor'),
(82,ARRAY[5.5,2.4,3.7,1.0],'Iris-versicolor'),
(83,ARRAY[5.8,2.7,3.9,1.2],'Iris-versicolor'),
(84,ARRAY[6.0,2.7,5.1,1.6],'Iris-versicolor'),
(85,ARRAY[5.4,3.0,4.5,1.5],'Iris-versicolor'),
(86,ARRAY[6.0,3.4,4.5,1.6],'Iris-versicolor'),
(87,ARRAY[6.7,3.1,4.7,1.5],'Iris-versicolor'),
(88,ARRAY[6.3,2.3,4.4,1.3],'Iris-versicolor'),
(89,ARRAY[5.6,3.0,4.1,1.3],'Iris-versicolor'),
(90,ARRAY[5.5,2.5,4.0,1.3],'Iris-versicolor'),
(91,ARRAY[5.5,2.6,4.4,1.2],'Iris-versicolor'),
(92,ARRAY[6.1,3.0,4.6,1.4],'Iris-versicolor'),
(93,ARRAY[5.8,2.6,4.0,1.2],'Iris-versicolor'),
(94,ARRAY[5.0,2.3,3.3,1.0],'Iris-versicolor'),
(95,ARRAY[5.6,2.7,4.2,1.3],'Iris-versicolor'),
(96,ARRAY[5.7,3.0,4.2,1.2],'Iris-versicolor'),
(97,ARRAY[5.7,2.9,4.2,1.3],'Iris-versicolor'),
(98,ARRAY[6.2,2.9,4.3,1.3],'Iris-versicolor'),
(99,ARRAY[5.1,2.5,3.0,1.1],'Iris-versicolor'),
(100,ARRAY[5.7,2.8,4.1,1.3],'Iris-versicolor'),
(101,ARRAY[6.3,3.3,6.0,2.5],'Iris-virginica'),
(102,ARRAY[5.8,2.7,5.1,1.9],'Iris-virginica'),
(103,ARRAY[7.1,3.0,5.9,2.1],'Iris-virginica'),
(104,ARRAY[6.3,2.9,5.6,1.8],'Iris-virginica'),
(105,ARRAY[6.5,3.0,5.8,2.2],'Iris-virginica'),
(106,ARRAY[7.6,3.0,6.6,2.1],'Iris-virginica'),
(107,ARRAY[4.9,2.5,4.5,1.7],'Iris-virginica'),
(108,ARRAY[7.3,2.9,6.3,1.8],'Iris-virginica'),
(109,ARRAY[6.7,2.5,5.8,1.8],'Iris-virginica'),
(110,ARRAY[7.2,3.6,6.1,2.5],'Iris-virginica'),
(111,ARRAY[6.5,3.2,5.1,2.0],'Iris-virginica'),
(112,ARRAY[6.4,2.7,5.3,1.9],'Iris-virginica'),
(113,ARRAY[6.8,3.0,5.5,2.1],'Iris-virginica'),
(114,ARRAY[5.7,2.5,5.0,2.0],'Iris-virginica'),
(115,ARRAY[5.8,2.8,5.1,2.4],'Iris-virginica'),
(116,ARRAY[6.4,3.2,5.3,2.3],'Iris-virginica'),
(117,ARRAY[6.5,3.0,5.5,1.8],'Iris-virginica'),
(118,ARRAY[7.7,3.8,6.7,2.2],'Iris-virginica'),
(119,ARRAY[7.7,2.6,6.9,2.3],'Iris-virginica'),
(120,ARRAY[6.0,2.2,5.0,1.5],'Iris-virginica'),
(121,ARRAY[6.9,3.2,5.7,2.3],'Iris-virginica'),
(122,ARRAY[5.6,2.8,4.9,2.0],'Iris-virginica'),
(123,ARRAY[7.7,2.8,6.7,2.0],'Iris-virginica'),
(124,ARRAY[6.3,2.7,4.9,1.8],'Iris-virginica'),
(125,ARRAY[6.7,3.3,5.7,2.1],'Iris-virginica'),
(126,ARRAY[7.2,3.2,6.0,1.8],'Iris-virginica'),
(127,ARRAY[6.2,2.8,4.8,1.8],'Iris-virginica'),
(128,ARRAY[6.1,3.0,4.9,1.8],'Iris-virginica'),
(129,ARRAY[6.4,2.8,5.6,2.1],'Iris-virginica'),
(130,ARRAY[7.2,3.0,5.8,1.6],'Iris-virginica'),
(131,ARRAY[7.4,2.8,6.1,1.9],'Iris-virginica'),
(132,ARRAY[7.9,3.8,6.4,2.0],'Iris-virginica'),
(133,ARRAY[6.4,2.8,5.6,2.2],'Iris-virginica'),
(134,ARRAY[6.3,2.8,5.1,1.5],'Iris-virginica'),
(135,ARRAY[6.1,2.6,5.6,1.4],'Iris-virginica'),
(136,ARRAY[7.7,3.0,6.1,2.3],'Iris-virginica'),
(137,ARRAY[6.3,3.4,5.6,2.4],'Iris-virginica'),
(138,ARRAY[6.4,3.1,5.5,1.8],'Iris-virginica'),
(139,ARRAY[6.0,3.0,4.8,1.8],'Iris-virginica'),
(140,ARRAY[6.9,3.1,5.4,2.1],'Iris-virginica'),
(141,ARRAY[6.7,3.1,5.6,2.4],'Iris-virginica'),
(142,ARRAY[6.9,3.1,5.1,2.3],'Iris-virginica'),
(143,ARRAY[5.8,2.7,5.1,1.9],'Iris-virginica'),
(144,ARRAY[6.8,3.2,5.9,2.3],'Iris-virginica'),
(145,ARRAY[6.7,3.3,5.7,2.5],'Iris-virginica'),
(146,ARRAY[6.7,3.0,5.2,2.3],'Iris-virginica'),
(147,ARRAY[6.3,2.5,5.0,1.9],'Iris-virginica'),
(148,ARRAY[6.5,3.0,5.2,2.0],'Iris-virginica'),
(149,ARRAY[6.2,3.4,5.4,2.3],'Iris-virginica'),
(150,ARRAY[5.9,3.0,5.1,1.8],'Iris-virginica');
CREATE TABLE iris_train AS SELECT * FROM iris_data WHERE id % 5 <> 0;
CREATE TABLE iris_test AS SELECT * FROM iris_data WHERE id % 5 = 0;

-- ---- train_test_split (MADlib's sampling module) ----
-- Separate tables, as every example of MADlib's docs: exactly 80 % of the rows, disjoint.
-- In a session without temporary tables yet, no NOTICE that schema pg_temp does not exist.
SELECT setseed(0);
SELECT count(*) AS temp_schema_yet FROM pg_namespace WHERE oid = pg_my_temp_schema();
SET client_min_messages = notice;
SELECT madlib.train_test_split('iris_data', 'iris_split', 0.8, NULL, NULL, NULL, NULL, TRUE);
SET client_min_messages = warning;
SELECT (SELECT count(*) FROM iris_split_train) AS train, (SELECT count(*) FROM iris_split_test) AS test,
       (SELECT count(*) FROM (SELECT id FROM iris_split_train INTERSECT SELECT id FROM iris_split_test) b) AS in_both,
       (SELECT count(DISTINCT id) FROM (SELECT id FROM iris_split_train UNION ALL SELECT id FROM iris_split_test) a) AS distinct_ids;
-- The same seed draws the same split.
SELECT setseed(0);
SELECT madlib.train_test_split('iris_data', 'iris_split_again', 0.8, NULL, NULL, NULL, NULL, TRUE);
SELECT count(*) AS same_test_rows FROM iris_split_test JOIN iris_split_again_test USING (id);
-- One table with column split, by class (grouping_cols), some columns (target_cols), 60 % / 20 %.
SELECT madlib.train_test_split('iris_data', 'iris_split_one', 0.6, 0.2, 'class_text', 'id, class_text');
SELECT class_text, split, count(*) FROM iris_split_one GROUP BY 1, 2 ORDER BY 1, 2;
SELECT string_agg(attname, ', ' ORDER BY attnum) AS split_columns FROM pg_attribute
WHERE attrelid = 'iris_split_one'::regclass AND attnum > 0;

-- ---- preprocessing ----
SELECT madlib.training_preprocessor_dl('iris_train', 'iris_train_packed', 'class_text', 'attributes');
SELECT madlib.validation_preprocessor_dl('iris_test', 'iris_test_packed', 'class_text', 'attributes', 'iris_train_packed');
SELECT class_values, num_rows FROM iris_train_packed_summary;
-- MADlib's columns: the packed arrays' shapes, the summary's class values by dependent variable.
SELECT attributes_shape, class_text_shape FROM iris_train_packed ORDER BY buffer_id LIMIT 1;
SELECT class_text_class_values, num_classes, distribution_rules, __internal_gpu_config__ FROM iris_test_packed_summary;
-- num_classes as MADlib 2.x takes it (one per dependent variable): the data's number of classes.
SELECT madlib.training_preprocessor_dl('iris_train', 'iris_train_packed3', 'class_text', 'attributes', NULL, 1.0, ARRAY[3]);
SELECT num_classes FROM iris_train_packed3_summary;
-- Images (N-dimensional arrays): rgb_shape has their dimensions after the rows, as MADlib's.
CREATE TABLE image_data AS
SELECT g AS id, ARRAY[[[g % 7, g % 5, 1], [g % 3, 2, g % 11]], [[4, g % 13, 5], [g % 2, 6, 7]]] AS rgb,
       (ARRAY['cat', 'dog', 'bird'])[g % 3 + 1] AS species
FROM generate_series(1, 52) g;
SELECT madlib.training_preprocessor_dl('image_data', 'image_data_packed', 'species', 'rgb', 26, 255);
SELECT rgb_shape, species_shape, buffer_id FROM image_data_packed ORDER BY buffer_id;
SELECT source_table, species_class_values FROM image_data_packed_summary;
SELECT madlib.validation_preprocessor_dl('image_data', 'image_data_val', 'species', 'rgb', 'image_data_packed');
SELECT rgb_shape FROM image_data_val ORDER BY buffer_id LIMIT 1;
-- A model of images, and predictions for the images as they are.
SELECT madlib.load_keras_model('image_arch', $$
{"class_name": "Sequential", "config": [{"class_name": "Flatten", "config": {"name": "flat", "batch_input_shape": [null, 2, 2, 3]}},
 {"class_name": "Dense", "config": {"name": "out", "activation": "softmax", "units": 3}}], "backend": "tensorflow"}
$$);
SELECT madlib.madlib_keras_fit('image_data_packed', 'image_model', 'image_arch', 1,
    $$ loss='categorical_crossentropy', optimizer=SGD(lr=0.1, nesterov=True), metrics=['mae'] $$, $$ batch_size=13 $$, 1);
SELECT metrics_type FROM image_model_summary;
SELECT madlib.madlib_keras_predict('image_model', 'image_data', 'id', 'rgb', 'image_predict', 'response');
SELECT count(*) AS predicted, count(DISTINCT id) AS ids FROM image_predict;
UPDATE image_arch SET model_weights = image_model.model_weights FROM image_model;
SELECT madlib.madlib_keras_predict_byom('image_arch', 1, 'image_data', 'id', 'rgb', 'image_predict_byom', 'response', FALSE,
                                        ARRAY['bird', 'cat', 'dog'], 255);
SELECT count(*) AS predicted, count(*) FILTER (WHERE b.class_value = p.class_value) AS as_predict
FROM image_predict_byom b JOIN image_predict p USING (id);
SELECT count(*) AS flattened_copies_left FROM pg_class WHERE relname = '__hopper_flat_source';
-- num_classes beyond the data's classes (MADlib's padding): one-hot vectors of 5, the padded classes
-- NULL in MADlib's class values; the model has 5 outputs, and predictions name the padded classes NULL.
SELECT madlib.training_preprocessor_dl('image_data', 'image_pad_packed', 'species', 'rgb', 26, 255, ARRAY[5]);
SELECT rgb_shape, species_shape, buffer_id FROM image_pad_packed ORDER BY buffer_id;
SELECT species_class_values, num_classes FROM image_pad_packed_summary;
SELECT madlib.validation_preprocessor_dl('image_data', 'image_pad_val', 'species', 'rgb', 'image_pad_packed');
SELECT DISTINCT species_shape[2] AS classes FROM image_pad_val;
SELECT madlib.load_keras_model('image_pad_arch', $$
{"class_name": "Sequential", "config": [{"class_name": "Flatten", "config": {"name": "flat", "batch_input_shape": [null, 2, 2, 3]}},
 {"class_name": "Dense", "config": {"name": "out", "activation": "softmax", "units": 5}}], "backend": "tensorflow"}
$$);
SELECT madlib.madlib_keras_fit('image_pad_packed', 'image_pad_model', 'image_pad_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=13 $$, 1, FALSE, 'image_pad_val');
SELECT species_class_values, num_classes FROM image_pad_model_summary;
SELECT madlib.madlib_keras_predict('image_pad_model', 'image_data', 'id', 'rgb', 'image_pad_predict');
SELECT count(*) AS rows, count(DISTINCT id) AS ids, count(*) FILTER (WHERE class_value IS NULL) AS padded
FROM image_pad_predict;
SELECT madlib.madlib_keras_evaluate('image_pad_model', 'image_pad_val', 'image_pad_evaluate');
SELECT metrics_type FROM image_pad_evaluate;
-- Several dependent variables (MADlib's multi-input / multi-output data): packed as MADlib packs them,
-- a column per variable with its shape, and MADlib's summary; training on them is refused (0A000).
CREATE TABLE iris_mult AS SELECT id, attributes, attributes AS attributes2, class_text, class_text AS class_text2 FROM iris_data;
SELECT madlib.training_preprocessor_dl('iris_mult', 'iris_mult_packed', 'class_text, class_text2', 'attributes, attributes2',
                                       50, 255, ARRAY[3, 4]);
SELECT buffer_id, attributes_shape, attributes2_shape, class_text_shape, class_text2_shape
FROM iris_mult_packed ORDER BY buffer_id;
SELECT count(*) FILTER (WHERE r[1] + r[2] + r[3] + r[4] = 1) AS one_hot_rows
FROM iris_mult_packed, LATERAL (SELECT class_text2[i:i][1:4] AS m FROM generate_series(1, class_text2_shape[1]) i) q,
     LATERAL (SELECT ARRAY(SELECT unnest(q.m)) AS r) o;
SELECT dependent_varname, independent_varname, dependent_vartype, class_text_class_values, class_text2_class_values,
       buffer_size, normalizing_const, num_classes, distribution_rules FROM iris_mult_packed_summary;
SELECT madlib.validation_preprocessor_dl('iris_mult', 'iris_mult_val', 'class_text, class_text2', 'attributes, attributes2',
                                         'iris_mult_packed');
SELECT sum(class_text2_shape[1]) AS rows, max(class_text2_shape[2]) AS classes, max(attributes[1][1]) <= 1 AS normalized
FROM iris_mult_val;
-- A class the training data lacks is refused, also beside the padded (NULL) class values.
CREATE TABLE iris_mult_unseen AS SELECT id, attributes, attributes2, class_text,
       CASE WHEN id = 1 THEN 'Iris-unseen' ELSE class_text2 END AS class_text2 FROM iris_mult;
SELECT madlib.validation_preprocessor_dl('iris_mult_unseen', 'iris_mult_val2', 'class_text, class_text2',
                                         'attributes, attributes2', 'iris_mult_packed');
SELECT madlib.madlib_keras_fit('iris_mult_packed', 'iris_mult_model', 'image_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, NULL, 1);
-- distribution_rules: ignored on PostgreSQL, as MADlib does (its summary says all_segments).
SELECT madlib.training_preprocessor_dl('image_data', 'image_data_gpu', 'species', 'rgb', NULL, 255, NULL, 'gpu_segments');
SELECT distribution_rules FROM image_data_gpu_summary;
-- Columns named as hopper's packed ones: hopper's shape columns stay hopper's (rows, flat width).
CREATE TABLE image_named AS SELECT rgb AS independent_var, species AS dependent_var FROM image_data;
SELECT madlib.training_preprocessor_dl('image_named', 'image_named_packed', 'dependent_var', 'independent_var', 26, 255);
SELECT independent_var_shape, dependent_var_shape FROM image_named_packed ORDER BY buffer_id LIMIT 1;
-- hopper's arrays are hopper_independent_var and hopper_dependent_var in hopper_madlib's packed
-- tables, so MADlib's bytes of a variable named independent_var sit beside them, and training reads
-- hopper's (not the bytes: hopper.train_segment(bytea, ...) does not exist).
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'image_named_packed'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum;
SELECT madlib.madlib_keras_fit('image_named_packed', 'image_named_model', 'image_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, $$ batch_size=13 $$, 1);
-- A MADlib script renames its columns as it likes (MADlib's fit test renames buffer_id to
-- dependent_var, MADlib 1.x's name of the labels), and the copy keeps hopper's arrays.
CREATE TABLE image_renamed AS SELECT * FROM image_data_packed;
ALTER TABLE image_renamed RENAME buffer_id TO dependent_var;
SELECT count(*) AS buffers FROM image_renamed WHERE hopper_independent_var IS NOT NULL;

-- ---- the model architecture table ----
SELECT madlib.load_keras_model('model_arch_library', $$
{"class_name": "Sequential", "keras_version": "2.1.6", "config":
 [{"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_1", "dtype": "float32", "activation": "relu", "trainable": true, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 10, "batch_input_shape": [null, 4], "use_bias": true}},
  {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_2", "activation": "relu", "trainable": true, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 10, "use_bias": true}},
  {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_3", "activation": "softmax", "trainable": true, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 3, "use_bias": true}}],
 "backend": "tensorflow"}
$$, NULL, 'Sophie', 'A simple model');
SELECT madlib.load_keras_model('model_arch_library', $$
{"class_name": "Sequential", "keras_version": "2.1.6", "config":
 [{"class_name": "Dense", "config": {"name": "dense_1", "activation": "relu", "units": 20, "batch_input_shape": [null, 4], "use_bias": true}},
  {"class_name": "Dense", "config": {"name": "dense_2", "activation": "softmax", "units": 3, "use_bias": true}}],
 "backend": "tensorflow"}
$$, NULL, 'Maria', 'A simple model');
SELECT model_id, name, description FROM model_arch_library ORDER BY model_id;
-- MADlib's model_arch column is json, the architecture kept as given (issue 30); the table hopper
-- made goes with its last architecture, as in MADlib, a table of the user's stays.
SELECT format_type(atttypid, atttypmod) AS model_arch_type FROM pg_attribute
WHERE attrelid = 'model_arch_library'::regclass AND attname = 'model_arch';
SELECT madlib.load_keras_model('arch_dropped', '{"b" : 2,  "a" : [4, 5]}');
-- Weights of an architecture hopper cannot read are kept as given, as MADlib keeps them.
SELECT madlib.load_keras_model('arch_dropped', '{"config" : [1, 2, 3]}', 'dummy weights'::bytea);
SELECT model_id, model_arch::text, model_arch->'a'->>1 AS a1, convert_from(model_weights, 'UTF8') AS weights
FROM arch_dropped ORDER BY model_id;
-- Weights that do not fit an architecture hopper reads are refused (the probe telling the two apart
-- says nothing).
SET client_min_messages = notice;
SELECT madlib.load_keras_model('arch_dropped', '{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"units": 2, "batch_input_shape": [null, 3]}}]}', 'dummy'::bytea);
SHOW client_min_messages;
SET client_min_messages = warning;
SELECT madlib.delete_keras_model('arch_dropped', 1);
SELECT madlib.delete_keras_model('arch_dropped', 2);
SELECT to_regclass('arch_dropped') AS dropped;
CREATE TABLE own_arch (model_id serial, model_arch json, model_weights bytea, name text, description text);
SELECT madlib.load_keras_model('own_arch', '{"b": 2}');
SELECT madlib.delete_keras_model('own_arch', 1);
SELECT to_regclass('own_arch') IS NOT NULL AS kept;
DROP TABLE own_arch;

-- ---- fit, evaluate, predict ----
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_model', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5, epochs=3 $$, 10);
SELECT model, model_id, btrim(compile_params) AS compile_params, btrim(fit_params) AS fit_params, num_iterations,
       model_type, num_classes, class_values, metrics_type, loss_type, metrics_iters, use_gpus, object_table
FROM iris_model_summary;
SELECT octet_length(model_weights) > 0 AS has_weights, model_arch IS NOT NULL AS has_arch FROM iris_model;
-- MADlib's training loss and metrics are those of the final weights of an iteration (hopper's exact
-- training metrics): a model trained, then warm started with every layer frozen, reports the loss the
-- first run ended with (MADlib's transfer_learning test; a running mean would differ).
SELECT training_metrics_source FROM iris_model_summary;
SELECT madlib.load_keras_model('warm_arch', $$
{"class_name": "Sequential", "config": [
 {"class_name": "Dense", "config": {"name": "h", "activation": "relu", "units": 5, "batch_input_shape": [null, 4]}},
 {"class_name": "Dense", "config": {"name": "out", "activation": "softmax", "units": 3}}]}
$$);
SELECT madlib.load_keras_model('warm_arch', $$
{"class_name": "Sequential", "config": [
 {"class_name": "Dense", "config": {"name": "h", "activation": "relu", "units": 5, "batch_input_shape": [null, 4], "trainable": false}},
 {"class_name": "Dense", "config": {"name": "out", "activation": "softmax", "units": 3, "trainable": false}}]}
$$);
SELECT madlib.madlib_keras_fit('iris_train_packed', 'warm_model', 'warm_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5 $$, 2);
CREATE TABLE warm_first AS SELECT training_loss_final, training_metrics_final FROM warm_model_summary;
SELECT madlib.madlib_keras_fit('iris_train_packed', 'warm_model', 'warm_arch', 2,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5 $$, 2, FALSE, NULL, 1, TRUE);
SELECT abs(f.training_loss_final - s.training_loss[1]) < 1e-6 AS same_loss,
       f.training_metrics_final = s.training_metrics[1] AS same_metric
FROM warm_first f, warm_model_summary s;
SELECT madlib.madlib_keras_evaluate('iris_model', 'iris_test_packed', 'iris_validate');
SELECT metric > 0.8 AS accurate, loss < 1 AS low_loss, metrics_type, loss_type FROM iris_validate;
-- The loss and metrics as compile_params names them, as MADlib reports them (metrics_type {mae}).
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_mae', 'model_arch_library', 1,
    $$ optimizer=SGD(lr=0.01, decay=1e-6, nesterov=True), loss="categorical_crossentropy", metrics=['mae'] $$, $$ batch_size=5 $$, 1);
SELECT metrics_type, loss_type FROM iris_mae_summary;
SELECT madlib.madlib_keras_evaluate('iris_mae', 'iris_test_packed', 'iris_mae_evaluate');
SELECT metrics_type, loss_type FROM iris_mae_evaluate;
-- As MADlib: mst_key is for tables of several models; a MADlib-shaped model table needs its model_arch.
SELECT madlib.madlib_keras_evaluate('iris_mae', 'iris_test_packed', 'iris_mae_evaluate2', FALSE, 1);
ALTER TABLE iris_mae DROP COLUMN model_arch;
SELECT madlib.madlib_keras_evaluate('iris_mae', 'iris_test_packed', 'iris_mae_evaluate2');
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_predict', 'response', FALSE);
SELECT string_agg(attname, ', ' ORDER BY attnum) AS response_columns FROM pg_attribute
WHERE attrelid = 'iris_predict'::regclass AND attnum > 0 AND NOT attisdropped;
SELECT count(*) AS predicted, count(DISTINCT class_name) AS names, avg((p.class_value = t.class_text)::int) > 0.8 AS accurate
FROM iris_predict p JOIN iris_test t USING (id);
-- MADlib 2.x's default, pred_type 'prob': a row per class, ranked by probability; the docs' accuracy
-- query reads rank 1.
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_predict_prob');
SELECT string_agg(attname, ', ' ORDER BY attnum) AS prob_columns FROM pg_attribute
WHERE attrelid = 'iris_predict_prob'::regclass AND attnum > 0 AND NOT attisdropped;
SELECT count(*) AS rows, count(DISTINCT id) AS ids, min(rank) AS best, max(rank) AS worst,
       bool_and(abs(s - 1) < 1e-4) AS probabilities_add_up
FROM iris_predict_prob JOIN (SELECT id, sum(prob) AS s FROM iris_predict_prob GROUP BY id) t USING (id);
SELECT count(*) AS same_as_response FROM iris_predict_prob p JOIN iris_predict r USING (id)
WHERE p.rank = 1 AND p.class_value = r.class_value;
SELECT count(*) FILTER (WHERE p.class_value = t.class_text) > 24 AS accurate
FROM iris_predict_prob p JOIN iris_test t USING (id) WHERE p.rank = 1;
-- A number: the classes up to that rank (integer) or above that probability.
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_predict_top2', 2);
SELECT count(*) AS rows, max(rank) AS worst FROM iris_predict_top2;
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_predict_likely', 0.5);
-- As MADlib: a double in [0.0, 1.0) is a probability limit, 0.0 included (every class of positive
-- probability); integer 0 and the double 1.0 are refused (below).
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_predict_positive', 0.0);
SELECT count(DISTINCT id) AS ids, bool_and(prob > 0) AS positive, count(*) = 3 * count(DISTINCT id) AS every_class
FROM iris_predict_positive;
-- MADlib's tests count a prediction table's columns in pg_attribute (dropped ones too: issue 30);
-- the table keeps hopper's mark of the predictions it made.
SELECT t, count(*) AS columns, madlib.__hopper_made(t, 'predictions') AS hoppers
FROM unnest(ARRAY['iris_predict', 'iris_predict_prob', 'iris_predict_top2', 'iris_predict_likely']::regclass[]) t
JOIN pg_attribute a ON a.attrelid = t AND a.attnum > 0 GROUP BY t ORDER BY t::text;
SELECT bool_and(prob > 0.5) IS NOT FALSE AS above_half, count(*) <= 30 AS at_most_one_per_row FROM iris_predict_likely;
-- Bring your own model: the trained weights in a row of the architecture table, MADlib's docs' way.
UPDATE model_arch_library SET model_weights = iris_model.model_weights FROM iris_model WHERE model_arch_library.model_id = 1;
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_predict_byom',
    'response', FALSE, ARRAY[ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica']], 1.0);
SELECT count(*) AS predicted, count(*) FILTER (WHERE b.class_value = r.class_value) AS as_predict, min(b.class_name) AS class_name
FROM iris_predict_byom b JOIN iris_predict r USING (id);
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_predict_byom_prob');
SELECT count(*) AS rows, array_agg(DISTINCT class_value ORDER BY class_value) AS default_classes FROM iris_predict_byom_prob;
-- As MADlib: class_values name every output (2 for a model of 3 outputs left rows without a class_value).
\set VERBOSITY terse
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_predict_byom_two',
    'response', FALSE, ARRAY[ARRAY['a', 'b']]);
\set VERBOSITY default
SELECT to_regclass('iris_predict_byom_two') IS NULL AS nothing_written;
-- pred_type as a number (MADlib's INTEGER and DOUBLE PRECISION overloads), as madlib_keras_predict
-- takes it: a rank limit, or a probability limit written unquoted (failed 42883).
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_byom_top2', 2,
    FALSE, ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica']);
SELECT count(*) AS rows, max(rank) AS worst, count(*) FILTER (WHERE b.class_value = p.class_value) AS as_predict
FROM iris_byom_top2 b JOIN iris_predict_top2 p USING (id, rank);
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_byom_likely', 0.5,
    FALSE, ARRAY['Iris-setosa', 'Iris-versicolor', 'Iris-virginica'], 1.0);
SELECT count(*) AS rows, (SELECT count(*) FROM iris_predict_likely) AS as_predict, bool_and(prob > 0.5) IS NOT FALSE AS above_half
FROM iris_byom_likely;
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_byom_positive', 0.0);
SELECT count(DISTINCT id) AS ids, bool_and(prob > 0) AS positive, count(*) = 3 * count(DISTINCT id) AS every_class
FROM iris_byom_positive;
-- As MADlib: integer 0 and the double 1.0 are refused.
\set VERBOSITY terse
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_byom_x', 0);
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_byom_x', 1.0);
\set VERBOSITY default
UPDATE model_arch_library SET model_weights = NULL WHERE model_id = 1;

-- With a validation table, metrics every 3 iterations, name and description (use_gpus positional).
-- MADlib's fit makes the model and its summary only: dropping the two lets the script fit again.
DROP TABLE iris_model, iris_model_summary;
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_model', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5, epochs=3 $$,
    10, FALSE, 'iris_test_packed', 3, FALSE, 'Sophie L.', 'Simple MLP for iris dataset');
SELECT name, description, metrics_iters, cardinality(validation_metrics) AS validation_points,
       validation_metrics_final > 0.8 AS accurate FROM iris_model_summary;
-- Warm start: five more iterations from the model's weights.
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_model', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5, epochs=3 $$,
    5, FALSE, 'iris_test_packed', 1, TRUE, 'Sophie L.', 'Simple MLP for iris dataset');
SELECT metrics_iters, validation_metrics_final > 0.8 AS accurate FROM iris_model_summary;
SELECT (hopper.model_state_info(model_weights)->>'iterations')::int AS iterations_in_all FROM iris_model;
-- Transfer learning: a new architecture row with the trained weights.
SELECT madlib.load_keras_model('model_arch_library', $$
{"class_name": "Sequential", "keras_version": "2.1.6", "config":
 [{"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_1", "dtype": "float32", "activation": "relu", "trainable": true, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 10, "batch_input_shape": [null, 4], "use_bias": true}},
  {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_2", "activation": "relu", "trainable": true, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 10, "use_bias": true}},
  {"class_name": "Dense", "config": {"kernel_initializer": {"class_name": "VarianceScaling", "config": {"distribution": "uniform", "scale": 1.0, "seed": null, "mode": "fan_avg"}}, "name": "dense_3", "activation": "softmax", "trainable": true, "bias_initializer": {"class_name": "Zeros", "config": {}}, "units": 3, "use_bias": true}}],
 "backend": "tensorflow"}
$$, (SELECT model_weights FROM iris_model), 'Sophie', 'Trained weights');
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_model_transfer', 'model_arch_library', 3,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5, epochs=3 $$, 2);
SELECT training_metrics_final > 0.8 AS starts_trained FROM iris_model_transfer_summary;
-- MADlib's NULL for an optional argument is its default: warm_start NULL still transfers the weights,
-- pred_type NULL gives every class's probability.
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_model_transfer_null', 'model_arch_library', 3,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5, epochs=3 $$, 2,
    NULL, NULL, NULL, NULL);
SELECT training_metrics_final > 0.8 AS starts_trained FROM iris_model_transfer_null_summary;
SELECT madlib.madlib_keras_predict('iris_model_transfer_null', 'iris_test', 'id', 'attributes', 'iris_predict_null', NULL);
SELECT count(*) AS predicted, count(DISTINCT id) AS ids FROM iris_predict_null WHERE class_value IS NOT NULL;

-- ---- model selection: fit_multiple_model ----
SELECT madlib.load_model_selection_table('model_arch_library', 'mst_table', ARRAY[1, 2],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.1)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='Adam(lr=0.01)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']$$],
    ARRAY[$$batch_size=4, epochs=1$$, $$batch_size=8, epochs=1$$]);
SELECT count(*) AS configurations FROM mst_table;
SELECT madlib.madlib_keras_fit_multiple_model('iris_train_packed', 'iris_multi_model', 'mst_table', 10, FALSE,
                                              'iris_test_packed', 5, FALSE, 'Sophie L.', 'Model selection for iris');
SELECT count(*) AS models, bool_and(octet_length(model_weights) > 0) AS weights FROM iris_multi_model;
SELECT model, model_info, num_classes, metrics_iters, object_table, use_gpus, class_text_class_values
FROM iris_multi_model_summary;
SELECT count(*) AS infos, max(validation_metrics_final) > 0.8 AS best_accurate FROM iris_multi_model_info;
SELECT madlib.madlib_keras_evaluate('iris_multi_model', 'iris_test_packed', 'iris_multi_validate', FALSE, 1);
SELECT metric IS NOT NULL AS evaluated, metrics_type, loss_type FROM iris_multi_validate;
-- The loss as compile_params names it (MADlib's categorical_crossentropy, not hopper's
-- softmax_cross_entropy), as in madlib_keras_fit's summary.
SELECT DISTINCT metrics_type, loss_type FROM iris_multi_model_info;
-- As MADlib ("Multi-model needs to pass mst_key"): a table of several models is evaluated one model
-- at a time (without mst_key every model's rows were written, without their mst_key).
\set VERBOSITY terse
SELECT madlib.madlib_keras_evaluate('iris_multi_model', 'iris_test_packed', 'iris_multi_validate_all');
\set VERBOSITY default
SELECT to_regclass('iris_multi_validate_all') IS NULL AS nothing_written;
-- The same tables as MADlib writes them: its summaries have no method column (it was 42703).
CREATE TABLE madlib_made_multi AS SELECT * FROM iris_multi_model;
CREATE TABLE madlib_made_multi_summary AS SELECT * FROM iris_multi_model_summary;
ALTER TABLE madlib_made_multi_summary DROP COLUMN method;
CREATE TABLE madlib_made_multi_info AS SELECT * FROM iris_multi_model_info;
\set VERBOSITY terse
SELECT madlib.madlib_keras_evaluate('madlib_made_multi', 'iris_test_packed', 'madlib_made_validate_all');
\set VERBOSITY default
SELECT madlib.madlib_keras_predict('iris_multi_model', 'iris_test', 'id', 'attributes', 'iris_multi_predict',
                                   'response', FALSE, 1);
SELECT count(*) AS predicted FROM iris_multi_predict;

-- ---- generate_model_configs with MADlib's grids (Python dict literals) ----
SELECT madlib.generate_model_configs('model_arch_library', 'mst_grid', ARRAY[1, 2],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam', 'SGD'], 'lr': [0.01, 0.1]}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [4, 8], 'epochs': [1]}$$);
SELECT count(*) AS grid_configurations FROM mst_grid;
SELECT madlib.generate_model_configs('model_arch_library', 'mst_random', ARRAY[1, 2],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.0001, 0.1, 'log']}, {'optimizer': ['SGD'], 'lr': [0.001, 0.1, 'linear'], 'momentum': [0.9, 0.95]}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [4, 8], 'epochs': [1, 2]}$$, 'random', 10, 47);
SELECT count(*) AS random_configurations, (SELECT random_state FROM mst_random_summary) FROM mst_random;
-- MADlib's 'log_near_one' range (momentum-like): values between its ends, packed towards the upper.
SELECT madlib.generate_model_configs('model_arch_library', 'mst_near_one', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.01], 'momentum': [0.9, 0.999, 'log_near_one']}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [8]}$$, 'random', 40, 5);
SELECT count(*) AS configurations, min(m) >= 0.9 AND max(m) <= 0.999 AS in_range,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY m) > 0.96 AS towards_one
FROM (SELECT (compile_params::jsonb->>'momentum')::float8 AS m FROM mst_near_one) c;
-- An existing model selection table is appended to, mst_key going on (MADlib's docs do so); its
-- NOTICE names that table (it named hopper_madlib's staging table, mst_grid__hopper_appended).
SET client_min_messages = notice;
SELECT madlib.generate_model_configs('model_arch_library', 'mst_grid', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer': ['Adam'], 'metrics': ['accuracy']}$$, $${'batch_size': [16]}$$);
SET client_min_messages = warning;
SELECT mst_key, model_id, fit_params FROM mst_grid WHERE mst_key > 14 ORDER BY mst_key;
SELECT count(*) AS tables_left FROM pg_class WHERE relname LIKE 'mst_grid%hopper%';
SELECT object_table FROM mst_grid_summary;
-- MADlib's Hyperband schedule: the brackets and rounds of R = 81, eta = 3 (MADlib's docs).
SELECT madlib.hyperband_schedule('hb_schedule', 81, 3, 0);
SELECT * FROM hb_schedule ORDER BY s DESC, i;
SELECT madlib.hyperband_schedule('hb_schedule_skip', 6, 3, 1);
SELECT * FROM hb_schedule_skip ORDER BY s DESC, i;
-- No GPUs: MADlib's GPU list is empty.
SELECT madlib.gpu_configuration('host_gpus');
SELECT count(*) AS gpus FROM host_gpus;
-- Architectures are stored as MADlib stores them, whatever they are, and checked when trained.
SELECT madlib.load_keras_model('model_arch_library', '{"class_name": "Model", "config": {"layers": []}, "note": "functional"}'::json,
                               NULL, 'functional', 'stored as given');
SELECT model_arch->>'note' AS note, name FROM model_arch_library WHERE name = 'functional';

-- ---- madlib_keras_automl (Hyperband) ----
-- A row naming its future _info table in hopper.output_tables (any role may add one for itself)
-- does not confuse it: it finds its run by the mark on the table (by name, it failed after training).
INSERT INTO hopper.output_tables (token, kind, schema_name, table_name)
VALUES (gen_random_uuid(), 'model_info', 'test_madlib', 'automl_output_info');
SELECT madlib.madlib_keras_automl('iris_train_packed', 'automl_output', 'model_arch_library', 'automl_mst_table', ARRAY[1, 2],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.1, 'log']}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [4, 8], 'epochs': [1]}$$, 'hyperband', 'R=6, eta=3, skip_last=0', 41, NULL, FALSE, 'iris_test_packed', 1,
    'automl iris', 'hyperband on iris');
SELECT count(*) AS trials, bool_and(octet_length(model_weights) > 0) AS weights FROM automl_output;
SELECT b.bracket, b.rung, b.budget, b.num_configs, b.state FROM hopper.search_brackets b JOIN hopper.runs r USING (run_id)
WHERE r.name = 'automl iris' ORDER BY b.bracket DESC, b.rung;
SELECT max(validation_metrics_final) > 0.8 AS best_accurate FROM automl_output_info;
SELECT model, model_info, automl_method, automl_params, random_state, num_classes FROM automl_output_summary;
-- Each configuration's bracket s and last round i, as in hopper.search_trials.
SELECT count(*) AS trials, count(*) FILTER (WHERE s IS NOT NULL AND i IS NOT NULL) AS placed, max(s) AS brackets_from
FROM automl_output_info;
-- MADlib's community notebook case, R=9, eta=3: MADlib's brackets of 9, 3 and 3 configurations (its
-- n = floor((s_max + 1) / (s + 1)) * eta^s; Li et al.'s 9, 5 and 3 trained 17), each round training
-- r_i iterations more, as madlib.hyperband_schedule lists them.
SELECT madlib.madlib_keras_automl('iris_train_packed', 'automl_nb', 'model_arch_library', 'automl_nb_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.1, 'log']}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [8], 'epochs': [1]}$$, 'hyperband', 'R=9, eta=3, skip_last=0', 5, NULL, FALSE, NULL, NULL,
    'automl notebook');
SELECT count(*) AS info_rows FROM automl_nb_info;
SELECT s, count(*) AS configurations FROM automl_nb_info GROUP BY s ORDER BY s DESC;
SELECT madlib.hyperband_schedule('automl_nb_schedule', 9, 3, 0);
SELECT h.s, h.i, h.n_i, h.r_i, b.num_configs, b.iterations_in_rung, b.budget
FROM automl_nb_schedule h FULL JOIN (SELECT b.* FROM hopper.search_brackets b JOIN hopper.runs r USING (run_id)
                                     WHERE r.name = 'automl notebook') b ON b.bracket = h.s AND b.rung = h.i
ORDER BY h.s DESC, h.i;
-- Hyperopt: num_configs configurations drawn at random (as TPE draws its first 20, and 'rand' all),
-- each trained num_iterations iterations.
SELECT madlib.madlib_keras_automl('iris_train_packed', 'hyperopt_output', 'model_arch_library', 'hyperopt_mst_table', ARRAY[1, 2],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['Adam'], 'lr': [0.001, 0.1, 'log']}],
       'metrics': ['accuracy']}$$, $${'batch_size': [4, 8], 'epochs': [1]}$$,
    'hyperopt', 'num_configs=5, num_iterations=2, algorithm=tpe', 7, NULL, FALSE, 'iris_test_packed', 1);
SELECT model, model_info, automl_method, automl_params, random_state, num_classes FROM hyperopt_output_summary;
SELECT count(*) AS configs, count(DISTINCT mst_key) AS keys FROM hyperopt_mst_table;
SELECT count(*) AS trained, min(cardinality(training_loss)) AS iterations FROM hyperopt_output_info;
SELECT count(*) AS models FROM hyperopt_output;

-- ---- what hopper cannot honour ----
\set VERBOSITY terse
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_gpu', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, NULL, 1, TRUE);
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_gpu', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, NULL, 1, FALSE, NULL, NULL, FALSE, NULL, NULL, 'custom_functions');
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_gpu', 'model_arch_library', 99,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, NULL, 1);
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_gpu', 'no_such_arch_table', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, NULL, 1);
-- In MADlib's words, which its tests look for.
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_gpu', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, NULL, 1, NULL, 'table_does_not_exist');
SELECT madlib.madlib_keras_fit_multiple_model('iris_train_packed', 'iris_gpu', 'mst_table', 1, FALSE, 'table_does_not_exist');
SELECT madlib.training_preprocessor_dl('iris_train', 'iris_x', 'class_text', 'attributes', NULL, 1.0, ARRAY[2]);
SELECT madlib.training_preprocessor_dl('iris_train', 'iris_x', 'class_text', 'attributes', NULL, 1.0, ARRAY[3, 3]);
-- Refused before anything is predicted (no NOTICE of predicted rows first).
SET client_min_messages = notice;
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_x', 'most_likely');
SET client_min_messages = warning;
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_x', 2.5);
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_x', 0);
SELECT madlib.madlib_keras_predict('iris_model', 'iris_test', 'id', 'attributes', 'iris_x', 1.0);
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_test', 'id', 'attributes', 'iris_x');
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 3, 'iris_test', 'id', 'attributes', 'iris_x', 'prob', FALSE, NULL, NULL, 2);
SELECT madlib.train_test_split('iris_data', 'iris_x', 0.8, NULL, NULL, NULL, TRUE);
SELECT madlib.train_test_split('iris_data', 'iris_x', 0.8, 0.3);
SELECT madlib.train_test_split('iris_data', 'iris_x', 1.5);
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_x', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, $$ batch_size=5, callbacks=[EarlyStopping(monitor='loss')] $$, 1);
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_x', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, $$ batch_size=5, epochs=2, initial_epoch=2 $$, 1);
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_x', 'model_arch_library', 4,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, $$ batch_size=5 $$, 1);
SELECT madlib.load_model_selection_table('model_arch_library', 'mst_x', ARRAY[1], ARRAY[$$loss='mse'$$], ARRAY[''], 'custom_functions');
SELECT madlib.generate_model_configs('model_arch_library', 'mst_x', ARRAY[1],
    $${'optimizer_params_list': [{'optimizer': ['SGD'], 'momentum': [0.9, 1.5, 'log_near_one']}]}$$, '{}', 'random', 3, 1);
SELECT madlib.hyperband_schedule('hb_x', 2, 3);
SELECT madlib.generate_model_configs('model_arch_library', 'mst_x', ARRAY[1],
    $${'optimizer_params_list': [{'optimizer': ['SGD'], 'momentum': [0.9, 0.99, 'log_near_one']}]}$$, '{}');
SELECT madlib.generate_model_configs('model_arch_library', 'mst_x', ARRAY[1], $$['not', 'a', 'dict']$$, '{}');
SELECT madlib.generate_model_configs('model_arch_library', 'mst_x', ARRAY[1], $${'loss': [}$$, '{}');
SELECT madlib.madlib_keras_automl('iris_train_packed', 'automl_x', 'model_arch_library', 'automl_x_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy']}$$, '{}', 'hyperopt', 'num_configs=21', NULL, NULL, FALSE, NULL, NULL, NULL, NULL, TRUE);
SELECT madlib.madlib_keras_automl('iris_train_packed', 'automl_x', 'model_arch_library', 'automl_x_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy']}$$, '{}', 'hyperopt', 'num_configs=2, algorithm=anneal');
SELECT madlib.madlib_keras_automl('iris_train_packed', 'automl_x', 'model_arch_library', 'automl_x_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy']}$$, '{}', 'hyperopt', 'R=6');
SELECT madlib.madlib_keras_automl('iris_train_packed', 'automl_x', 'model_arch_library', 'automl_x_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy']}$$, '{}', 'hyperband', 'R=6, eta=1');
SELECT madlib.madlib_keras_automl('iris_train_packed', 'automl_x', 'model_arch_library', 'automl_x_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy']}$$, '{}', 'hyperband', 'R=6, gamma=2');
SELECT madlib.load_keras_model('model_arch_library', '{"class_name": "Sequential", "config": []}'::json, NULL, NULL, NULL, 7);
\set VERBOSITY default
SELECT to_regclass('iris_gpu') IS NULL AS nothing_written, to_regclass('iris_x') IS NULL AS nothing_packed;

-- ---- Keras weights as MADlib stores them: float32 bytes (little-endian) in get_weights() order ----
CREATE FUNCTION keras_bytes(v real[]) RETURNS bytea LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(substring(b FROM 4 FOR 1) || substring(b FROM 3 FOR 1) || substring(b FROM 2 FOR 1)
                      || substring(b FROM 1 FOR 1), ''::bytea ORDER BY i)
    FROM unnest(v) WITH ORDINALITY AS u(f, i), LATERAL (SELECT float4send(f) AS b) s $$;
-- Dense(4 -> 2, softmax): kernel [4, 2] = [[1, -1], [0, 0.5], [2, 0], [0, 0]], bias [0.1, -0.1].
SELECT madlib.load_keras_model('keras_bytes_arch', $$
{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d", "activation": "softmax", "units": 2, "batch_input_shape": [null, 4]}}]}
$$, keras_bytes(ARRAY[1, -1, 0, 0.5, 2, 0, 0, 0, 0.1, -0.1]::real[]), 'keras bytes');
CREATE TABLE kb_points AS SELECT * FROM (VALUES (1, ARRAY[1, 2, 0, 0]::float8[]), (2, ARRAY[0, 0, 1, 1]::float8[])) v(id, x);
SELECT madlib.madlib_keras_predict_byom('keras_bytes_arch', 1, 'kb_points', 'id', 'x', 'kb_predicted', 'prob');
-- By hand: logits (1.1, -0.1) and (2.1, -0.1): class 0 has 1 / (1 + exp(-1.2)) = 0.76852 and
-- 1 / (1 + exp(-2.2)) = 0.90025.
SELECT id, class_value, round(prob::numeric, 5) AS prob, rank FROM kb_predicted ORDER BY id, rank;
-- A wrong length names both byte counts.
SELECT madlib.load_keras_model('keras_bytes_arch', $$
{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d", "activation": "softmax", "units": 2, "batch_input_shape": [null, 4]}}]}
$$, keras_bytes(ARRAY[1, 2, 3]::real[]));
-- Training from them: madlib_keras_fit starts from the stored weights (one step of a tiny rate) of
-- Dense(4 -> 3, softmax) for iris.
SELECT madlib.load_keras_model('keras_bytes_arch', $$
{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d", "activation": "softmax", "units": 3, "batch_input_shape": [null, 4]}}]}
$$, keras_bytes(ARRAY(SELECT (i % 5 - 2) / 10.0 FROM generate_series(1, 15) i)::real[]), 'keras bytes for iris');
SELECT madlib.madlib_keras_fit('iris_train_packed', 'kb_model', 'keras_bytes_arch', 2,
    $$ loss='categorical_crossentropy', optimizer='SGD(lr=0.0000001)' $$, $$ batch_size=200 $$, 1);
SELECT (SELECT max(abs(w - k)) < 1e-5 FROM unnest(hopper.model_weights(model_weights),
        ARRAY(SELECT (i % 5 - 2) / 10.0 FROM generate_series(1, 15) i)::real[]) AS u(w, k)) AS starts_from_keras_weights
FROM kb_model;

-- ---- frozen layers: MADlib's transfer-learning example freezes the lower layers ----
SELECT madlib.load_keras_model('frozen_arch', $$
{"class_name": "Sequential", "keras_version": "2.1.6", "config":
 [{"class_name": "Dense", "config": {"name": "dense_1", "activation": "relu", "trainable": false, "units": 10, "batch_input_shape": [null, 4], "use_bias": true}},
  {"class_name": "Dense", "config": {"name": "dense_2", "activation": "relu", "trainable": true, "units": 10, "use_bias": true}},
  {"class_name": "Dense", "config": {"name": "dense_3", "activation": "softmax", "trainable": true, "units": 3, "use_bias": true}}],
 "backend": "tensorflow"}
$$, (SELECT model_weights FROM iris_model), 'frozen dense_1');
SELECT madlib.madlib_keras_fit('iris_train_packed', 'iris_frozen', 'frozen_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5, epochs=3 $$, 3);
-- dense_1 (4 * 10 + 10 weights) is the trained model's, bit for bit; the layers above trained on.
SELECT (hopper.model_weights(f.model_weights))[1:50] = (hopper.model_weights(m.model_weights))[1:50] AS frozen_kept,
       (hopper.model_weights(f.model_weights))[51:193] <> (hopper.model_weights(m.model_weights))[51:193] AS others_trained,
       training_metrics_final > 0.8 AS accurate
FROM iris_frozen f, iris_model m, iris_frozen_summary;
-- ---- MADlib 2.x's packed table: <x>/<y> as bytes, MADlib's buffers and summary types (issue 30) ----
CREATE FUNCTION refusal(stmt text) RETURNS text LANGUAGE plpgsql AS $f$
BEGIN
    EXECUTE stmt;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $f$;
SELECT madlib.load_keras_model('mad17_arch', '{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d1", "activation": "softmax", "units": 4, "batch_input_shape": [null, 6], "use_bias": true}}], "backend": "tensorflow"}'::json);
CREATE TABLE mad17 (id serial, x double precision[], label text, y int, yf double precision, yb boolean);
INSERT INTO mad17 (x, label, y, yf, yb)
SELECT ARRAY[g, g + 1, g * 2, 4, 5, 6], CASE WHEN g % 5 = 0 THEN NULL WHEN g % 2 = 0 THEN 'a' ELSE 'b' END,
       (ARRAY[-6, 3, 12, 0])[g % 4 + 1], (ARRAY[4.0, 4.2, 5.0])[g % 3 + 1], g % 3 = 0
FROM generate_series(1, 17) g;
-- Buffers as MADlib fills them: ceil(17 / 4) = 5 rows, the last short (hopper's own: 5, 4, 4, 4).
SELECT madlib.training_preprocessor_dl('mad17', 'mad17_packed', 'y', 'x', 5, 2.0);
SELECT buffer_id, x_shape, y_shape, octet_length(x) AS x_bytes, octet_length(y) AS y_bytes
FROM mad17_packed ORDER BY buffer_id;
-- The bytes are hopper's arrays: float32 (divided by normalizing_const) and int16 one-hot labels.
SELECT bool_and(madlib.convert_bytea_to_real_array(x) = ARRAY(SELECT unnest(hopper_independent_var))) AS x_is_features,
       bool_and(madlib.convert_bytea_to_smallint_array(y)::real[] = ARRAY(SELECT unnest(hopper_dependent_var))) AS y_is_one_hot
FROM mad17_packed;
SELECT min(v), max(v) FROM mad17_packed, unnest(madlib.convert_bytea_to_real_array(x)) v;
-- The summary as MADlib 2.x writes it (names as given, one entry per variable, class values of the
-- label's type, sorted as numbers, buffer_size the fullest buffer's rows); hopper still trains from it.
SELECT source_table, output_table, dependent_varname, independent_varname, dependent_vartype, y_class_values,
       num_classes, buffer_size, normalizing_const, pg_typeof(normalizing_const) AS const_type
FROM mad17_packed_summary;
SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_model', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer=Adam(epsilon=None), metrics=[] $$, 'batch_size=5', 2);
SELECT source_table, model_arch_table, model_type, compile_params, dependent_varname, num_classes, metrics_type,
       training_metrics IS NULL AS no_metrics, cardinality(training_loss) AS losses FROM mad17_model_summary;
-- Floats and booleans as labels are classes too, as MADlib one-hot encodes every scalar label.
SELECT madlib.training_preprocessor_dl('mad17', 'mad17_yf', 'yf', 'x', 4);
SELECT madlib.training_preprocessor_dl('mad17', 'mad17_yb', 'yb', 'x', 4);
SELECT f.dependent_vartype, f.yf_class_values, f.yf_class_values = '{4.0,4.2,5.0}' AS as_madlib,
       b.dependent_vartype, b.yb_class_values FROM mad17_yf_summary f, mad17_yb_summary b;
-- NULL labels are a class of their own, first and shown NULL (hopper names it <NULL>); a validation
-- table of one row goes on one segment.
SELECT madlib.training_preprocessor_dl('mad17', 'mad17_null', 'label', 'x', 4, 1.0, ARRAY[5]);
SELECT class_values, label_class_values, dependent_vartype FROM mad17_null_summary;
CREATE TABLE mad1 AS SELECT * FROM mad17 WHERE label IS NULL LIMIT 1;
SELECT madlib.validation_preprocessor_dl('mad1', 'mad1_val', 'label', 'x', 'mad17_null');
SELECT madlib.convert_bytea_to_smallint_array(label) AS one_hot, label_shape, num_segments, buffer_size
FROM mad1_val, mad1_val_summary;
UPDATE mad17 SET label = '' WHERE id = 1;
SELECT refusal($$SELECT madlib.training_preprocessor_dl('mad17', 'mad17_clash', 'label', 'x')$$);
-- The conversions: little-endian bytes, as numpy's tobytes(); a length that does not divide is refused.
SELECT madlib.convert_array_to_bytea(ARRAY[1.5, -2]::real[]) AS real_bytes,
       madlib.convert_array_to_bytea(ARRAY[1, -2, 300]::smallint[]) AS smallint_bytes,
       madlib.convert_bytea_to_real_array('\x0000c03f000000c0') AS reals,
       madlib.convert_bytea_to_smallint_array('\x0100feff2c01') AS smallints,
       madlib.convert_array_to_bytea('{}'::real[]) AS empty_bytes, madlib.convert_bytea_to_real_array('') AS empty_reals;
SELECT refusal($$SELECT madlib.convert_bytea_to_real_array('\x000000')$$);
SELECT refusal($$SELECT madlib.convert_bytea_to_smallint_array('\x00')$$);
SELECT refusal($$SELECT madlib.convert_array_to_bytea(ARRAY[1, NULL]::real[])$$);

-- ---- model selection tables as MADlib's: the architecture table as written, repetitions dropped ----
SELECT madlib.load_model_selection_table('mad17_arch', 'mad17_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy',optimizer='Adam(lr=0.1)'$$,
          $$  optimizer='Adam(lr=0.1)', loss='categorical_crossentropy' $$,
          $$loss='categorical_crossentropy',optimizer='Adam(lr=0.01)'$$],
    ARRAY['batch_size=5', ' batch_size = 5 ', '{"batch_size": 5}', 'batch_size=8']);
SELECT model_arch_table, hopper_model_arch_table FROM mad17_mst_summary;
SELECT mst_key, compile_params, fit_params FROM mad17_mst ORDER BY mst_key;
SELECT madlib.madlib_keras_fit_multiple_model('mad17_packed', 'mad17_multi', 'mad17_mst', 1);
SELECT count(*) AS trained FROM mad17_multi_info;
-- Appending to a table whose summary was dropped makes the summary again, as MADlib does.
DROP TABLE mad17_mst_summary;
SELECT madlib.generate_model_configs('mad17_arch', 'mad17_mst', ARRAY[1], $${'loss': ['categorical_crossentropy']}$$,
                                     $${'batch_size': [4]}$$);
SELECT model_arch_table, count(*) AS configs FROM mad17_mst_summary, mad17_mst GROUP BY 1;
-- An element hopper cannot read is left for hopper's error, naming it.
SELECT refusal($$SELECT madlib.load_model_selection_table('mad17_arch', 'mad17_bad', ARRAY[1],
    ARRAY['loss=''mse''', 'foo=''bar'''], ARRAY[''])$$);
SELECT hopper.canonical_compile_params($$optimizer='SGD(lr=0.1)', loss='mse'$$)
     = hopper.canonical_compile_params('{"loss": "mean_squared_error", "optimizer": "sgd", "learning_rate": 0.1}') AS same,
       hopper.canonical_fit_params('batch_size=8, epochs=2') AS fit_json;
SELECT refusal($$SELECT hopper.canonical_fit_params('batch_size=0')$$);

-- ---- packed tables built by hand from MADlib's columns (MADlib's tests make them): packed again ----
CREATE TABLE mad17_by_hand AS SELECT buffer_id, x, y, x_shape, y_shape FROM mad17_packed;
CREATE TABLE mad17_by_hand_summary (source_table text, output_table text, dependent_varname text[],
    independent_varname text[], dependent_vartype text[], y_class_values text[], buffer_size integer,
    normalizing_const numeric);
INSERT INTO mad17_by_hand_summary VALUES ('mad17', 'mad17_by_hand', ARRAY['y'], ARRAY['x'], ARRAY['text'],
    ARRAY[NULL, 'p', 'q', NULL], 5, 2.0);
SELECT madlib.madlib_keras_fit('mad17_by_hand', 'mad17_hand_model', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, 'batch_size=5', 2,
    FALSE, 'mad17_by_hand');
-- hopper's classes name MADlib's (NULL first: <NULL>, NULL last: padding); the copies are gone.
SELECT source_table, validation_table, class_values, y_class_values, dependent_vartype, hopper_dependent_vartype,
       normalizing_const, cardinality(validation_loss) AS validated FROM mad17_hand_model_summary;
SELECT count(*) AS copies_left FROM pg_class WHERE relname LIKE '\_\_hopper\_repacked%';
-- Such a table's shape columns of a type some role made (here a composite with an implicit cast to
-- integer that records its calls) are refused before anything reads them: generate_series ran the
-- cast as the caller, a superuser training on another role's table included (a hostile review).
CREATE TABLE shape_cast_calls (n int);
CREATE TYPE shape_word AS (n int);
CREATE FUNCTION shape_word_int(w shape_word) RETURNS int LANGUAGE plpgsql AS $$
BEGIN INSERT INTO shape_cast_calls VALUES (1); RETURN w.n; END $$;
CREATE CAST (shape_word AS int) WITH FUNCTION shape_word_int(shape_word) AS IMPLICIT;
CREATE TABLE mad17_shaped AS SELECT buffer_id, x, y, ARRAY[ROW(x_shape[1])::shape_word, ROW(x_shape[2])::shape_word] AS x_shape,
    y_shape FROM mad17_packed;
CREATE TABLE mad17_shaped_summary AS SELECT * FROM mad17_by_hand_summary;
SELECT refusal($q$SELECT madlib.madlib_keras_fit('mad17_shaped', 'mad17_shaped_model', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, 'batch_size=5', 1)$q$);
SELECT count(*) AS shape_cast_calls FROM shape_cast_calls;
-- MADlib's predict names the classes by the model summary's <y>_class_values, which scripts change.
UPDATE mad17_hand_model_summary SET y_class_values = ARRAY[NULL, 7, 8, 9]::int[], dependent_vartype = ARRAY['integer'];
SELECT madlib.madlib_keras_predict('mad17_hand_model', 'mad17', 'id', 'x', 'mad17_hand_pred', 'prob');
SELECT array_agg(DISTINCT class_value) AS classes, count(*) AS rows FROM mad17_hand_pred;
-- MADlib's columns named as hopper's arrays (bytes, not real[]): packed again all the same.
CREATE TABLE mad17_hand_named AS SELECT buffer_id, x AS independent_var, y AS dependent_var,
    x_shape AS independent_var_shape, y_shape AS dependent_var_shape FROM mad17_packed;
CREATE TABLE mad17_hand_named_summary AS SELECT source_table, output_table, ARRAY['dependent_var'] AS dependent_varname,
    ARRAY['independent_var'] AS independent_varname, dependent_vartype, y_class_values AS dependent_var_class_values,
    buffer_size, normalizing_const FROM mad17_by_hand_summary;
SELECT madlib.madlib_keras_fit('mad17_hand_named', 'mad17_hand_named_model', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, 'batch_size=5', 1);
SELECT class_values FROM mad17_hand_named_model_summary;
-- Class values MADlib cannot have (a NULL between named classes) are refused.
UPDATE mad17_by_hand_summary SET y_class_values = ARRAY['p', NULL, 'q', NULL];
SELECT refusal($$SELECT madlib.madlib_keras_fit('mad17_by_hand', 'mad17_bad_model', 'mad17_arch', 1,
    $c$ loss='categorical_crossentropy', optimizer='adam' $c$, 'batch_size=5', 1)$$);
-- Images of another shape than the model's (as many numbers) are refused, as MADlib refuses them.
CREATE TABLE image_transposed AS
SELECT id, ARRAY[[[rgb[1][1][1], rgb[1][1][2]], [rgb[1][1][3], rgb[1][2][1]], [rgb[1][2][2], rgb[1][2][3]]],
                 [[rgb[2][1][1], rgb[2][1][2]], [rgb[2][1][3], rgb[2][2][1]], [rgb[2][2][2], rgb[2][2][3]]]] AS rgb
FROM image_data;
SELECT refusal($$SELECT madlib.madlib_keras_predict('image_model', 'image_transposed', 'id', 'rgb', 'image_t_predict')$$);

-- ---- NULL labels of numbers: a first class too (one less than the least label while packing) ----
CREATE TABLE nums AS
SELECT g AS id, ARRAY[(g % 3) * 4.0, (g % 3) * -4.0 + 1]::float8[] AS x,
       CASE g % 3 WHEN 0 THEN NULL ELSE (g % 3)::smallint END AS y
FROM generate_series(1, 60) g;
SELECT madlib.training_preprocessor_dl('nums', 'nums_packed', 'y', 'x', 10, 1.0, ARRAY[4]);
SELECT class_values, y_class_values, dependent_vartype, hopper_dependent_vartype FROM nums_packed_summary;
SELECT madlib.validation_preprocessor_dl('nums', 'nums_val', 'y', 'x', 'nums_packed');
SELECT y_class_values, num_rows FROM nums_val_summary;
SELECT madlib.load_keras_model('nums_arch', '{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d1", "activation": "softmax", "units": 4, "batch_input_shape": [null, 2], "use_bias": true}}], "backend": "tensorflow"}'::json);
SELECT madlib.madlib_keras_fit('nums_packed', 'nums_model', 'nums_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='Adam(lr=0.1)', metrics=['accuracy'] $$, 'batch_size=5, epochs=4', 5,
    FALSE, 'nums_val');
-- The NULL class is predicted (NULL in MADlib's rows), and hopper's own predict gives NULL for it in
-- the label's type (smallint) rather than failing on its name.
SELECT madlib.madlib_keras_predict('nums_model', 'nums', 'id', 'x', 'nums_pred', 'response');
SELECT class_value, count(*) FROM nums_pred GROUP BY 1 ORDER BY 1;
SELECT hopper.predict('nums_model', 'nums', 'id', 'x', 'nums_hopper_pred');
SELECT pg_typeof(estimated_y) AS type, estimated_y, count(*) FROM nums_hopper_pred GROUP BY 1, 2 ORDER BY 2;

-- ---- Keras' initial_epoch (epochs - initial_epoch epochs) and options given as None ----
SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_epochs', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', sample_weight_mode=None $$,
    $$ batch_size=5, epochs=3, initial_epoch=1, class_weight=None $$, 1);
-- 2 epochs of 17 rows in buffers of 5 rows, minibatches of 5: 4 steps an epoch, 8 in all.
SELECT s.fit_params, hopper.model_state_info(m.model_weights) -> 'config' -> 'fit' ->> 'epochs' AS epochs,
       (hopper.model_state_info(m.model_weights) ->> 'steps')::int AS steps FROM mad17_epochs m, mad17_epochs_summary s;

-- ---- Keras' steps_per_epoch, as MADlib's Keras takes it: steps on whole buffers ----
-- 4 buffers (5, 5, 5 and 2 rows), (3 - 1) epochs of 2 steps on each: 16 steps, batch_size and shuffle
-- without effect.
SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_steps', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$,
    $$ epochs=3, verbose=0, shuffle=True, initial_epoch=1, steps_per_epoch=2 $$, 1);
SELECT s.fit_params, (hopper.model_state_info(m.model_weights) ->> 'steps')::int AS steps,
       hopper.model_state_info(m.model_weights) -> 'config' -> 'fit' ->> 'steps_per_epoch' AS steps_per_epoch
FROM mad17_steps m, mad17_steps_summary s;
-- One step an epoch on each whole buffer is a minibatch of each buffer's rows, in order.
SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_steps1', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, $$ steps_per_epoch=1, batch_size=2 $$, 2);
SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_whole', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, $$ batch_size=5, shuffle=False $$, 2);
SELECT hopper.model_weights(a.model_weights) = hopper.model_weights(b.model_weights) AS same_weights
FROM mad17_steps1 a, mad17_whole b;
SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_steps0', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer='adam' $$, $$ steps_per_epoch=0 $$, 1);

-- ---- Keras' loss_weights=[w] (the one output's loss and its gradient scaled by w) ----
-- Plain SGD: w=2 at lr=0.01 takes the very steps of w=1 at lr=0.02 (same weights), and reports
-- twice the loss (evaluated on the same weights): a ratio of exactly 2.
SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_lw2', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer=SGD(lr=0.01), loss_weights=[2], sample_weight_mode=None $$,
    $$ batch_size=5, epochs=2, shuffle=False $$, 2);
SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_lw1', 'mad17_arch', 1,
    $$ loss='categorical_crossentropy', optimizer=SGD(lr=0.02) $$, $$ batch_size=5, epochs=2, shuffle=False $$, 2);
SELECT hopper.model_state_info(a.model_weights) -> 'config' -> 'compile' -> 'loss_weights' AS kept,
       hopper.model_state_info(b.model_weights) -> 'config' -> 'compile' -> 'loss_weights' AS absent
FROM mad17_lw2 a, mad17_lw1 b;
SELECT round((a.training_loss_final / b.training_loss_final)::numeric, 6) AS loss_ratio,
       a.compile_params
FROM mad17_lw2_summary a, mad17_lw1_summary b;
SELECT refusal($$SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_lwx', 'mad17_arch', 1,
    $c$ loss='categorical_crossentropy', optimizer='adam', loss_weights=[1, 2] $c$, 'batch_size=5', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_lwx', 'mad17_arch', 1,
    $c$ loss='categorical_crossentropy', optimizer='adam', loss_weights=[-1] $c$, 'batch_size=5', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('mad17_packed', 'mad17_lwx', 'mad17_arch', 1,
    $c$ loss='categorical_crossentropy', optimizer='adam', sample_weight_mode='temporal' $c$, 'batch_size=5', 1)$$);

-- ---- a dependent variable one-hot encoded already (an integer or boolean array) ----
-- MADlib takes it as one-hot (its preprocessor casts it to smallint[]) and trains a classifier over
-- its columns: <y>_class_values NULL, and predictions name the classes by index (0, 1, 2), also
-- with pred_type 'prob' (which failed: the facade packed the array as a regression target).
CREATE TABLE iris_onehot AS
SELECT id, attributes, ARRAY[(class_text = 'Iris-setosa')::int, (class_text = 'Iris-versicolor')::int,
                             (class_text = 'Iris-virginica')::int] AS y,
       ARRAY[class_text = 'Iris-setosa', class_text = 'Iris-versicolor', class_text = 'Iris-virginica'] AS yb
FROM iris_data;
CREATE TABLE iris_onehot_train AS SELECT * FROM iris_onehot WHERE id % 5 <> 0;
CREATE TABLE iris_onehot_test AS SELECT * FROM iris_onehot WHERE id % 5 = 0;
SELECT madlib.training_preprocessor_dl('iris_onehot_train', 'iris_onehot_packed', 'y', 'attributes');
-- The validation packing only reads the training summary (it rewrote it to regression for the
-- call, which needed UPDATE on it and ran its owner's triggers as the caller: a review).
CREATE TEMP TABLE onehot_summary_before AS SELECT xmin::text AS row_version FROM iris_onehot_packed_summary;
SELECT madlib.validation_preprocessor_dl('iris_onehot_test', 'iris_onehot_val', 'y', 'attributes', 'iris_onehot_packed');
SELECT (SELECT xmin::text FROM iris_onehot_packed_summary) = row_version AS training_summary_untouched
FROM onehot_summary_before;
SELECT dependent_vartype, y_class_values, pg_typeof(y_class_values) AS class_values_type, num_classes, class_values
FROM iris_onehot_packed_summary;
SELECT dependent_vartype, y_class_values, num_classes FROM iris_onehot_val_summary;
SELECT DISTINCT y_shape[2] AS classes, pg_typeof(y) AS packed_type FROM iris_onehot_val;
SELECT sum(v) AS ones FROM iris_onehot_val, unnest(madlib.convert_bytea_to_smallint_array(y)) v;
SELECT madlib.madlib_keras_fit('iris_onehot_packed', 'iris_onehot_model', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5, epochs=10 $$, 5,
    FALSE, 'iris_onehot_val');
SELECT dependent_vartype, y_class_values, num_classes, metrics_type, validation_metrics_final > 0.5 AS learned
FROM iris_onehot_model_summary;
SELECT madlib.madlib_keras_evaluate('iris_onehot_model', 'iris_onehot_val', 'iris_onehot_evaluate');
SELECT metrics_type, metric > 0.5 AS accurate FROM iris_onehot_evaluate;
SELECT madlib.madlib_keras_predict('iris_onehot_model', 'iris_onehot_test', 'id', 'attributes', 'iris_onehot_prob', 'prob');
SELECT class_name, array_agg(DISTINCT class_value ORDER BY class_value) AS class_values, count(*) AS rows,
       count(DISTINCT id) AS ids FROM iris_onehot_prob GROUP BY class_name;
SELECT madlib.madlib_keras_predict('iris_onehot_model', 'iris_onehot_test', 'id', 'attributes', 'iris_onehot_response',
                                   'response');
SELECT string_agg(attname, ', ' ORDER BY attnum) AS response_columns FROM pg_attribute
WHERE attrelid = 'iris_onehot_response'::regclass AND attnum > 0 AND NOT attisdropped;
SELECT count(*) AS predicted, count(*) FILTER (WHERE t.y[p.class_value::int + 1] = 1) > 20 AS accurate
FROM iris_onehot_response p JOIN iris_onehot_test t USING (id);
SELECT count(*) AS same_as_prob FROM iris_onehot_response r JOIN iris_onehot_prob p USING (id)
WHERE p.rank = 1 AND p.class_value = r.class_value;
-- Bring your own model, without class_values: MADlib's dependent_var, classes by index.
UPDATE model_arch_library SET model_weights = m.model_weights FROM iris_onehot_model m WHERE model_arch_library.model_id = 1;
SELECT madlib.madlib_keras_predict_byom('model_arch_library', 1, 'iris_onehot_test', 'id', 'attributes',
                                        'iris_onehot_byom', 'response');
SELECT min(b.class_name) AS class_name, count(*) FILTER (WHERE b.class_value = r.class_value) AS as_predict
FROM iris_onehot_byom b JOIN iris_onehot_response r USING (id);
UPDATE model_arch_library SET model_weights = NULL WHERE model_id = 1;
-- A table packed by MADlib itself (its columns only, <y>_class_values NULL): the same classifier
-- (its NULL class values failed: cannot extract elements from a scalar).
CREATE TABLE iris_onehot_madlib AS SELECT buffer_id, attributes, y, attributes_shape, y_shape FROM iris_onehot_packed;
CREATE TABLE iris_onehot_madlib_summary AS
SELECT source_table, output_table, dependent_varname, independent_varname, dependent_vartype, y_class_values,
       buffer_size, normalizing_const, num_classes FROM iris_onehot_packed_summary;
SELECT madlib.madlib_keras_fit('iris_onehot_madlib', 'iris_onehot_madlib_model', 'model_arch_library', 1,
    $$ loss='categorical_crossentropy', optimizer='adam', metrics=['accuracy'] $$, $$ batch_size=5 $$, 2);
SELECT dependent_vartype, y_class_values, num_classes, class_values FROM iris_onehot_madlib_model_summary;
SELECT madlib.madlib_keras_predict('iris_onehot_madlib_model', 'iris_onehot_test', 'id', 'attributes',
                                   'iris_onehot_madlib_prob', 'prob');
SELECT array_agg(DISTINCT class_value ORDER BY class_value) AS class_values, count(*) AS rows FROM iris_onehot_madlib_prob;
-- A boolean array packs the same; num_classes must be the arrays' width (MADlib pads no array).
SELECT madlib.training_preprocessor_dl('iris_onehot_train', 'iris_onehot_bool', 'yb', 'attributes');
SELECT dependent_vartype, yb_class_values, num_classes, class_values FROM iris_onehot_bool_summary;
SELECT madlib.validation_preprocessor_dl('iris_onehot_test', 'iris_onehot_bool_val', 'yb', 'attributes', 'iris_onehot_bool');
SELECT sum(v) AS ones FROM iris_onehot_bool_val, unnest(madlib.convert_bytea_to_smallint_array(yb)) v;
SELECT refusal($$SELECT madlib.training_preprocessor_dl('iris_onehot_train', 'iris_onehot_4', 'y', 'attributes', NULL, 1.0,
                                                        ARRAY[4])$$);
SELECT count(*) AS flattened_copies_left FROM pg_class WHERE relname = '__hopper_flat_source';

DROP EXTENSION hopper_madlib;
