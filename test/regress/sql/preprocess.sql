-- hopper.preprocess: packing, summary, validation packing and every error branch.
-- Each test file works in its own schema, so test files never see each other's tables.
CREATE SCHEMA test_preprocess;
SET search_path = test_preprocess, public;
SET client_min_messages = warning;

CREATE TABLE points AS
SELECT g AS id,
       ARRAY[(g % 3) * 2.0 + sin(g) * 0.5, (g % 2) * 3.0 + cos(g) * 0.5]::float8[] AS x,
       (g % 3)::int AS label,
       (g % 3) * 1.5 + 0.25 AS target,
       ((g % 3) * 2.0)::real AS a, (g % 2)::int AS b
FROM generate_series(1, 1000) g;

SELECT hopper.preprocess('points', 'points_packed', 'label', 'x', buffer_size => 64, num_segments => 3, seed => 7);
SELECT response_type, class_values, num_classes, buffer_size, num_segments, num_rows, num_buffers,
       rows_per_segment, buffers_per_segment, independent_dim, dependent_dim, scale
FROM points_packed_summary;
-- One partition per segment; buffers spread evenly; every row packed exactly once.
SELECT dist_key, count(*) AS buffers, sum(independent_var_shape[1]) AS rows
FROM points_packed GROUP BY dist_key ORDER BY dist_key;
SELECT count(*) AS partitions FROM pg_inherits WHERE inhparent = 'points_packed'::regclass;
-- Labels are one-hot encoded, in the order of class_values.
SELECT DISTINCT array_length(dependent_var, 2) AS classes,
       (SELECT sum(v) FROM unnest(dependent_var) v) = independent_var_shape[1] AS one_hot
FROM points_packed;
-- Float data is stored uncompressed out of line.
SELECT attname, attstorage FROM pg_attribute
WHERE attrelid = 'points_packed_p0'::regclass AND attname IN ('independent_var', 'dependent_var') ORDER BY 1;
-- The same seed packs the same buffers.
SELECT hopper.preprocess('points', 'points_packed2', 'label', 'x', buffer_size => 64, num_segments => 3, seed => 7);
SELECT count(*) AS differing_buffers FROM points_packed a JOIN points_packed2 b USING (dist_key, buffer_id)
WHERE a.independent_var IS DISTINCT FROM b.independent_var;

-- Feature columns given as a list, standardized; regression on a float target.
SELECT hopper.preprocess('points', 'points_reg', 'target', 'a, b', buffer_size => 100, num_segments => 2,
                         scale => 'standardize');
SELECT response_type, class_values, dependent_dim, independent_dim, scale,
       array_length(feature_center, 1) AS centers
FROM points_reg_summary;
SELECT round(avg(v)::numeric, 6) AS mean_after_scaling
FROM points_reg, LATERAL unnest(independent_var) v;

-- Validation data packed like the training data.
CREATE TABLE points_valid AS SELECT * FROM points WHERE id <= 300;
SELECT hopper.preprocess_validation('points_valid', 'points_valid_packed', 'label', 'x', 'points_packed');
SELECT class_values, num_segments, num_rows, training_preprocessed_table FROM points_valid_packed_summary;
-- Fewer validation rows than the training table's segments go on as many segments (as training
-- data does); segments asked for are kept (and refused when there are too few rows).
CREATE TABLE points_two AS SELECT * FROM points WHERE id <= 2;
SELECT hopper.preprocess_validation('points_two', 'points_two_packed', 'label', 'x', 'points_packed');
SELECT num_segments, num_rows, buffers_per_segment FROM points_two_packed_summary;
SELECT hopper.preprocess_validation('points_two', 'points_two_3', 'label', 'x', 'points_packed', num_segments => 3);

-- buffer_fill: even (the default: buffers as equal as possible) or full (Apache MADlib's: every
-- buffer but the last holds ceil(rows / buffers) rows).
CREATE TABLE points_17 AS SELECT * FROM points WHERE id <= 17;
SELECT hopper.preprocess('points_17', 'points_17_even', 'label', 'x', buffer_size => 5, num_segments => 1);
SELECT hopper.preprocess('points_17', 'points_17_full', 'label', 'x', buffer_size => 5, num_segments => 1,
                         buffer_fill => 'full');
SELECT hopper.preprocess_validation('points_17', 'points_17_vfull', 'label', 'x', 'points_17_full',
                                    buffer_size => 4, buffer_fill => 'full');
SELECT 'even' AS fill, array_agg(independent_var_shape[1] ORDER BY buffer_id) AS rows FROM points_17_even
UNION ALL SELECT 'full', array_agg(independent_var_shape[1] ORDER BY buffer_id) FROM points_17_full
UNION ALL SELECT 'full, validation', array_agg(independent_var_shape[1] ORDER BY buffer_id) FROM points_17_vfull;
SELECT hopper.preprocess('points_17', 'o1', 'label', 'x', buffer_fill => 'madlib');
SELECT hopper.preprocess_validation('points_17', 'o1', 'label', 'x', 'points_17_full', buffer_fill => '');
SELECT to_regclass('o1') AS nothing_left;

-- Errors: each is a clear message, and nothing is left behind.
SELECT hopper.preprocess('no_such_table', 'o1', 'label', 'x');
SELECT hopper.preprocess('points', 'o1', 'no_such_column', 'x');
SELECT hopper.preprocess('points', 'o1', 'label', 'nope');
SELECT hopper.preprocess('points', 'points_packed', 'label', 'x');
SELECT hopper.preprocess('points', 'o1', 'label', 'x', buffer_size => 0);
SELECT hopper.preprocess('points', 'o1', 'label', 'x', num_segments => -1);
SELECT hopper.preprocess('points', 'o1', 'label', 'x', scale => 'zscore');
SELECT hopper.preprocess('points', 'o1', 'label', 'x', normalizing_const => 0);
SELECT hopper.preprocess('points', 'o1', 'label', 'x', response_type => 'ranking');
SELECT hopper.preprocess('points', 'o1; drop table points', 'label', 'x');
SELECT hopper.preprocess('points', NULL, 'label', 'x');
CREATE TABLE empty_points (x float8[], label int);
SELECT hopper.preprocess('empty_points', 'o1', 'label', 'x');
CREATE TABLE ragged AS SELECT * FROM (VALUES (ARRAY[1.0, 2.0]::float8[], 1), (ARRAY[1.0]::float8[], 2)) v(x, label);
SELECT hopper.preprocess('ragged', 'o1', 'label', 'x');
-- Widths are read from the arrays' headers alone, whatever the storage: compressed inline (zeros),
-- compressed out of line, uncompressed out of line (sines do not compress), and out of line under
-- STORAGE EXTERNAL.
CREATE TABLE ragged_toasted (x real[], y real[], label int);
INSERT INTO ragged_toasted SELECT array_fill(0::real, ARRAY[3000]), ARRAY[1, 2]::real[], 1;
INSERT INTO ragged_toasted SELECT array_agg(((i * 7919) % 1000)::real), ARRAY[1, 2]::real[], 2
  FROM generate_series(1, 3000) i;
INSERT INTO ragged_toasted SELECT array_agg(sin(i)::real), ARRAY[1, 2]::real[], 3 FROM generate_series(1, 3000) i;
ALTER TABLE ragged_toasted ALTER COLUMN x SET STORAGE EXTERNAL;
INSERT INTO ragged_toasted SELECT array_agg(sin(i)::real), ARRAY[1, 2]::real[], 4 FROM generate_series(1, 2999) i;
SELECT label, CASE WHEN pg_column_size(x) >= 2999 * 4 THEN 'uncompressed' WHEN pg_column_size(x) > 2032
                   THEN 'compressed, out of line' ELSE 'compressed, inline' END AS stored
FROM ragged_toasted ORDER BY label;
SELECT hopper.preprocess('ragged_toasted', 'o1', 'label', 'x');
DELETE FROM ragged_toasted WHERE label = 4;
INSERT INTO ragged_toasted SELECT array_agg(sin(i)::real), ARRAY[1, 2, 3]::real[], 4 FROM generate_series(1, 3000) i;
SELECT hopper.preprocess('ragged_toasted', 'o1', 'y', 'x');
CREATE TABLE empty_arrays AS SELECT * FROM (VALUES ('{}'::real[], 1), ('{}'::real[], 2)) v(x, label);
SELECT hopper.preprocess('empty_arrays', 'o1', 'label', 'x');
CREATE TABLE with_nan AS SELECT * FROM (VALUES (ARRAY[1.0, 'NaN']::float8[], 1), (ARRAY[1.0, 2.0]::float8[], 2)) v(x, label);
SELECT hopper.preprocess('with_nan', 'o1', 'label', 'x');
CREATE TABLE null_features AS SELECT * FROM (VALUES (ARRAY[1.0, 2.0]::float8[], 1), (NULL, 2)) v(x, label);
SELECT hopper.preprocess('null_features', 'o1', 'label', 'x');
-- Text is a feature since issue 27 (categories, test tabular); JSON is not.
CREATE TABLE json_features AS SELECT '{}'::json AS x, 1 AS label;
SELECT hopper.preprocess('json_features', 'o1', 'label', 'x');
CREATE TABLE one_class AS SELECT ARRAY[g]::float8[] AS x, 1 AS label FROM generate_series(1, 10) g;
SELECT hopper.preprocess('one_class', 'o1', 'label', 'x');
SELECT hopper.preprocess('points', 'o1', 'label', 'x', num_segments => 2000);
CREATE TABLE points_unseen AS SELECT x, label + 10 AS label FROM points LIMIT 5;
SELECT hopper.preprocess_validation('points_unseen', 'o1', 'label', 'x', 'points_packed');
SELECT count(*) AS leftovers FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE 'o1%';

-- Identifiers with quotes, spaces and dots are names, not SQL.
CREATE TABLE "odd ""name"".x" AS SELECT * FROM points LIMIT 100;
SELECT hopper.preprocess('"odd ""name"".x"', '"packed; odd"', 'label', 'x', num_segments => 1);
SELECT num_rows FROM "packed; odd_summary";

-- num_classes (MADlib's padding): one-hot vectors with room for classes still to come, named
-- <padding 1>, ... after the data's; a table of one class then packs too. Fewer rows than the default
-- number of segments go on as many segments (one row: one segment).
SELECT hopper.preprocess('one_class', 'one_class_packed', 'label', 'x', num_classes => 3);
SELECT class_values, num_classes, dependent_dim FROM one_class_packed_summary;
SELECT DISTINCT dependent_var_shape[2] AS classes, dependent_var[1:1][1:3] FROM one_class_packed;
CREATE TABLE one_row AS SELECT ARRAY[1.0]::float8[] AS x, 'cat'::text AS label;
SELECT hopper.preprocess('one_row', 'one_row_packed', 'label', 'x', num_classes => 5);
SELECT class_values, num_segments, num_buffers FROM one_row_packed_summary;
SELECT hopper.preprocess('one_row', 'one_row_2', 'label', 'x', num_segments => 2, num_classes => 5);
-- Validation data packed against it follows its classes (its outputs).
SELECT hopper.preprocess_validation('one_class', 'one_class_val', 'label', 'x', 'one_class_packed');
SELECT DISTINCT dependent_var_shape[2] AS classes FROM one_class_val;
SELECT hopper.preprocess('points', 'o1', 'label', 'x', num_classes => 2);
SELECT hopper.preprocess('points', 'o1', 'label', 'x', num_classes => 1);
SELECT hopper.preprocess('points', 'o1', 'target', 'x', num_classes => 5);
CREATE TABLE padding_named AS SELECT ARRAY[g]::float8[] AS x, (ARRAY['a', '<padding 1>'])[g % 2 + 1] AS label
FROM generate_series(1, 10) g;
SELECT hopper.preprocess('padding_named', 'o1', 'label', 'x', num_classes => 3);
SELECT count(*) AS leftovers FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE 'o1%';
-- Features packed as numbers (an array, or numeric columns without NULLs: no recipe) that go in
-- unscaled with large values get a NOTICE once packed, as the recipe's columns do; not when
-- normalizing_const or scale brings them down, and whether the backend or parallel workers read.
CREATE TABLE raw_pixels AS SELECT ARRAY[g % 256, 255 - g % 256]::real[] AS x, g % 2 AS label,
  (g % 300)::float8 AS a, (g % 7)::float8 AS b FROM generate_series(1, 600) g;
SET client_min_messages = notice;
SET min_parallel_table_scan_size = 0;  -- workers read this small table
SELECT hopper.preprocess('raw_pixels', 'raw_p1', 'label', 'x', buffer_size => 100);
SELECT hopper.preprocess('raw_pixels', 'raw_p2', 'label', 'x', buffer_size => 100, normalizing_const => 255);
SELECT hopper.preprocess('raw_pixels', 'raw_p3', 'label', 'x', buffer_size => 100, scale => 'standardize');
SELECT hopper.preprocess('raw_pixels', 'raw_p4', 'label', 'a, b', buffer_size => 100, scale => 'none');
SET max_parallel_workers_per_gather = 0;
SELECT hopper.preprocess('raw_pixels', 'raw_p5', 'label', 'x', buffer_size => 100);
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;
RESET client_min_messages;

-- An integer target of many classes, some of them rare, is most likely a count (calls per day:
-- 60 values, 6 of them in one row each, 1,626 rows): a WARNING, though classes are few per row. The
-- same 60 values as labels of 30 rows each pack silently, as does response_type => 'classification'.
CREATE TABLE calls AS
  SELECT g % 54 AS calls, ARRAY[g % 7, g % 5]::real[] AS x FROM generate_series(1, 1620) g
  UNION ALL SELECT 54 + g, ARRAY[1, 2]::real[] FROM generate_series(0, 5) g;
CREATE TABLE labels AS SELECT g % 60 AS label, ARRAY[g % 7, g % 5]::real[] AS x FROM generate_series(1, 1800) g;
SELECT hopper.preprocess('calls', 'calls_packed', 'calls', 'x');
SELECT hopper.preprocess('calls', 'calls_labels', 'calls', 'x', response_type => 'classification');
SELECT hopper.preprocess('labels', 'labels_packed', 'label', 'x');
-- Test scores: 61 values from 400 to 700, none rare, 40 rows each -- neither dense nor thin, but
-- spread over a range twice as wide as their number, as codes of classes are not: a WARNING.
CREATE TABLE scores AS SELECT 400 + (g % 61) * 5 AS score, ARRAY[g % 7, g % 5]::real[] AS x FROM generate_series(1, 2440) g;
SELECT hopper.preprocess('scores', 'scores_packed', 'score', 'x', num_segments => 1);
-- Ages: 53 values from 17 to 69, 40 rows each -- fewer than 50 classes, neither dense, thin nor
-- spread, but starting at 17 where codes of classes start at 0 or 1: a WARNING. 25 labels from 0
-- (or 1) pack silently.
CREATE TABLE ages AS SELECT 17 + (g % 53) AS age, ARRAY[g % 7, g % 5]::real[] AS x FROM generate_series(1, 2120) g;
SELECT hopper.preprocess('ages', 'ages_packed', 'age', 'x', num_segments => 1);
CREATE TABLE labels25 AS SELECT g % 25 AS label, ARRAY[g % 7, g % 5]::real[] AS x FROM generate_series(1, 500) g;
SELECT hopper.preprocess('labels25', 'labels25_packed', 'label', 'x', num_segments => 1);
CREATE TABLE labels25b AS SELECT 1 + (g % 25) AS label, ARRAY[g % 7, g % 5]::real[] AS x FROM generate_series(1, 500) g;
SELECT hopper.preprocess('labels25b', 'labels25b_packed', 'label', 'x', num_segments => 1);
