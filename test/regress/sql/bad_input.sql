-- Bad input, function by function: each case states the SQLSTATE it must get, and after each one
-- no output table (nor its _info, _summary or partitions) and no working table (__hopper_*) may
-- exist. try() runs a statement and reports 'ok' or SQLSTATE and message, plus any leftovers.
-- In a database of its own: the objects, registry rows and settings it creates touch no other test.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS hopper_bad_input;
CREATE DATABASE hopper_bad_input;
\c hopper_bad_input
CREATE EXTENSION hopper;
SET client_min_messages = warning;
CREATE FUNCTION try(stmt text, outputs text[] DEFAULT '{}') RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    result text := 'ok';
    left_over text;
BEGIN
    BEGIN
        EXECUTE stmt;
    EXCEPTION WHEN OTHERS THEN
        result := SQLSTATE || ': ' || SQLERRM;
    END;
    SELECT string_agg(relname, ', ' ORDER BY relname) INTO left_over FROM pg_class
    WHERE relname LIKE '\_\_hopper%' OR relname LIKE ANY (SELECT o || '%' FROM unnest(outputs) o);
    RETURN result || coalesce(' [LEFT: ' || left_over || ']', '');
END $$;

CREATE TABLE pts AS
SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, (g % 3)::text AS y, (g % 7)::float8 AS r,
       g % 3 AS a, g % 5 AS b
FROM generate_series(1, 120) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'y', 'x', buffer_size => 20, num_segments => 2);
SELECT hopper.preprocess('pts', 'pts_valid', 'y', 'x', buffer_size => 20, num_segments => 2);
CALL hopper.fit('pts_packed', 'pts_model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 1);
CREATE TABLE bad_data AS SELECT * FROM pts;
CREATE TABLE empty_src AS SELECT * FROM pts WHERE false;
CREATE TABLE one_class AS SELECT id, x, 'same'::text AS y FROM pts;
CREATE TABLE ragged AS SELECT id, CASE WHEN id = 7 THEN ARRAY[1, 2, 3]::float8[] ELSE x END AS x, y FROM pts;
CREATE TABLE with_nan AS SELECT id, CASE WHEN id = 7 THEN ARRAY[1, 'NaN']::float8[] ELSE x END AS x, y,
       CASE WHEN id = 9 THEN 'Infinity'::float8 ELSE r END AS r FROM pts;
CREATE TABLE with_null AS SELECT id, CASE WHEN id = 7 THEN NULL ELSE x END AS x,
       CASE WHEN id = 8 THEN NULL ELSE y END AS y, CASE WHEN id = 9 THEN ARRAY[1, NULL]::float8[] ELSE x END AS xn FROM pts;
CREATE TABLE two_d AS SELECT id, ARRAY[x, x] AS x, y FROM pts;
CREATE TABLE text_features AS SELECT id, x::text AS x, y FROM pts;
-- Text is a feature since issue 27 (categories, test tabular); JSON is not.
CREATE TABLE json_features AS SELECT id, to_json(x) AS x, y FROM pts;
CREATE TABLE new_class AS SELECT id, x, CASE WHEN id = 7 THEN 'unseen' ELSE y END AS y FROM pts;
CREATE TABLE wide AS SELECT id, ARRAY[1, 2, 3]::float8[] AS x, y FROM pts;
-- Regression targets beyond float32 (a float8 1e300; a numeric beyond even float8, which std::stod
-- threw on): 22000 naming the column, not "NaN or infinite".
CREATE TABLE huge_target AS SELECT id, x, CASE WHEN id = 9 THEN 1e300 ELSE r END AS r,
       CASE WHEN id = 9 THEN 1e400 ELSE r::numeric END AS big FROM pts;
-- Features beyond float32: numeric columns and numeric[] elements beyond even float8 (whose cast
-- raised 22003 naming nothing), float8[] elements beyond float32 (reported as "Infinity"), and a
-- numeric below float8's smallest (22003 too; 0 in float32).
CREATE TABLE huge_features AS SELECT id, y, CASE WHEN id = 9 THEN 1e400 ELSE id END AS big,
       CASE WHEN id = 9 THEN -1e400 ELSE id END AS small, CASE WHEN id = 9 THEN 1e-400 ELSE id END AS tiny,
       CASE WHEN id = 9 THEN ARRAY[1, 1e400] ELSE ARRAY[1, 2]::numeric[] END AS big_array,
       CASE WHEN id = 9 THEN ARRAY[1, 1e300] ELSE x END AS wide_array FROM pts;
CREATE TABLE many_classes AS SELECT g AS id, ARRAY[g % 7]::float8[] AS x, g AS y FROM generate_series(1, 100000) g;

-- preprocess
SELECT n, try(s, ARRAY['out_pre']) FROM (VALUES
    (1, $$SELECT hopper.preprocess(NULL, 'out_pre', 'y', 'x')$$),
    (2, $$SELECT hopper.preprocess('pts', NULL, 'y', 'x')$$),
    (3, $$SELECT hopper.preprocess('pts', 'out_pre', NULL, 'x')$$),
    (4, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', NULL)$$),
    (5, $$SELECT hopper.preprocess('', 'out_pre', 'y', 'x')$$),
    (6, $$SELECT hopper.preprocess('no_such_table', 'out_pre', 'y', 'x')$$),
    (7, $$SELECT hopper.preprocess('pts', 'pts_packed', 'y', 'x')$$),
    (8, $$SELECT hopper.preprocess('pts', 'out_pre; DROP TABLE pts', 'y', 'x')$$),
    (9, $$SELECT hopper.preprocess('pts', 'a.b.c.d', 'y', 'x')$$),
    (10, $$SELECT hopper.preprocess('pts', 'otherdb.public.out_pre', 'y', 'x')$$),
    (11, $$SELECT hopper.preprocess('pts', 'no_schema.out_pre', 'y', 'x')$$),
    (12, $$SELECT hopper.preprocess('pts', repeat('o', 60), 'y', 'x')$$),
    (13, $$SELECT hopper.preprocess('pts', 'out_pre', 'no_col', 'x')$$),
    (14, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'no_col')$$),
    (15, $$SELECT hopper.preprocess('pts', 'out_pre', 'y, id', 'x')$$),
    (16, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x, a', columns => '{"x": {"kind": "numeric"}}')$$),
    (17, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', '')$$),
    (18, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x"; DROP TABLE pts; --')$$),
    (19, $$SELECT hopper.preprocess('json_features', 'out_pre', 'y', 'x')$$),
    (20, $$SELECT hopper.preprocess('pts', 'out_pre', 'x', 'a, b', response_type => 'classification')$$),
    (21, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', buffer_size => 0)$$),
    (22, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', buffer_size => -1)$$),
    (23, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', num_segments => 0)$$),
    (24, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', num_segments => -3)$$),
    (25, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', num_segments => 5000)$$),
    (26, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', normalizing_const => 'NaN')$$),
    (27, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', normalizing_const => 0)$$),
    (28, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', normalizing_const => '-Infinity')$$),
    (29, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', scale => 'zscore')$$),
    (30, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'x', response_type => 'ranking')$$),
    (31, $$SELECT hopper.preprocess('pts', 'out_pre', 'x', 'r', response_type => 'classification')$$),
    (32, $$SELECT hopper.preprocess('empty_src', 'out_pre', 'y', 'x')$$),
    (33, $$SELECT hopper.preprocess('one_class', 'out_pre', 'y', 'x')$$),
    (34, $$SELECT hopper.preprocess('ragged', 'out_pre', 'y', 'x')$$),
    (35, $$SELECT hopper.preprocess('with_nan', 'out_pre', 'y', 'x')$$),
    (36, $$SELECT hopper.preprocess('with_nan', 'out_pre', 'y', 'x', scale => 'standardize')$$),
    (37, $$SELECT hopper.preprocess('with_nan', 'out_pre', 'r', 'ARRAY[id]'::text)$$),
    (38, $$SELECT hopper.preprocess('with_nan', 'out_pre', 'r', 'id')$$),
    (39, $$SELECT hopper.preprocess('with_null', 'out_pre', 'y', 'x')$$),
    (40, $$SELECT hopper.preprocess('with_null', 'out_pre', 'y', 'id')$$),
    (41, $$SELECT hopper.preprocess('with_null', 'out_pre', 'id', 'xn')$$),
    (42, $$SELECT hopper.preprocess('two_d', 'out_pre', 'y', 'x')$$),
    (43, $$SELECT hopper.preprocess('many_classes', 'out_pre', 'y', 'x', buffer_size => 3000, num_segments => 1)$$),
    (44, $$SELECT hopper.preprocess('"PTS"', 'out_pre', 'y', 'x')$$),
    (45, $$SELECT hopper.preprocess('pts', 'pg_catalog.out_pre', 'y', 'x')$$),
    (46, $$SELECT hopper.preprocess('huge_target', 'out_pre', 'r', 'x', response_type => 'regression')$$),
    (47, $$SELECT hopper.preprocess('huge_target', 'out_pre', 'big', 'x', response_type => 'regression')$$),
    (48, $$SELECT hopper.preprocess('huge_features', 'out_pre', 'y', 'big')$$),
    (49, $$SELECT hopper.preprocess('huge_features', 'out_pre', 'y', 'small')$$),
    (50, $$SELECT hopper.preprocess('huge_features', 'out_pre', 'y', 'big_array')$$),
    (51, $$SELECT hopper.preprocess('huge_features', 'out_pre', 'y', 'wide_array')$$),
    (52, $$SELECT hopper.preprocess('pts', 'out_pre', 'y', 'ARRAY[a, b]')$$)
) AS c(n, s) ORDER BY n;
-- An expression: what is taken instead, in full.
SELECT hopper.preprocess('pts', 'out_pre', 'y', 'ARRAY[a, b]');
-- An unquoted name is folded to lower case: the hint names the column as the table has it.
CREATE TABLE "Cars" ("Type" text, "Price" float8);
INSERT INTO "Cars" VALUES ('a', 1), ('b', 2), ('a', 3);
SELECT hopper.preprocess('"Cars"', 'out_pre', 'Type', '*');
-- What they say: the element, the row and the value; the column, through a recipe.
SELECT hopper.preprocess('huge_features', 'out_pre', 'y', 'big_array');
SELECT hopper.preprocess('huge_features', 'out_pre', 'y', 'big, small', scale => 'none');
SELECT hopper.preprocess('huge_features', 'out_pre', 'y', '*', exclude_columns => 'id, tiny, big_array, wide_array');
-- A numeric below float8's smallest is packed as 0.
SELECT hopper.preprocess('huge_features', 'tiny_packed', 'y', 'tiny', buffer_size => 200, num_segments => 1, scale => 'none');
-- So is a regression target that small (its mean of 1e-325 failed the target's statistics, 22003).
CREATE TABLE tiny_target AS SELECT g::float8 AS x, (CASE WHEN g = 3 THEN 5e-324 ELSE 0 END)::float8 AS y FROM generate_series(1, 50) g;
SELECT hopper.preprocess('tiny_target', 'tiny_target_packed', 'y', 'x', num_segments => 1);
SELECT num_rows FROM tiny_target_packed_summary;
SELECT (independent_var[1:120][1:1] @> ARRAY[0]::real[]) AS has_zero FROM tiny_packed;

-- preprocess_validation
SELECT n, try(s, ARRAY['out_val']) FROM (VALUES
    (1, $$SELECT hopper.preprocess_validation('pts', 'out_val', 'y', 'x', NULL)$$),
    (2, $$SELECT hopper.preprocess_validation('pts', 'out_val', 'y', 'x', 'pts')$$),
    (3, $$SELECT hopper.preprocess_validation('new_class', 'out_val', 'y', 'x', 'pts_packed')$$),
    (4, $$SELECT hopper.preprocess_validation('wide', 'out_val', 'y', 'x', 'pts_packed')$$),
    (5, $$SELECT hopper.preprocess_validation('pts', 'out_val', 'y', 'x', 'pts_packed', buffer_size => -1)$$),
    (6, $$SELECT hopper.preprocess_validation('pts', 'out_val', 'y', 'x', 'no_such_packed')$$),
    -- refused like preprocess refuses it (0.1.0 created 2000 partitions)
    (7, $$SELECT hopper.preprocess_validation('pts', 'out_val', 'y', 'x', 'pts_packed', num_segments => 2000)$$),
    (8, $$SELECT hopper.preprocess_validation('pts', 'out_val', 'y', 'x', 'pts_packed', num_segments => 0)$$)
) AS c(n, s) ORDER BY n;

-- fit (a procedure: every failure must leave no output, _info or _summary)
SELECT n, try(s, ARRAY['out_fit']) FROM (VALUES
    (1, $c$CALL hopper.fit(NULL, 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1)$c$),
    (2, $c$CALL hopper.fit('pts_packed', 'out_fit', NULL, '', '', 1)$c$),
    (3, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', NULL)$c$),
    (4, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 0)$c$),
    (5, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', -5)$c$),
    (6, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1, metrics_compute_frequency => 0)$c$),
    (7, $c$CALL hopper.fit('pts_packed', 'out_fit', '{}', '', '', 1)$c$),
    (8, $c$CALL hopper.fit('pts_packed', 'out_fit', '[]', '', '', 1)$c$),
    (9, $c$CALL hopper.fit('pts_packed', 'out_fit', '"a string"', '', '', 1)$c$),
    (10, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}', '', '', 1)$c$),
    (11, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": -2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1)$c$),
    (12, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 0}]}', '', '', 1)$c$),
    (13, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax", "dropout": "NaN"}]}', '', '', 1)$c$),
    (14, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}], "input_dim": 3}', '', '', 1)$c$),
    (15, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 3, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1)$c$),
    (16, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 4, "activation": "softmax"}]}', '', '', 1)$c$),
    (17, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', $$optimizer='SGD(lr=-0.1)'$$, '', 1)$c$),
    (18, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', $$optimizer='SGD(lr=nan)'$$, '', 1)$c$),
    (19, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', $$optimizer='SGD(lr=0.1'$$, '', 1)$c$),
    (20, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', $$loss='hinge'$$, '', 1)$c$),
    (21, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', 'batch_size=0', 1)$c$),
    (22, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', 'batch_size=-1', 1)$c$),
    (23, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', 'epochs=0', 1)$c$),
    (24, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', 'batch_size=1e10', 1)$c$),
    (25, $c$CALL hopper.fit('pts', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1)$c$),
    (26, $c$CALL hopper.fit('pts_packed', 'pts_model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1)$c$),
    (27, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1, validation_table => 'pts')$c$),
    (28, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1, warm_start => true)$c$),
    (29, $c$CALL hopper.fit('pts_packed', 'pts_model', '{"input_dim": 2, "layers": [{"units": 5, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}', '', '', 1, warm_start => true)$c$),
    (30, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 1000000, "activation": "relu"}, {"units": 1000000, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$c$),
    (31, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 30000, "activation": "relu"}, {"units": 10000, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$c$),
    (32, $c$CALL hopper.fit('pts_packed', 'out_fit', '{"class_name": "Sequential", "config": {"layers": [{"class_name": "LSTM", "config": {"units": 4}}]}}', '', '', 1)$c$)
) AS c(n, s) ORDER BY n;
-- A checkpoint whose data facts hold a number beyond double precision (valid jsonb; anyone writes
-- their own checkpoints' metadata): 22000, not an internal error.
SELECT regexp_replace(try($$SELECT hopper.materialize_checkpoint(hopper.create_checkpoint((SELECT model_state FROM pts_model),
    metadata => '{"data": {"response_type": "classification", "class_values": ["0", "1", "2"], "normalizing_const": 1,
                           "dependent_varname": "y", "dependent_vartype": "text", "feature_center": [1e400, 1],
                           "feature_spread": [1, 1]}}'), 'pg_temp.mat_x')$$), '[0-9a-f-]{36}', '<uuid>') AS refused;
-- A warm start replaces the output and its companions: a view on one (anyone may create one, with no
-- privilege on the table) is refused before training, not by the DROP after it.
CREATE VIEW pin_info AS SELECT 1 AS x FROM pts_model_info;
SELECT try($c$CALL hopper.fit('pts_packed', 'pts_model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1, warm_start => true)$c$);
SELECT count(*) AS runs_started FROM hopper.runs WHERE model_output_table LIKE '%pts_model' AND start_time > now() - interval '1 minute' AND state <> 'COMPLETED';
DROP VIEW pin_info;
-- A model too large for hopper.max_model_state_mb, and together too large for one value.
SET hopper.max_model_state_mb = 1;
SELECT try($$CALL hopper.fit('pts_packed', 'out_fit', '{"input_dim": 2, "layers": [{"units": 600, "activation": "relu"}, {"units": 600, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$, ARRAY['out_fit']);
RESET hopper.max_model_state_mb;

-- fit_multiple: broken model selection tables
CREATE TABLE archs (model_id int, model_arch jsonb);
INSERT INTO archs VALUES (1, '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}'), (2, NULL), (3, '{"input_dim": 5, "layers": [{"units": 3, "activation": "softmax"}]}');
CREATE TABLE mst_ok (mst_key int, model_id int, compile_params text, fit_params text);
INSERT INTO mst_ok VALUES (1, 1, $$optimizer='SGD(lr=0.1)'$$, '');
CREATE TABLE mst_ok_summary (model_arch_table text);
INSERT INTO mst_ok_summary VALUES ('archs');
CREATE TABLE mst_nosummary AS SELECT * FROM mst_ok;
CREATE TABLE mst_nullkey AS SELECT NULL::int AS mst_key, 1 AS model_id, ''::text AS compile_params, ''::text AS fit_params;
CREATE TABLE mst_nullkey_summary AS SELECT * FROM mst_ok_summary;
CREATE TABLE mst_dup AS SELECT * FROM mst_ok UNION ALL SELECT * FROM mst_ok;
CREATE TABLE mst_dup_summary AS SELECT * FROM mst_ok_summary;
CREATE TABLE mst_missing_arch AS SELECT 1 AS mst_key, 99 AS model_id, ''::text AS compile_params, ''::text AS fit_params;
CREATE TABLE mst_missing_arch_summary AS SELECT * FROM mst_ok_summary;
CREATE TABLE mst_null_arch AS SELECT 1 AS mst_key, 2 AS model_id, ''::text AS compile_params, ''::text AS fit_params;
CREATE TABLE mst_null_arch_summary AS SELECT * FROM mst_ok_summary;
CREATE TABLE mst_wrong_dim AS SELECT 1 AS mst_key, 3 AS model_id, ''::text AS compile_params, ''::text AS fit_params;
CREATE TABLE mst_wrong_dim_summary AS SELECT * FROM mst_ok_summary;
CREATE TABLE mst_empty AS SELECT * FROM mst_ok WHERE false;
CREATE TABLE mst_empty_summary AS SELECT * FROM mst_ok_summary;
CREATE TABLE mst_bad_params AS SELECT 1 AS mst_key, 1 AS model_id, $$optimizer='SGD(lr=0'$$::text AS compile_params, ''::text AS fit_params;
CREATE TABLE mst_bad_params_summary AS SELECT * FROM mst_ok_summary;
CREATE TABLE mst_no_arch_table AS SELECT * FROM mst_ok;
CREATE TABLE mst_no_arch_table_summary AS SELECT 'no_such_archs'::text AS model_arch_table;
SELECT n, try(s, ARRAY['out_fm']) FROM (VALUES
    (1, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', NULL, 1)$$),
    (2, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'no_such_mst', 1)$$),
    (3, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_nosummary', 1)$$),
    (4, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_nullkey', 1)$$),
    (5, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_dup', 1)$$),
    (6, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_missing_arch', 1)$$),
    (7, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_null_arch', 1)$$),
    (8, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_wrong_dim', 1)$$),
    (9, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_empty', 1)$$),
    (10, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_bad_params', 1)$$),
    (11, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_no_arch_table', 1)$$),
    (12, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'pts', 1)$$),
    (13, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_ok', 0)$$),
    (14, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_ok', 1, metrics_compute_frequency => -1)$$),
    (15, $$CALL hopper.fit_multiple('pts_packed', 'out_fm', 'mst_ok', 1, validation_table => 'no_such_valid')$$)
) AS c(n, s) ORDER BY n;

-- Model states: truncated, bit-flipped in every region, wrong format version, not a state at all.
CREATE TABLE states AS
SELECT 'good' AS what, model_state AS s FROM pts_model
UNION ALL SELECT 'empty', '\x'::bytea
UNION ALL SELECT 'garbage', decode(repeat('5a', 200), 'hex')
UNION ALL SELECT 'truncated to the header', substr(model_state, 1, 72) FROM pts_model
UNION ALL SELECT 'last byte missing', substr(model_state, 1, length(model_state) - 1) FROM pts_model
UNION ALL SELECT 'one byte appended', model_state || '\x00'::bytea FROM pts_model
UNION ALL SELECT 'magic flipped', set_byte(model_state, 0, get_byte(model_state, 0) # 1) FROM pts_model
UNION ALL SELECT 'version flipped', set_byte(model_state, 8, 3) FROM pts_model
UNION ALL SELECT 'parameter count flipped', set_byte(model_state, 56, get_byte(model_state, 56) # 1) FROM pts_model
UNION ALL SELECT 'configuration flipped', set_byte(model_state, 80, get_byte(model_state, 80) # 32) FROM pts_model
UNION ALL SELECT 'weight flipped', set_byte(model_state, length(model_state) - 8, get_byte(model_state, length(model_state) - 8) # 1) FROM pts_model
UNION ALL SELECT 'checksum flipped', set_byte(model_state, length(model_state) - 1, get_byte(model_state, length(model_state) - 1) # 1) FROM pts_model;
SELECT what,
       try(format('SELECT hopper.model_state_info(%L::bytea)', s)) AS model_state_info,
       try(format('SELECT hopper.model_weights(%L::bytea)', s)) AS model_weights,
       try(format('SELECT hopper.model_forward(%L::bytea, ARRAY[1, 2]::float8[])', s)) AS model_forward
FROM states ORDER BY what;
-- The same states inside a model table, through evaluate, predict and warm start.
CALL hopper.fit('pts_packed', 'corrupt_model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1);
UPDATE corrupt_model SET model_state = set_byte(model_state, 100, get_byte(model_state, 100) # 8);
SELECT try($$SELECT * FROM hopper.evaluate('corrupt_model', 'pts_valid')$$);
SELECT try($$SELECT hopper.predict('corrupt_model', 'pts', 'id', 'x', 'out_pred')$$, ARRAY['out_pred']);
SELECT try($$CALL hopper.fit('pts_packed', 'corrupt_model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1, warm_start => true)$$);
SELECT count(*) AS corrupt_model_kept FROM corrupt_model;

-- model_forward and argmax
SELECT n, try(s) FROM (VALUES
    (1, $$SELECT hopper.model_forward(NULL, ARRAY[1, 2]::float8[])$$),
    (2, $$SELECT hopper.model_forward(model_state, ARRAY[1, 'NaN']::float8[]) FROM pts_model$$),
    (3, $$SELECT hopper.model_forward(model_state, ARRAY['-Infinity', 1]::float8[]) FROM pts_model$$),
    (4, $$SELECT hopper.model_forward(model_state, ARRAY[1, NULL]::float8[]) FROM pts_model$$),
    (5, $$SELECT hopper.model_forward(model_state, '{}'::float8[]) FROM pts_model$$),
    (6, $$SELECT hopper.model_forward(model_state, array_fill(1::float8, ARRAY[1000000])) FROM pts_model$$),
    (7, $$SELECT hopper.model_forward(model_state, ARRAY[1, 2]::float8[], 0) FROM pts_model$$),
    (8, $$SELECT hopper.model_forward(model_state, ARRAY[1, 2]::float8[], 'Infinity') FROM pts_model$$),
    (9, $$SELECT hopper.model_forward(model_state, ARRAY[1, 2]::float8[], 1, '{0, 0}', '{1, 0}') FROM pts_model$$),
    (10, $$SELECT hopper.model_forward(model_state, ARRAY[1, 2]::float8[], 1, '{0}', '{1}') FROM pts_model$$),
    (11, $$SELECT hopper.model_forward(model_state, ARRAY[1, 2]::float8[], 1, '{0, 0}', NULL) FROM pts_model$$),
    (12, $$SELECT hopper.model_forward(model_state, ARRAY[1, 2]::float8[], 1, '{0, NaN}', '{1, 1}') FROM pts_model$$),
    (13, $$SELECT hopper.model_forward(model_state, NULL) IS NULL FROM pts_model$$),
    (14, $$SELECT hopper.argmax('{{{1}}}'::real[])$$),
    (15, $$SELECT hopper.argmax('{}'::real[]) IS NULL$$),
    (16, $$SELECT hopper.argmax(NULL) IS NULL$$)
) AS c(n, s) ORDER BY n;

-- The aggregates, called directly with bad buffers
SELECT n, try(s) FROM (VALUES
    (1, $$SELECT hopper.train_segment(NULL, '{{1,2}}'::real[], '{{1,0,0}}'::real[], 1, 0)$$),
    (2, $$SELECT hopper.train_segment(model_state, NULL, '{{1,0,0}}'::real[], 1, 0) FROM pts_model$$),
    (3, $$SELECT hopper.train_segment(model_state, '{{1,2}}'::real[], '{{1,0}}'::real[], 1, 0) FROM pts_model$$),
    (4, $$SELECT hopper.train_segment(model_state, '{{1,2,3}}'::real[], '{{1,0,0}}'::real[], 1, 0) FROM pts_model$$),
    (5, $$SELECT hopper.train_segment(model_state, '{{1,2},{3,4}}'::real[], '{{1,0,0}}'::real[], 1, 0) FROM pts_model$$),
    (6, $$SELECT hopper.train_segment(model_state, '{}'::real[], '{}'::real[], 1, 0) FROM pts_model$$),
    (7, $$SELECT hopper.train_segment(model_state, '{{1,NaN}}'::real[], '{{1,0,0}}'::real[], 1, 0) FROM pts_model$$),
    (8, $$SELECT hopper.train_segment(model_state, '{{1,2}}'::real[], '{{Infinity,0,0}}'::real[], 1, 0) FROM pts_model$$),
    (9, $$SELECT hopper.train_segment(model_state, '{{{1,2}}}'::real[], '{{1,0,0}}'::real[], 1, 0) FROM pts_model$$),
    (10, $$SELECT hopper.train_segment(model_state, '{{1,NULL}}'::real[], '{{1,0,0}}'::real[], 1, 0) FROM pts_model$$),
    (11, $$SELECT hopper.train_segment('\x00'::bytea, '{{1,2}}'::real[], '{{1,0,0}}'::real[], 1, 0)$$),
    (12, $$SELECT hopper.evaluate_models(NULL, '{{1,2}}'::real[], '{{1,0,0}}'::real[])$$),
    (13, $$SELECT hopper.evaluate_models('{}'::bytea[], '{{1,2}}'::real[], '{{1,0,0}}'::real[])$$),
    (14, $$SELECT hopper.evaluate_models(ARRAY[model_state, NULL], '{{1,2}}'::real[], '{{1,0,0}}'::real[]) FROM pts_model$$),
    (15, $$SELECT hopper.evaluate_models(ARRAY[model_state], '{{1,2}}'::real[], '{{1,0,0},{0,1,0}}'::real[]) FROM pts_model$$),
    (16, $$SELECT hopper.evaluate_models(ARRAY[model_state], '{{1,NaN}}'::real[], '{{1,0,0}}'::real[]) FROM pts_model$$),
    (17, $$SELECT hopper.evaluate_models(ARRAY[model_state], '{{1,2,3}}'::real[], '{{1,0,0}}'::real[]) FROM pts_model$$),
    (18, $$SELECT hopper.evaluate_models(ARRAY['\x'::bytea], '{{1,2}}'::real[], '{{1,0,0}}'::real[])$$),
    -- A model state passed by reference between a run's statements means nothing outside the run.
    (19, $$SELECT hopper.train_segment('HOPPERSR'::bytea || int4send(pg_backend_pid()) || '\x0000000000000000000000000000000000000000'::bytea, '{{1,2}}'::real[], '{{1,0,0}}'::real[], 1, 0)$$)
) AS c(n, s) ORDER BY n;

-- evaluate and predict
CREATE TABLE no_key_model AS SELECT model_state FROM pts_model;
CREATE TABLE injected_model AS SELECT * FROM pts_model;
CREATE TABLE injected_model_summary AS SELECT * FROM pts_model_summary;
UPDATE injected_model_summary SET dependent_vartype = 'text) AS x, pg_catalog.pg_sleep(0) AS y --';
SELECT n, try(s, ARRAY['out_pred']) FROM (VALUES
    (1, $$SELECT * FROM hopper.evaluate(NULL, 'pts_packed')$$),
    (2, $$SELECT * FROM hopper.evaluate('pts_model', NULL)$$),
    (3, $$SELECT * FROM hopper.evaluate('no_key_model', 'pts_packed')$$),
    (4, $$SELECT * FROM hopper.evaluate('pts_model', 'pts_packed', 42)$$),
    (5, $$SELECT * FROM hopper.evaluate('pts_model', 'pts')$$),
    (6, $$SELECT * FROM hopper.evaluate('pts', 'pts_packed')$$),
    (7, $$SELECT hopper.predict('pts_model', 'pts', 'id', 'x', 'out_pred', 'probability')$$),
    (8, $$SELECT hopper.predict('pts_model', 'pts', 'no_id', 'x', 'out_pred')$$),
    (9, $$SELECT hopper.predict('pts_model', 'pts', 'id, a', 'x', 'out_pred')$$),
    (10, $$SELECT hopper.predict('pts_model', 'pts', 'id', 'x', 'pts')$$),
    (11, $$SELECT hopper.predict('pts_model', 'text_features', 'id', 'x', 'out_pred')$$),
    (12, $$SELECT hopper.predict('pts_model', 'with_nan', 'id', 'x', 'out_pred')$$),
    (13, $$SELECT hopper.predict('pts_model', 'wide', 'id', 'x', 'out_pred')$$),
    (14, $$SELECT hopper.predict('no_key_model', 'pts', 'id', 'x', 'out_pred')$$),
    (15, $$SELECT hopper.predict('pts_packed', 'pts', 'id', 'x', 'out_pred')$$),
    (16, $$SELECT hopper.predict('injected_model', 'pts', 'id', 'x', 'out_pred')$$)
) AS c(n, s) ORDER BY n;

-- Convolutional networks: 4x4x1 images (16 features per packed row). Every case fails before
-- anything is trained or written: an input shape whose product is not the packed width, windows
-- larger than their input, sizes that are not positive, Keras options hopper does not implement
-- (named in the message), a Dense layer on an image, shapes that disagree with the layer before,
-- states of another architecture.
CREATE TABLE img AS SELECT g AS id, ARRAY(SELECT ((g + i) % 5)::float8 FROM generate_series(1, 16) i) AS x, (g % 3)::text AS y
FROM generate_series(1, 60) g;
SELECT hopper.preprocess('img', 'img_packed', 'y', 'x', buffer_size => 20, num_segments => 2);
CALL hopper.fit('img_packed', 'img_model', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3, "activation": "relu"}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, '', 1);
SELECT hopper.load_model_arch('img_archs', '{"input_shape": [4, 4, 2], "layers": [{"type": "flatten"}, {"units": 3, "activation": "softmax"}]}') AS model_id;
SELECT hopper.load_model_selection_table('img_archs', 'img_mst', ARRAY[1], ARRAY[''], ARRAY['']);
-- The input shape's product (4*4*2 = 32) is not the packed width (16): the detail says which product.
CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 2], "layers": [{"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1);
\set keras_head '{"class_name": "Sequential", "config": {"layers": [{"class_name": "InputLayer", "config": {"batch_input_shape": [null, 4, 4, 1]}}, '
\set keras_tail ', {"class_name": "Flatten", "config": {}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}'
SELECT n, try(s, ARRAY['out_cnn']) FROM (VALUES
    (1, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 2], "layers": [{"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (2, $$CALL hopper.fit_data_parallel('img_packed', 'out_cnn', '{"input_shape": [4, 4, 2], "layers": [{"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (3, $$CALL hopper.fit_multiple('img_packed', 'out_cnn', 'img_mst', 1)$$),
    (4, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 5}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (5, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": [1, 5]}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (6, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3}, {"type": "max_pooling2d", "pool_size": 3}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (7, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 0, "kernel_size": 3}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (8, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": -4, "kernel_size": 3}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (9, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3, "strides": 0}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (10, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "average_pooling2d", "strides": [2, -1]}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (11, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 0}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (12, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 0], "layers": [{"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (13, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (14, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3, "data_format": "channels_first"}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (15, $$CALL hopper.fit('img_packed', 'out_cnn', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 2, "kernel_size": 3, "dilation_rate": 2}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1)$$),
    (16, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [3, 3], "data_format": "channels_first"}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (17, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [3, 3], "dilation_rate": [2, 2]}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (18, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [3, 3], "groups": 2}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (19, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "MaxPooling2D", "config": {"pool_size": [2, 2], "data_format": "channels_first"}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (20, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [5, 5]}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (21, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "Conv2D", "config": {"filters": 0, "kernel_size": [3, 3]}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (22, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [3, 3], "strides": [0, 1]}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (23, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "BatchNormalization", "config": {"axis": 1}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (24, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "BatchNormalization", "config": {"momentum": 1.5}}$$ || :'keras_tail' || $$', '', '', 1)$$),
    (25, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "GlobalAveragePooling2D", "config": {"keepdims": true}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}}]}}', '', '', 1)$$),
    -- The Flatten's 2*2*2 = 8 values do not match the Dense layer's recorded input shape.
    (26, $$CALL hopper.fit('img_packed', 'out_cnn', '$$ || :'keras_head' || $$ {"class_name": "Conv2D", "config": {"filters": 2, "kernel_size": [3, 3]}}, {"class_name": "Flatten", "config": {}}, {"class_name": "Dense", "config": {"units": 3, "activation": "softmax"}, "build_config": {"input_shape": [null, 18]}}]}}', '', '', 1)$$),
    -- States of another architecture: warm start, transfer learning.
    (27, $$CALL hopper.fit('img_packed', 'img_model', '{"input_shape": [4, 4, 1], "layers": [{"type": "conv2d", "filters": 3, "kernel_size": 3, "activation": "relu"}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', '', '', 1, warm_start => true)$$),
    (28, $$SELECT hopper.load_model_arch('img_archs', '{"input_shape": [4, 4, 1], "layers": [{"type": "batch_normalization"}, {"type": "flatten"}, {"units": 3, "activation": "softmax"}]}', 'other', NULL, (SELECT model_state FROM img_model))$$),
    -- Rows of the wrong width for a CNN: model_forward, evaluate, predict.
    (29, $$SELECT hopper.model_forward(model_state, ARRAY[1, 2, 3]::float8[]) FROM img_model$$),
    (30, $$SELECT * FROM hopper.evaluate('img_model', 'pts_packed')$$),
    (31, $$SELECT hopper.predict('img_model', 'pts', 'id', 'x', 'out_cnn')$$)
) AS c(n, s) ORDER BY n;
-- The CNN warm-started in vain is the one trained above.
SELECT hopper.model_state_info(model_state) ->> 'layers' AS layers, (hopper.model_state_info(model_state) ->> 'steps')::int AS steps FROM img_model;

-- Names with quotes, spaces, dots and semicolons work end to end (quoted like PostgreSQL does).
CREATE SCHEMA "we.ird";
CREATE TABLE "we.ird"."ta ble;drop" AS SELECT id AS "i d", x AS "x""q", y AS "y;z" FROM pts;
SELECT hopper.preprocess('"we.ird"."ta ble;drop"', '"we.ird"."pa""cked"', '"y;z"', '"x""q"', buffer_size => 20, num_segments => 2);
CALL hopper.fit('"we.ird"."pa""cked"', '"we.ird"."mo del"', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 1, validation_table => '"we.ird"."pa""cked"');
SELECT mst_key, row_count FROM hopper.evaluate('"we.ird"."mo del"', '"we.ird"."pa""cked"');
SELECT hopper.predict('"we.ird"."mo del"', '"we.ird"."ta ble;drop"', '"i d"', '"x""q"', '"we.ird"."pre;d"');
SELECT count(*) AS predicted, count(DISTINCT "estimated_y;z") <= 3 AS labels FROM "we.ird"."pre;d";
SELECT relname FROM pg_class WHERE relnamespace = '"we.ird"'::regnamespace AND relkind IN ('r', 'p') ORDER BY 1;

-- Nothing of the failed calls exists; the inputs are intact.
SELECT relname FROM pg_class WHERE relname ~ '^(out_|__hopper)' ORDER BY 1;
SELECT count(*) AS pts_rows FROM pts;

\c :regress_db
DROP DATABASE hopper_bad_input;
