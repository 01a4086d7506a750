-- Tables as they are (issue 27): preprocess reads a table's own columns (numbers with NULLs, text
-- categories, booleans, dates) through a feature recipe stored with the packed table and every model
-- trained from it; preprocess_validation and predict apply that recipe to raw rows bit for bit.
CREATE SCHEMA test_tabular;
SET search_path = test_tabular, public;
SET client_min_messages = warning;

CREATE TYPE shade AS ENUM ('light', 'dark');
CREATE TABLE gems AS
SELECT g AS id,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 5) * 0.5 + (g % 3) END::numeric AS carat,
       (ARRAY['Fair', 'Good', 'Ideal'])[1 + g % 3] AS cut,
       CASE WHEN g % 13 = 0 THEN NULL ELSE (ARRAY['light', 'dark'])[1 + (g / 3) % 2]::shade END AS color,
       (g % 4 = 0) AS certified,
       DATE '2020-01-01' + g AS sold,
       CASE WHEN g % 17 = 0 THEN NULL ELSE (ARRAY['cheap', 'dear'])[1 + ((g % 3) + (g / 3) % 2) % 2] END AS price
FROM generate_series(1, 600) g;

-- '*' without the id: every other column is a feature; rows with a NULL price are skipped.
SELECT hopper.preprocess('gems', 'gems_packed', 'price', '*', exclude_columns => 'id', buffer_size => 50,
                         num_segments => 2, seed => 1, scale => 'standardize',
                         columns => '{"carat": {"impute": "median", "scale": "standardize", "missing_indicator": true}}');
SELECT independent_varname, response_type, class_values, independent_dim, num_rows, skipped_rows, scale,
       feature_center IS NULL AS no_global_scaling, jsonb_typeof(feature_recipe) AS recipe
FROM gems_packed_summary;
-- Skipped rows are those with a NULL price.
SELECT count(*) FILTER (WHERE price IS NULL) AS null_prices FROM gems;

-- The recipe's columns: the carat (median) and its missing indicator, one-hot categories with NULL
-- (color) as their own category and a slot for unseen values, a 0/1 boolean and days since 1970;
-- scale applies to numbers and dates.
SELECT c ->> 'name' AS name, c ->> 'kind' AS kind, c ->> 'impute' AS impute, c ->> 'scale' AS scale,
       c -> 'missing_indicator' AS missing_indicator, c -> 'categories' AS categories, c -> 'null' AS null_seen
FROM gems_packed_summary, LATERAL jsonb_array_elements(feature_recipe -> 'columns') AS c;

-- A row, encoded: carat 1.5, not missing; cut Good; color light; not certified; day 18264.
SELECT hopper.recipe_features(feature_recipe::text, ARRAY[1.5, 0, 18263 + 1]::float8[], ARRAY['Good', 'light'])
FROM gems_packed_summary;
-- The same row with the recipe as the summary keeps it (jsonb), as the README writes the call.
SELECT hopper.recipe_features(feature_recipe, ARRAY[1.5, 0, 18263 + 1]::float8[], ARRAY['Good', 'light'])
FROM gems_packed_summary;

CALL hopper.fit('gems_packed', 'gems_model',
    '{"input_dim": 12, "layers": [{"units": 16, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
    $$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=25', 20,
    name => 'tabular_gems');
SELECT training_metrics_final > 0.9 AS learned FROM gems_model_info;
-- The model's summary carries the recipe.
SELECT s.feature_recipe = p.feature_recipe AS same_recipe FROM gems_model_summary s, gems_packed_summary p;

-- A second table with an unseen cut, NULL carats and colors, NULL prices.
CREATE TABLE gems_new AS
SELECT id, CASE WHEN id % 7 = 0 THEN NULL ELSE carat END AS carat,
       CASE WHEN id % 10 = 0 THEN 'Excellent' ELSE cut END AS cut,
       CASE WHEN id % 9 = 0 THEN NULL ELSE color END AS color, certified, sold, price
FROM gems WHERE id % 3 = 0;
SET client_min_messages = notice;
SELECT hopper.preprocess_validation('gems_new', 'gems_new_packed', 'price', '*', 'gems_packed');
SET client_min_messages = warning;
SELECT num_rows, skipped_rows, independent_dim, training_preprocessed_table FROM gems_new_packed_summary;
SELECT row_count AS evaluated, (metrics ->> 'accuracy')::float8 > 0.8 AS accurate FROM hopper.evaluate('gems_model', 'gems_new_packed');

-- Predict on raw rows: columns listed in another order, or '*'.
SELECT hopper.predict('gems_model', 'gems_new', 'id', 'sold, cut, carat, certified, color', 'gems_pred');
SELECT count(*) AS rows, count(estimated_price) AS predicted,
       avg((estimated_price = price)::int) FILTER (WHERE price IS NOT NULL) > 0.8 AS accurate
FROM gems_pred JOIN gems_new USING (id);
SELECT hopper.predict('gems_model', 'gems_new', 'id', '*', 'gems_prob', pred_type => 'prob');

-- Bit for bit: the packed validation features are the recipe applied to each raw row, and predict's
-- probabilities are the model's forward pass on them.
SELECT count(*) AS rows_compared,
       bool_and(p.prob = hopper.model_forward(m.model_state,
                   hopper.recipe_features(s.feature_recipe::text,
                       ARRAY[g.carat, g.certified::int, g.sold - DATE '1970-01-01']::float8[],
                       ARRAY[g.cut, g.color::text])::float8[], 1.0, NULL, NULL)) AS same_probabilities
FROM gems_prob p JOIN gems_new g USING (id), gems_model m, gems_model_summary s;
-- A cut never seen in training ('Excellent') sets no slot of its column, as scikit-learn's
-- handle_unknown='ignore': the "<unknown>" slot never trains, so setting it scored such rows by the
-- random weights it was initialised with (a user sweep). One hot slot fewer than as 'Fair'.
SELECT count(*) AS rows,
       bool_and((SELECT count(*) FROM unnest(fair) v WHERE v = 1) - (SELECT count(*) FROM unnest(unseen) v WHERE v = 1) = 1)
           AS no_cut_slot
FROM gems_new g, gems_model_summary s,
     LATERAL hopper.recipe_features(s.feature_recipe::text,
                 ARRAY[g.carat, g.certified::int, g.sold - DATE '1970-01-01']::float8[],
                 ARRAY[g.cut, g.color::text]) AS unseen,
     LATERAL hopper.recipe_features(s.feature_recipe::text,
                 ARRAY[g.carat, g.certified::int, g.sold - DATE '1970-01-01']::float8[],
                 ARRAY['Fair', g.color::text]) AS fair
WHERE g.cut = 'Excellent';

-- The run's data carries the recipe, and so does a registered version: materialized, it predicts raw
-- rows as the model table does.
SELECT r.data -> 'feature_recipe' = p.feature_recipe AS run_has_recipe
FROM hopper.runs r, gems_packed_summary p WHERE r.name = 'tabular_gems';
SELECT hopper.create_model('tabular-gems') > 0 AS created;
SELECT hopper.register_model_version('tabular-gems',
    (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'tabular_gems')) AS version;
SELECT hopper.materialize_model_version('tabular-gems', 'gems_registered', version => 1);
SELECT hopper.predict('gems_registered', 'gems_new', 'id', '*', 'gems_registered_prob', pred_type => 'prob');
SELECT count(*) AS rows, bool_and(a.prob = b.prob) AS same_as_model_table
FROM gems_prob a JOIN gems_registered_prob b USING (id);
SELECT hopper.delete_model('tabular-gems');

-- Columns the recipe does not read, or not present.
SELECT hopper.predict('gems_model', 'gems_new', 'id', 'carat, cut', 'bad_pred');
CREATE TABLE gems_nocut AS SELECT id, carat, color, certified, sold FROM gems_new;
SELECT hopper.predict('gems_model', 'gems_nocut', 'id', '*', 'bad_pred');
CREATE TABLE gems_textcarat AS SELECT id, carat::text AS carat, cut, color, certified, sold FROM gems_new;
SELECT hopper.predict('gems_model', 'gems_textcarat', 'id', '*', 'bad_pred');
-- A categorical column that arrives as numbers (cut as 1, 2, 3) or booleans where the recipe learned
-- text ('Fair', 'Good', 'Ideal'): every value would be an unknown category -- a WARNING says so, once
-- per call; a scoring table as it was trained on says nothing.
CREATE TABLE gems_numbered_cut AS SELECT id, carat, (id % 3 + 1) AS cut, color, certified, sold FROM gems_new;
CREATE TABLE gems_boolean_cut AS SELECT id, carat, (id % 2 = 0) AS cut, color, certified, sold FROM gems_new;
SELECT hopper.predict('gems_model', 'gems_numbered_cut', 'id', '*', 'numbered_pred');
SELECT hopper.predict('gems_model', 'gems_boolean_cut', 'id', '*', 'boolean_pred');
SELECT count(*) AS rows FROM numbered_pred;
-- A date of 'infinity' is refused naming its column, at prediction and at packing, as an infinite
-- number is (date subtraction raised a bare 22008 naming none).
CREATE TABLE gems_forever AS SELECT id, carat, cut, color, certified,
    CASE WHEN id % 2 = 0 THEN 'infinity'::date ELSE '-infinity'::date END AS sold FROM gems_new;
CREATE TABLE gems_forever_price AS SELECT f.*, g.price FROM gems_forever f JOIN gems g USING (id);
\set VERBOSITY terse
SELECT hopper.predict('gems_model', 'gems_forever', 'id', '*', 'bad_pred');
SELECT hopper.preprocess('gems_forever_price', 'bad_packed', 'price', '*', exclude_columns => 'id');
\set VERBOSITY default
-- (A NULL date is still imputed.)
CREATE TABLE gems_undated AS SELECT id, carat, cut, color, certified, NULL::date AS sold FROM gems_new;
SELECT hopper.predict('gems_model', 'gems_undated', 'id', '*', 'gems_undated_pred');
SELECT count(*) FILTER (WHERE estimated_price IS NOT NULL) AS undated_rows_predicted FROM gems_undated_pred;

-- Listed columns with text and NULLs; integers declared categorical; timestamps.
CREATE TABLE mixed AS
SELECT g AS id, g % 4 AS zip, CASE WHEN g % 5 = 0 THEN NULL ELSE g % 7 END AS n,
       TIMESTAMPTZ '2024-01-01 00:00+00' + g * INTERVAL '6 hours' AS at, (g % 2)::text AS y
FROM generate_series(1, 40) g;
SELECT hopper.preprocess('mixed', 'mixed_packed', 'y', 'zip, n, at', num_segments => 1, scale => 'none',
                         columns => '{"zip": {"kind": "categorical"}, "n": {"impute": "constant", "impute_value": -1}}');
SELECT c ->> 'name' AS name, c ->> 'kind' AS kind, c ->> 'impute' AS impute, c -> 'fill' AS fill, c -> 'categories' AS categories
FROM mixed_packed_summary, LATERAL jsonb_array_elements(feature_recipe -> 'columns') AS c;
-- A timestamp is fractional days since 1970: 2024-01-01 06:00 UTC is day 19723.25.
SELECT hopper.recipe_features(feature_recipe::text, ARRAY[3, 19723.25]::float8[], ARRAY['1']) FROM mixed_packed_summary;
-- Times of day and intervals are numbers of seconds (since midnight; in all): a time series' hour
-- and a duration, NULLs imputed, scaled like any number; raw rows score the same.
CREATE TABLE timed AS
SELECT g AS id, TIME '00:00' + g * INTERVAL '37 minutes' AS at, g * INTERVAL '1 hour 30 minutes' AS took,
       CASE WHEN g % 9 = 0 THEN NULL ELSE INTERVAL '2 days' - g * INTERVAL '1 minute' END AS left_over,
       (g % 3)::text AS y
FROM generate_series(1, 60) g;
SELECT hopper.preprocess('timed', 'timed_packed', 'y', 'at, took, left_over', num_segments => 1,
                         scale => 'standardize');
SELECT c ->> 'name' AS name, c ->> 'kind' AS kind, c ->> 'impute' AS impute
FROM timed_packed_summary, LATERAL jsonb_array_elements(feature_recipe -> 'columns') AS c;
-- Each is standardized by its seconds: the recipe's centers are the columns' mean seconds (NULLs
-- imputed by the mean leave it).
SELECT c ->> 'name' AS name, round((c -> 'center' ->> 0)::numeric) AS center_seconds,
       round(t.mean) AS mean_seconds
FROM timed_packed_summary, LATERAL jsonb_array_elements(feature_recipe -> 'columns') AS c,
     LATERAL (SELECT avg(date_part('epoch', CASE c ->> 'name' WHEN 'at' THEN at::interval WHEN 'took' THEN took
                                                               ELSE left_over END))::numeric AS mean FROM timed) t;
CALL hopper.fit('timed_packed', 'timed_model', '{"layers": [{"units": 3, "activation": "softmax"}]}', num_iterations => 1);
SELECT hopper.predict('timed_model', 'timed', 'id', '*', 'timed_pred');
SELECT count(*) AS rows, count(estimated_y) AS predicted FROM timed_pred;
-- Scoring raw rows reads each as its seconds: predict's probabilities are the model's
-- forward pass on the recipe applied to the seconds, bit for bit.
SELECT hopper.predict('timed_model', 'timed', 'id', '*', 'timed_prob', pred_type => 'prob');
SELECT count(*) AS rows_compared,
       bool_and(p.prob = hopper.model_forward(m.model_state,
                   hopper.recipe_features(s.feature_recipe, ARRAY[date_part('epoch', t.at), date_part('epoch', t.took),
                                          date_part('epoch', t.left_over)], ARRAY[]::text[])::float8[], 1.0, NULL, NULL))
         AS same_probabilities
FROM timed_prob p JOIN timed t USING (id), timed_model m, timed_packed_summary s;

-- Bad input: each a clear error naming the column, nothing written.
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
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
    WHERE relnamespace = 'test_tabular'::regnamespace AND relname LIKE 'out%';
    RETURN result || coalesce(' [LEFT: ' || left_over || ']', '');
END $$;
CREATE TABLE odd AS SELECT g AS id, '{}'::json AS doc, ARRAY[g]::float8[] AS arr, NULL::float8 AS empty,
       'x' || g AS code, g % 2 AS y, 1 AS one, (g % 2)::text AS label, NULL::text AS nolabel
FROM generate_series(1, 20) g;
SELECT n, try(s) FROM (VALUES
    (1, $$SELECT hopper.preprocess('gems', 'out', 'price', 'carat, nope')$$),
    (2, $$SELECT hopper.preprocess('gems', 'out', 'price', '*', exclude_columns => 'nope')$$),
    (3, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id, doc')$$),
    (4, $$SELECT hopper.preprocess('odd', 'out', 'y', '*')$$),
    (5, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id, arr', columns => '{"arr": {"kind": "categorical"}}')$$),
    (6, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id, empty')$$),
    (7, $$SELECT hopper.preprocess('odd', 'out', 'one', 'id, code')$$),
    (8, $$SELECT hopper.preprocess('odd', 'out', 'y', '*', exclude_columns => 'id, doc, arr, empty, code, one, label, nolabel')$$),
    (9, $$SELECT hopper.preprocess('odd', 'out', 'nolabel', 'id, code')$$),
    (10, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id', columns => '{"nope": {}}')$$),
    (11, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id', columns => '{"code": {}}')$$),
    (12, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id', columns => '{"id": {"imput": "mean"}}')$$),
    (13, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id', columns => '{"id": {"impute": "mode"}}')$$),
    (14, $$SELECT hopper.preprocess('odd', 'out', 'y', 'code', columns => '{"code": {"kind": "numeric"}}')$$),
    (15, $$SELECT hopper.preprocess('odd', 'out', 'y', 'code', columns => '{"code": {"scale": "minmax"}}')$$),
    (16, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id', columns => '{"id": {"max_categories": -1}}')$$),
    (17, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id', columns => '[1]')$$),
    (18, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id', columns => '{"id": 1}')$$),
    (19, $$SELECT hopper.preprocess('odd', 'out', 'y', '*', exclude_columns => 'doc, arr, empty')$$),
    (20, $$SELECT hopper.preprocess_validation('odd', 'out', 'label', 'code', 'gems_packed')$$),
    -- options of another kind of column (they were accepted and did nothing)
    (21, $$SELECT hopper.preprocess('odd', 'out', 'y', 'code', columns => '{"code": {"impute": "median"}}')$$),
    (22, $$SELECT hopper.preprocess('odd', 'out', 'y', 'id', columns => '{"id": {"max_categories": 3}}')$$)
) AS c(n, s) ORDER BY n;
-- ... and where they apply, they are taken.
SELECT hopper.preprocess('odd', 'odd_codes', 'y', 'id', columns => '{"id": {"kind": "categorical", "max_categories": 3}}');
SELECT (feature_recipe -> 'columns' -> 0 ->> 'max_categories')::int AS max_categories FROM odd_codes_summary;
-- recipe_features refuses a row that does not match its recipe, and a recipe that is not one.
SELECT n, try(s) FROM (VALUES
    (1, $$SELECT hopper.recipe_features((SELECT feature_recipe::text FROM mixed_packed_summary), ARRAY[1]::float8[], ARRAY['1'])$$),
    (2, $$SELECT hopper.recipe_features((SELECT feature_recipe::text FROM mixed_packed_summary), ARRAY[1, 2]::float8[], '{}')$$),
    (3, $$SELECT hopper.recipe_features('{"format": "hopper.recipe"}', '{}', '{}')$$),
    (4, $$SELECT hopper.recipe_features('not json', '{}', '{}')$$),
    (5, $$SELECT hopper.recipe_features(NULL, '{}', '{}')$$),
    (6, $$SELECT hopper.recipe_features((SELECT feature_recipe::text FROM mixed_packed_summary), ARRAY['NaN', 2]::float8[], ARRAY['1'])$$)
) AS c(n, s) ORDER BY n;
-- A vocabulary beyond the memory budget is refused before it is counted.
SET hopper.max_memory_mb = 1;
CREATE TABLE wide_vocab AS SELECT g AS id, md5(g::text) AS code, (g % 2)::text AS y FROM generate_series(1, 20000) g;
SELECT try($$SELECT hopper.preprocess('wide_vocab', 'out', 'y', 'code')$$);
RESET hopper.max_memory_mb;

-- Today's inputs are packed as before: a numeric array column, and numeric columns without NULLs,
-- have no recipe.
CREATE TABLE pts AS SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, g % 3 AS a, g % 5 AS b, (g % 2)::text AS y
FROM generate_series(1, 60) g;
SELECT hopper.preprocess('pts', 'pts_arr', 'y', 'x', num_segments => 1, scale => 'standardize');
SELECT hopper.preprocess('pts', 'pts_cols', 'y', 'a, b', num_segments => 1, scale => 'standardize');
SELECT output_table, feature_recipe IS NULL AS no_recipe, skipped_rows, scale, feature_center IS NOT NULL AS scaled
FROM (SELECT * FROM pts_arr_summary UNION ALL SELECT * FROM pts_cols_summary) s ORDER BY 1;
SELECT (SELECT array_agg(independent_var ORDER BY buffer_id) FROM pts_arr) = (SELECT array_agg(independent_var ORDER BY buffer_id) FROM pts_cols) AS same_packing;

-- Packed tables and models from before recipes (no feature_recipe, no skipped_rows) keep working.
ALTER TABLE pts_arr_summary DROP COLUMN feature_recipe, DROP COLUMN skipped_rows;
SELECT hopper.preprocess_validation('pts', 'pts_arr_valid', 'y', 'x', 'pts_arr');
CALL hopper.fit('pts_arr', 'pts_model', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
                '', '', 2, validation_table => 'pts_arr_valid');
ALTER TABLE pts_model_summary DROP COLUMN feature_recipe;
SELECT hopper.predict('pts_model', 'pts', 'id', 'x', 'pts_pred');
SELECT count(*) AS rows, count(estimated_y) AS predicted FROM pts_pred;

-- Class labels of an enum type: classes in the enum's order, predicted back as text.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE moods AS SELECT g AS id, (g % 13)::float8 AS a, (ARRAY['x', 'y', NULL])[g % 3 + 1] AS b,
       (ARRAY['sad', 'ok', 'happy'])[g % 3 + 1]::mood AS feeling FROM generate_series(1, 90) g;
SELECT hopper.preprocess('moods', 'moods_packed', 'feeling', 'a, b', num_segments => 1);
SELECT dependent_vartype, class_values FROM moods_packed_summary;
CALL hopper.fit('moods_packed', 'moods_model', '{"input_dim": 5, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$loss='categorical_crossentropy', optimizer='Adam(lr=0.05)'$$, 'batch_size=16', 3, name => 'moods_fit');
SELECT hopper.predict('moods_model', 'moods', 'id', 'a, b', 'moods_pred');
SELECT pg_catalog.format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'moods_pred'::regclass AND attname = 'estimated_feeling';
SELECT count(*) AS rows, bool_and(estimated_feeling IN ('sad', 'ok', 'happy')) AS known_labels FROM moods_pred;
-- evaluate takes the raw rows too: the same figures as on the rows packed by preprocess_validation.
SELECT hopper.preprocess_validation('moods', 'moods_valid', 'feeling', 'a, b', 'moods_packed');
SELECT r.loss = p.loss AS same_loss, r.metrics = p.metrics AS same_metrics, r.row_count AS raw_rows, p.row_count AS packed_rows
FROM hopper.evaluate('moods_model', 'moods') r, hopper.evaluate('moods_model', 'moods_valid') p;
SELECT count(*) AS scratch_tables_left FROM pg_class WHERE relname LIKE 'hopper_evaluate_rows%';
SELECT try($$SELECT * FROM hopper.evaluate('moods_model', 'moods_nocolumn')$$);
CREATE TABLE moods_missing AS SELECT id, a, feeling FROM moods;
SELECT try($$SELECT * FROM hopper.evaluate('moods_model', 'moods_missing')$$);
SELECT try($$SELECT * FROM hopper.evaluate('pts_model', 'pts')$$);
-- A registered version shows the recipe it scores with.
SELECT hopper.create_model('moods') > 0 AS created;
SELECT hopper.register_model_version('moods', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'moods_fit')) AS v1;
SELECT class_values, (SELECT array_agg(c ->> 'name') FROM jsonb_array_elements(feature_recipe -> 'columns') c) AS recipe_columns,
       feature_recipe ->> 'width' AS width
FROM hopper.model_versions_expanded WHERE model_name = 'moods';
-- A table's row scored by name: the model's recipe reads the row's own columns, exactly as predict.
SELECT count(*) AS rows, count(*) FILTER (WHERE hopper.predict_class('moods', m) = p.estimated_feeling) AS same_class
FROM moods m JOIN moods_pred p USING (id);
SELECT hopper.predict('moods_model', 'moods', 'id', 'a, b', 'moods_prob', 'prob');
SELECT count(*) FILTER (WHERE hopper.predict_proba('moods', m) = p.prob) AS same_probabilities
FROM moods m JOIN moods_prob p USING (id);
-- Rows of another table with the recipe's columns (in another order, with more columns) work too.
CREATE TABLE moods_new AS SELECT 'new' AS note, b, a FROM moods WHERE id <= 3;
SELECT count(hopper.predict_class('moods', n)) AS scored FROM moods_new n;
-- Rows of a subquery or a CTE (records whose descriptor names their columns) score as the table's
-- rows do; they were refused as anonymous records.
SELECT count(*) AS rows, count(*) FILTER (WHERE hopper.predict_class('moods', s) = p.estimated_feeling) AS subquery_same_class
FROM (SELECT id, b, a FROM moods) s JOIN moods_pred p USING (id);
WITH c AS (SELECT id, a, b, 'x' AS extra FROM moods)
SELECT count(*) FILTER (WHERE hopper.predict_proba('moods', c) = p.prob) AS cte_same_probabilities FROM c JOIN moods_prob p USING (id);
SELECT try($$SELECT hopper.predict_class('moods', s) FROM (SELECT id, a AS renamed, b FROM moods) s$$);
SELECT try($$SELECT hopper.predict_class('moods', s) FROM (SELECT id, a::text AS a, b FROM moods) s$$);
SELECT try($$SELECT hopper.predict_class('moods', ROW(1.0, 'x'))$$);
SELECT try($$SELECT hopper.predict_class('moods', m) FROM moods_missing m$$);
-- Every missing column is named at once.
SELECT try($$SELECT hopper.predict_class('moods', s) FROM (SELECT id, feeling FROM moods) s$$);
CREATE TABLE moods_bare AS SELECT id, feeling FROM moods;
SELECT try($$SELECT hopper.predict('moods_model', 'moods_bare', 'id', '*', 'no_out')$$);
SELECT try($$SELECT hopper.predict_class('moods', m) FROM moods_bare m$$);
DROP TABLE moods_bare;
SELECT try($$SELECT hopper.predict_value('moods', m) FROM moods m$$);
-- The unmatched side of a LEFT JOIN passes a NULL row: NULL, as for NULL features (was 22004, which
-- failed the whole statement, matched rows included).
SELECT v.k, hopper.predict_class('moods', m) IS NULL AS no_class FROM (VALUES (1), (-1)) v(k)
LEFT JOIN moods m ON m.id = v.k ORDER BY v.k;
-- The compiled row expression is kept from one statement to the next (row_features_for), and
-- forgotten when the table changes: a column retyped, dropped or added is read as it now is.
CREATE TABLE moods_alter AS SELECT id, a, b FROM moods;
SELECT count(*) FILTER (WHERE hopper.predict_class('moods', m) = p.estimated_feeling) AS before_alter
FROM moods_alter m JOIN moods_pred p USING (id);
ALTER TABLE moods_alter ALTER COLUMN a TYPE text;
SELECT try($$SELECT hopper.predict_class('moods', m) FROM moods_alter m$$) AS retyped;
ALTER TABLE moods_alter DROP COLUMN a;
SELECT try($$SELECT hopper.predict_class('moods', m) FROM moods_alter m$$) AS dropped;
ALTER TABLE moods_alter ADD COLUMN a float8;
UPDATE moods_alter m SET a = o.a FROM moods o WHERE o.id = m.id;
SELECT count(*) FILTER (WHERE hopper.predict_class('moods', m) = p.estimated_feeling) AS added_back
FROM moods_alter m JOIN moods_pred p USING (id);
DROP TABLE moods_alter;
SELECT hopper.delete_model('moods');

-- A table's own columns are standardized by default (scale => 'auto'); asked to go in unscaled
-- (scale => 'none', MADlib's default), numeric and date columns with large values are named in a
-- NOTICE (a network barely trained on diamonds' raw price); scaled or small ones not.
CREATE TABLE big_raw AS SELECT g AS id, g * 37.5 AS price, (g % 7)::float8 AS small, DATE '2020-01-01' + g AS day,
       (ARRAY['a', 'b'])[1 + g % 2] AS label FROM generate_series(1, 60) g;
SET client_min_messages = notice;
SELECT hopper.preprocess('big_raw', 'big_raw_packed', 'label', '*', exclude_columns => 'id', num_segments => 1, scale => 'none');
SELECT hopper.preprocess('big_raw', 'big_raw_scaled', 'label', '*', exclude_columns => 'id', num_segments => 1, scale => 'standardize');
SELECT hopper.preprocess('big_raw', 'big_raw_small', 'label', 'small', exclude_columns => 'id', num_segments => 1, scale => 'none');
SELECT hopper.preprocess('big_raw', 'big_raw_one', 'label', '*', exclude_columns => 'id, day', num_segments => 1, scale => 'none');
SELECT hopper.preprocess('big_raw', 'big_raw_auto', 'label', '*', exclude_columns => 'id', num_segments => 1);
-- The same numeric columns named one by one (packed as numbers: no NULLs) are standardized too, as
-- '*' has them; a numeric array column alone is not.
SELECT hopper.preprocess('big_raw', 'big_raw_named', 'label', 'price, small', num_segments => 1);
SELECT scale, feature_center IS NOT NULL AS centered FROM big_raw_named_summary;
SELECT hopper.preprocess('pts', 'pts_auto_array', 'y', 'x', num_segments => 1);
SELECT scale FROM pts_auto_array_summary;
SELECT (SELECT array_agg(DISTINCT c ->> 'scale') FROM jsonb_array_elements(feature_recipe -> 'columns') c
        WHERE c ->> 'kind' <> 'categorical') AS scale_by_default, scale AS summary_scale
FROM big_raw_auto_summary;
-- The summary's scale says what the recipe's columns got (it read none for scale => 'auto', which
-- standardized every one): one scale by name, mixed ones per column, none, and a validation pack's
-- as its training's.
SELECT hopper.preprocess('big_raw', 'big_raw_mixed', 'label', '*', exclude_columns => 'id', num_segments => 1,
                         columns => '{"small": {"scale": "minmax"}}');
SELECT hopper.preprocess_validation('big_raw', 'big_raw_mixed_valid', 'label', '*', 'big_raw_mixed');
SELECT a.scale AS auto, s.scale AS standardize, n.scale AS none, m.scale AS mixed, v.scale AS mixed_validation
FROM big_raw_auto_summary a, big_raw_scaled_summary s, big_raw_packed_summary n, big_raw_mixed_summary m,
     big_raw_mixed_valid_summary v;
-- So is a regression target (salaries in the hundred thousands trained raw to an RMSE worse than
-- the mean's), large or small: the NOTICE gives its mean and deviation (target_scaling.sql).
SELECT hopper.preprocess('big_raw', 'big_raw_target', 'price', 'small, id', num_segments => 1);
SELECT hopper.preprocess('big_raw', 'big_raw_small_target', 'small', 'id', num_segments => 1);
-- So is one far from 0 though below 100 (meats' protein, mean 17.7, had no NOTICE and ended at 13x
-- the mean's MSE raw).
CREATE VIEW big_raw_offset AS SELECT id, small, 15 + small AS protein FROM big_raw;
SELECT hopper.preprocess('big_raw_offset', 'big_raw_offset_packed', 'protein', 'small', num_segments => 1);
SET client_min_messages = warning;
-- Dates, timestamps and floats declared categorical name their categories by their text under
-- PostgreSQL's default settings, whatever the session's (DateStyle 'SQL, DMY' flipped a class,
-- extra_float_digits 0 sent floats to <unknown>, TimeZone moved timestamptz categories).
CREATE TABLE dated AS SELECT g AS id, DATE '2024-01-01' + (g % 3) AS day, (g % 4) / 3.0::float8 AS ratio,
       TIMESTAMPTZ '2024-01-01 10:00:00+00' + (g % 2) * interval '1 hour' AS at,
       (ARRAY['a', 'b'])[1 + g % 2] AS label FROM generate_series(1, 60) g;
-- Packed in a session with other settings, the categories are named as under the defaults.
SET DateStyle = 'SQL, DMY';
SET extra_float_digits = 0;
SET TimeZone = 'Asia/Kolkata';
SELECT hopper.preprocess('dated', 'dated_packed', 'label', 'day, ratio, at', num_segments => 1,
    columns => '{"day": {"kind": "categorical"}, "ratio": {"kind": "categorical"}, "at": {"kind": "categorical"}}');
SELECT c ->> 'name' AS column_name, c -> 'categories' AS categories
FROM dated_packed_summary, jsonb_array_elements(feature_recipe -> 'columns') c ORDER BY 1;
SELECT min(day::text) AS day_as_the_session_prints_it, min(ratio::text) AS ratio_as_the_session_prints_it FROM dated
WHERE ratio > 0;
RESET DateStyle;
RESET extra_float_digits;
RESET TimeZone;
-- Scored in such a session, a row's features are those of the default settings.
SELECT hopper.recipe_features(feature_recipe::text, ARRAY[]::float8[],
                              ARRAY[hopper.category_text(DATE '2024-01-02'), hopper.category_text(1 / 3.0::float8),
                                    hopper.category_text(TIMESTAMPTZ '2024-01-01 11:00:00+00')]) AS default_settings
FROM dated_packed_summary;
SET DateStyle = 'SQL, DMY';
SET extra_float_digits = 0;
SET TimeZone = 'Asia/Kolkata';
SELECT hopper.recipe_features(feature_recipe::text, ARRAY[]::float8[],
                              ARRAY[hopper.category_text(DATE '2024-01-02'), hopper.category_text(1 / 3.0::float8),
                                    hopper.category_text(TIMESTAMPTZ '2024-01-01 11:00:00+00')]) AS other_settings
FROM dated_packed_summary;
RESET DateStyle;
RESET extra_float_digits;
RESET TimeZone;

-- A text column with a value per row ('*' took an identifier in) becomes that many one-hot features:
-- a WARNING names it; left out, or kept to its frequent values, none.
CREATE TABLE coded AS SELECT g AS id, 'code-' || g AS code, g % 5 AS level, (ARRAY['a', 'b'])[1 + g % 2] AS label
FROM generate_series(1, 240) g;
SELECT hopper.preprocess('coded', 'coded_packed', 'label', '*', num_segments => 1);
SELECT hopper.preprocess('coded', 'coded_without', 'label', '*', exclude_columns => 'code', num_segments => 1);
SELECT hopper.preprocess('coded', 'coded_capped', 'label', '*', num_segments => 1,
                         columns => '{"code": {"max_categories": 10}}');
SELECT independent_dim FROM coded_packed_summary;


-- An array of numbers beside other columns (an embedding, readings) is an array column of the
-- recipe: its elements are features, scaled per element, never imputed. It was refused ("an array
-- column must be the only feature").
CREATE TABLE readings AS SELECT g AS id, (ARRAY['north', 'south', 'east'])[1 + g % 3] AS site,
       ARRAY[g % 7, (g % 5) * 10, g % 2]::float8[] AS sensor, ARRAY[g % 4, g % 3]::int[] AS codes,
       (g % 11)::numeric AS load, CASE WHEN g % 7 > 3 THEN 'high' ELSE 'low' END AS level
FROM generate_series(1, 240) g;
SELECT hopper.preprocess('readings', 'readings_packed', 'level', '*', exclude_columns => 'id', num_segments => 2,
                         scale => 'standardize', columns => '{"codes": {"scale": "none"}}');
SELECT c ->> 'name' AS name, c ->> 'kind' AS kind, c ->> 'width' AS width, c ->> 'scale' AS scale
FROM readings_packed_summary, LATERAL jsonb_array_elements(feature_recipe -> 'columns') AS c;
SELECT independent_dim FROM readings_packed_summary;
-- The same columns named, in another order: the recipe follows the list.
SELECT hopper.preprocess('readings', 'readings_listed', 'level', 'codes, load, sensor', num_segments => 1);
SELECT (SELECT array_agg(c ->> 'name') FROM jsonb_array_elements(feature_recipe -> 'columns') c) AS columns
FROM readings_listed_summary;
-- A row's features: the arrays end to end with their lengths.
SELECT hopper.recipe_features(feature_recipe, ARRAY[3]::float8[], ARRAY['north'], ARRAY[1, 20, 1, 2, 0]::real[],
                              ARRAY[3, 2]) AS features
FROM readings_packed_summary;
CALL hopper.fit('readings_packed', 'readings_model',
                '{"layers": [{"units": 16, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=16', 30, name => 'tabular_readings');
SELECT (training_metrics_final > 0.9) AS learned FROM readings_model_info;
SELECT hopper.create_model('readings') > 0 AS created;
SELECT hopper.register_model_version('readings', (SELECT uuid FROM hopper.best_checkpoints b JOIN hopper.runs r USING (run_id)
                                                  WHERE r.name = 'tabular_readings' LIMIT 1)) AS version;
-- Scored one row at a time, the table's rows give the forward pass on the recipe's features.
SELECT count(*) AS rows_compared,
       bool_and(hopper.predict_proba('readings', r) = hopper.model_forward(m.model_state,
                   hopper.recipe_features(s.feature_recipe, ARRAY[r.load]::float8[], ARRAY[r.site],
                       pg_catalog.array_cat(r.sensor::real[], r.codes::real[]), ARRAY[3, 2])::float8[], 1.0, NULL, NULL))
           AS same_probabilities
FROM readings r, readings_model m, readings_packed_summary s;
SELECT avg((hopper.predict_class('readings', r) = r.level)::int) > 0.9 AS accurate FROM readings r;
-- What a row's arrays can be wrong with, and a hand-made call's.
SELECT n, try(s) FROM (VALUES
    (1, $$SELECT hopper.predict_class('readings', r) FROM (SELECT id, site, NULL::float8[] AS sensor, codes, load FROM readings LIMIT 1) r$$),
    (2, $$SELECT hopper.predict_class('readings', r) FROM (SELECT id, site, ARRAY[1, 2]::float8[] AS sensor, codes, load FROM readings LIMIT 1) r$$),
    (3, $$SELECT hopper.predict_class('readings', r) FROM (SELECT id, site, ARRAY[1, NULL, 2]::float8[] AS sensor, codes, load FROM readings LIMIT 1) r$$),
    (4, $$SELECT hopper.predict_class('readings', r) FROM (SELECT id, site, ARRAY[1, 'NaN', 2]::float8[] AS sensor, codes, load FROM readings LIMIT 1) r$$),
    (5, $$SELECT hopper.predict_class('readings', r) FROM (SELECT id, site, ARRAY['1', '2', '3']::text[] AS sensor, codes, load FROM readings LIMIT 1) r$$),
    (6, $$SELECT hopper.recipe_features((SELECT feature_recipe FROM readings_packed_summary), ARRAY[3]::float8[], ARRAY['north'])$$),
    (7, $$SELECT hopper.recipe_features((SELECT feature_recipe FROM readings_packed_summary), ARRAY[3]::float8[], ARRAY['north'], ARRAY[1, 2, 3, 4, 5]::real[], ARRAY[3, 3])$$),
    (8, $$SELECT hopper.recipe_features((SELECT feature_recipe FROM readings_packed_summary), ARRAY[3]::float8[], ARRAY['north'], ARRAY[1, 2, 3, 4, 5, 6]::real[], ARRAY[3, 2])$$),
    (9, $$SELECT hopper.recipe_features((SELECT feature_recipe FROM readings_packed_summary), ARRAY[3]::float8[], ARRAY['north'], ARRAY[1, 2, 3, 4, 5]::real[], ARRAY[-1, 6])$$),
    (10, $$SELECT hopper.recipe_features((SELECT feature_recipe FROM readings_packed_summary), ARRAY[3]::float8[], ARRAY['north'], ARRAY[1, NULL, 3, 4, 5]::real[], ARRAY[3, 2])$$),
    (11, $$SELECT hopper.preprocess('readings', 'out', 'level', 'site, sensor', columns => '{"sensor": {"kind": "categorical"}}')$$),
    (12, $$SELECT hopper.preprocess('readings', 'out', 'level', 'site, load', columns => '{"load": {"kind": "array"}}')$$),
    (13, $$SELECT hopper.preprocess('readings', 'out', 'level', 'site, sensor', columns => '{"sensor": {"impute": "mean"}}')$$),
    -- a join's row naming a recipe's column twice was scored by the first one, without a word
    (14, $$SELECT hopper.predict_class('readings', r) FROM (SELECT a.site, a.sensor, a.codes, a.load, b.load FROM readings a JOIN readings b USING (id) LIMIT 1) r$$),
    -- the target among its own features was dropped from the recipe while the summary listed it
    (15, $$SELECT hopper.preprocess('readings', 'out', 'level', 'site, level')$$),
    (16, $$SELECT hopper.preprocess('pts', 'out', 'y', 'a, y')$$),
    -- a 2-D array was read as its elements in a row; a longer one ending in NULL named the NULL
    (17, $$SELECT hopper.predict_class('readings', r) FROM (SELECT id, site, ARRAY[[1, 2, 3]]::float8[] AS sensor, codes, load FROM readings LIMIT 1) r$$),
    (18, $$SELECT hopper.predict_class('readings', r) FROM (SELECT id, site, ARRAY[1, 2, 3, NULL]::float8[] AS sensor, codes, load FROM readings LIMIT 1) r$$),
    (19, $$SELECT hopper.recipe_features((SELECT feature_recipe FROM readings_packed_summary), ARRAY[3]::float8[], ARRAY['north'], ARRAY[[1, 2, 3, 4, 5]]::real[], ARRAY[3, 2])$$)
) AS t(n, s) ORDER BY n;
CREATE TABLE ragged AS SELECT g AS id, 'a' || g % 2 AS site, CASE WHEN g = 7 THEN ARRAY[1]::float8[] ELSE ARRAY[g, g]::float8[] END AS v,
       CASE WHEN g = 9 THEN NULL ELSE ARRAY[1, 2]::int[] END AS w, (g % 2)::text AS y
FROM generate_series(1, 20) g;
SELECT n, try(s) FROM (VALUES
    (1, $$SELECT hopper.preprocess('ragged', 'out', 'y', 'site, v')$$),
    (2, $$SELECT hopper.preprocess('ragged', 'out', 'y', 'site, w')$$)
) AS t(n, s) ORDER BY n;

RESET client_min_messages;
DROP SCHEMA test_tabular CASCADE;
