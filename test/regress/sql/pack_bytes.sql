-- The bytes hopper.preprocess writes: a checksum of every packed table's buffers (and of its summary,
-- but for when and by which version it was made), recorded when packing was one SPI INSERT per
-- buffer in one backend. However packing gets faster -- buffers written without statements, source
-- rows read and converted by parallel workers -- the same arguments must pack the same bytes, so
-- that models trained on them do not change. Data made of integer arithmetic only (no sin(): libm
-- may differ in the last bit from machine to machine).
CREATE SCHEMA test_pack_bytes;
SET search_path = test_pack_bytes, public;
SET client_min_messages = warning;

-- The checksum of a packed table: every column of every buffer in binary form, in buffer order.
CREATE FUNCTION packed_md5(packed regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE sum text;
BEGIN
    EXECUTE format($q$SELECT md5(string_agg(int4send(dist_key) || int4send(buffer_id) || array_send(independent_var)
                                          || array_send(dependent_var) || array_send(independent_var_shape)
                                          || array_send(dependent_var_shape), ''::bytea ORDER BY dist_key, buffer_id))
                      FROM %s$q$, packed) INTO sum;
    RETURN sum;
END $$;
CREATE FUNCTION summary_md5(summary regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE sum text;
BEGIN
    EXECUTE format($q$SELECT md5(row(s.*)::text) FROM (SELECT source_table, output_table, dependent_varname,
                          independent_varname, dependent_vartype, response_type, class_values, num_classes,
                          buffer_size, num_segments, normalizing_const, scale, feature_center, feature_spread, num_rows,
                          num_buffers, rows_per_segment, buffers_per_segment, independent_dim, dependent_dim, seed,
                          training_preprocessed_table, feature_recipe, skipped_rows FROM %s) s$q$, summary) INTO sum;
    RETURN sum;
END $$;

CREATE TYPE tint AS ENUM ('pale', 'deep', 'dark');
-- Images: real[] of 0..255 stored compressed inline, an int label, a text label, a boolean, an enum.
CREATE TABLE images AS
SELECT g AS id, ARRAY(SELECT ((g * 31 + k * 17) % 256)::real FROM generate_series(1, 196) k) AS pixels,
       g % 10 AS digit, 'class ' || (g % 7) AS name, g % 3 = 0 AS flag, (ARRAY['pale', 'deep', 'dark'])[1 + g % 3]::tint AS tint
FROM generate_series(1, 3000) g;
-- Wide rows: float8[] of 1500 values that do not compress (stored out of line), a float8[] target.
CREATE TABLE wide AS
SELECT g AS id, ARRAY(SELECT ((g * 7919 + k * 104729) % 100003)::float8 / 977 FROM generate_series(1, 1500) k) AS x,
       ARRAY[(g % 13)::float8 / 4, (g % 5)::float8]::float8[] AS y
FROM generate_series(1, 600) g;
-- Numbers in columns of every numeric type.
CREATE TABLE columns AS
SELECT g AS id, (g % 101)::int2 AS a, (g % 103)::int4 AS b, (g * 7)::int8 AS c, ((g % 97)::real / 8) AS d,
       (g % 89)::float8 / 3 AS e, ((g % 83)::numeric / 7) AS f, ((g * 13) % 1000)::float8 / 10 AS target,
       ARRAY[g % 5, g % 7]::int4[] AS ints, ARRAY[(g % 9)::numeric / 4, g % 2]::numeric[] AS nums
FROM generate_series(1, 2500) g;
-- A table as it is: numbers with NULLs, categories, booleans, dates (a feature recipe).
CREATE TABLE gems AS
SELECT g AS id,
       CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 5) * 0.5 + (g % 3) END::numeric AS carat,
       (ARRAY['Fair', 'Good', 'Ideal'])[1 + g % 3] AS cut,
       (g % 4 = 0) AS certified, DATE '2020-01-01' + g AS sold,
       CASE WHEN g % 17 = 0 THEN NULL ELSE (ARRAY['cheap', 'dear'])[1 + ((g % 3) + (g / 3) % 2) % 2] END AS price
FROM generate_series(1, 1200) g;
CREATE VIEW images_view AS SELECT * FROM images WHERE id % 4 <> 0;
VACUUM ANALYZE images, wide, columns, gems;

-- Every way of packing, then its checksums.
CREATE TABLE packings (name text, packing text);
INSERT INTO packings VALUES
  ('images',     $$SELECT hopper.preprocess('images', 'images_packed', 'digit', 'pixels', normalizing_const => 255, num_segments => 2)$$),
  ('images_val', $$SELECT hopper.preprocess_validation('images', 'images_val_packed', 'digit', 'pixels', 'images_packed', buffer_size => 100)$$),
  ('names',      $$SELECT hopper.preprocess('images', 'names_packed', 'name', 'pixels', buffer_size => 64, num_segments => 3, seed => 11, scale => 'standardize')$$),
  ('names_val',  $$SELECT hopper.preprocess_validation('images_view', 'names_val_packed', 'name', 'pixels', 'names_packed')$$),
  ('flags',      $$SELECT hopper.preprocess('images', 'flags_packed', 'flag', 'pixels', buffer_size => 500, num_segments => 1, scale => 'minmax', num_classes => 4)$$),
  ('tints',      $$SELECT hopper.preprocess('images', 'tints_packed', 'tint', 'pixels', buffer_size => 77, seed => 3)$$),
  ('view',       $$SELECT hopper.preprocess('images_view', 'view_packed', 'digit', 'pixels', buffer_size => 90, num_segments => 2)$$),
  ('wide',       $$SELECT hopper.preprocess('wide', 'wide_packed', 'y', 'x', buffer_size => 50, num_segments => 2, scale => 'standardize')$$),
  ('wide_val',   $$SELECT hopper.preprocess_validation('wide', 'wide_val_packed', 'y', 'x', 'wide_packed')$$),
  ('columns',    $$SELECT hopper.preprocess('columns', 'columns_packed', 'target', 'a, b, c, d, e, f', buffer_size => 128, num_segments => 2, scale => 'minmax', seed => 5)$$),
  ('arrays',     $$SELECT hopper.preprocess('columns', 'arrays_packed', 'nums', 'ints', buffer_size => 300, num_segments => 2)$$),
  ('classes',    $$SELECT hopper.preprocess('columns', 'classes_packed', 'b', 'f', buffer_size => 256, num_segments => 2, response_type => 'classification', scale => 'none')$$),
  ('gems',       $$SELECT hopper.preprocess('gems', 'gems_packed', 'price', '*', exclude_columns => 'id', buffer_size => 50, num_segments => 2, seed => 1, scale => 'standardize', columns => '{"carat": {"impute": "median", "missing_indicator": true}}')$$),
  ('gems_val',   $$SELECT hopper.preprocess_validation('gems', 'gems_val_packed', 'price', '*', 'gems_packed')$$);
CREATE FUNCTION pack_all() RETURNS TABLE (name text, packed text, summary text) LANGUAGE plpgsql AS $$
DECLARE p record;
BEGIN
    FOR p IN SELECT * FROM test_pack_bytes.packings ORDER BY packings.name LIKE '%\_val', packings.name LOOP
        EXECUTE p.packing;
    END LOOP;
    FOR p IN SELECT * FROM test_pack_bytes.packings ORDER BY 1 LOOP
        name := p.name;
        packed := test_pack_bytes.packed_md5((p.name || '_packed')::regclass);
        summary := test_pack_bytes.summary_md5((p.name || '_packed_summary')::regclass);
        RETURN NEXT;
    END LOOP;
    FOR p IN SELECT * FROM test_pack_bytes.packings LOOP
        EXECUTE format('DROP TABLE %I, %I', p.name || '_packed', p.name || '_packed_summary');
    END LOOP;
END $$;

-- In the backend alone.
SET max_parallel_workers_per_gather = 0;
CREATE TABLE serial AS SELECT * FROM pack_all();
SELECT * FROM serial ORDER BY name;
RESET max_parallel_workers_per_gather;

-- With parallel workers reading the rows while the backend writes (min_parallel_table_scan_size 0:
-- workers for these small tables too; the view is read through a temporary copy, which workers
-- cannot read, so in the backend): the same bytes. test/scripts/pack_workers.sh sees the workers.
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
CREATE TABLE parallel AS SELECT * FROM pack_all();
SELECT name, s.packed = p.packed AS same_buffers, s.summary = p.summary AS same_summary
FROM serial s JOIN parallel p USING (name) ORDER BY name;

-- Errors are those of reading alone: a worker's error in a buffer is raised once every buffer
-- before it is written, so the first buffer that has one names it (here a NaN in one row, an
-- infinity in another, an unseen class in a third).
CREATE TABLE bad_rows AS
SELECT g AS id, ARRAY[g, CASE g WHEN 700 THEN 'NaN' WHEN 1500 THEN 'Infinity' ELSE g::text END::float8] AS x,
       CASE g WHEN 1100 THEN 'unseen' ELSE (g % 3)::text END AS y
FROM generate_series(1, 2000) g;
CREATE TABLE good_rows AS SELECT g AS id, ARRAY[g, g]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 300) g;
SELECT hopper.preprocess('good_rows', 'good_packed', 'y', 'x', buffer_size => 50);
SELECT hopper.preprocess('bad_rows', 'o1', 'y', 'x', buffer_size => 50, seed => 1);
SELECT hopper.preprocess('bad_rows', 'o1', 'y', 'x', buffer_size => 50, seed => 2);
SELECT hopper.preprocess_validation('bad_rows', 'o1', 'y', 'x', 'good_packed');
SET max_parallel_workers_per_gather = 0;
SELECT hopper.preprocess('bad_rows', 'o1', 'y', 'x', buffer_size => 50, seed => 1);
SELECT hopper.preprocess('bad_rows', 'o1', 'y', 'x', buffer_size => 50, seed => 2);
SELECT hopper.preprocess_validation('bad_rows', 'o1', 'y', 'x', 'good_packed');
SELECT count(*) AS leftovers FROM pg_class WHERE relnamespace = current_schema()::regnamespace AND relname LIKE 'o1%';
RESET max_parallel_workers_per_gather;
RESET min_parallel_table_scan_size;

RESET client_min_messages;
DROP SCHEMA test_pack_bytes CASCADE;
