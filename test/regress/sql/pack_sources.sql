-- Sources whose rows ctids do not identify: preprocess reads a source's rows by ctid, which a
-- partitioned table repeats from partition to partition and a view does not have. Both are accepted
-- as sources (resolve_input_table), so both must pack exactly their rows: a partitioned table packed
-- other rows than it holds (the same ctid fetched from every partition), a view failed with
-- 'column "ctid" does not exist'.
CREATE SCHEMA test_pack_sources;
SET search_path = test_pack_sources, public;
SET client_min_messages = warning;

CREATE TABLE parts (id int, x float8, y text) PARTITION BY LIST ((id % 2));
CREATE TABLE parts_0 PARTITION OF parts FOR VALUES IN (0);
CREATE TABLE parts_1 PARTITION OF parts FOR VALUES IN (1);
INSERT INTO parts SELECT g, g % 7, (g % 3)::text FROM generate_series(1, 100) g;
CREATE VIEW parts_view AS SELECT * FROM parts WHERE id <= 60;
CREATE TABLE parts_plain AS SELECT * FROM parts;

-- A row's feature and its class, as packed (buffers hold rows x features and rows x classes):
-- (x, class index) pairs, counted (packed with scale => 'none': the features as the source has them).
CREATE FUNCTION packed_pairs(packed regclass) RETURNS TABLE (x real, y int, n bigint) LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT independent_var[j][1], (SELECT k - 1 FROM generate_series(1, 3) k WHERE dependent_var[j][k] = 1), count(*)
         FROM %s, generate_series(1, independent_var_shape[1]) j GROUP BY 1, 2', packed);
END $$;

SELECT hopper.preprocess('parts', 'parts_packed', 'y', 'x', num_segments => 2, buffer_size => 10, seed => 1, scale => 'none');
-- One segment: before, this packed without an error, wrong rows (a partition's row for another's).
SELECT hopper.preprocess('parts', 'parts_packed_1', 'y', 'x', num_segments => 1, seed => 1, scale => 'none');
SELECT hopper.preprocess('parts_view', 'view_packed', 'y', 'x', num_segments => 2, buffer_size => 10, seed => 1, scale => 'none');
SELECT hopper.preprocess('parts_view', 'view_recipe_packed', 'y', '*', exclude_columns => 'id', num_segments => 1, seed => 1);
SELECT hopper.preprocess('parts_plain', 'plain_packed', 'y', 'x', num_segments => 2, buffer_size => 10, seed => 1, scale => 'none');
SELECT output_table, num_rows FROM (SELECT * FROM parts_packed_summary UNION ALL SELECT * FROM view_packed_summary
    UNION ALL SELECT * FROM view_recipe_packed_summary) s ORDER BY 1;
-- Exactly the source's rows.
SELECT count(*) AS pairs, bool_and(p.n IS NOT DISTINCT FROM s.n) AS partitioned_packs_its_rows
FROM (SELECT x::real, y::int, count(*) AS n FROM parts GROUP BY 1, 2) s
FULL JOIN packed_pairs('parts_packed') p USING (x, y);
SELECT count(*) AS pairs, bool_and(p.n IS NOT DISTINCT FROM s.n) AS partitioned_packs_its_rows_1
FROM (SELECT x::real, y::int, count(*) AS n FROM parts GROUP BY 1, 2) s
FULL JOIN packed_pairs('parts_packed_1') p USING (x, y);
SELECT count(*) AS pairs, bool_and(p.n IS NOT DISTINCT FROM s.n) AS view_packs_its_rows
FROM (SELECT x::real, y::int, count(*) AS n FROM parts_view GROUP BY 1, 2) s
FULL JOIN packed_pairs('view_packed') p USING (x, y);
-- and the packing of the plain table holds the same rows (the check itself can tell rows apart)
SELECT count(*) AS pairs, bool_and(p.n IS NOT DISTINCT FROM s.n) AS plain_packs_its_rows
FROM (SELECT x::real, y::int, count(*) AS n FROM parts_plain GROUP BY 1, 2) s
FULL JOIN packed_pairs('plain_packed') p USING (x, y);
-- A table with inheritance children reads theirs too, whose ctids repeat its own: packed through the
-- copy as well (before: 'the source table changed while it was being packed').
CREATE TABLE heirs (id int, x float8, y text);
CREATE TABLE heirs_child () INHERITS (heirs);
INSERT INTO heirs SELECT id, x, y FROM parts WHERE id <= 50;
INSERT INTO heirs_child SELECT id, x, y FROM parts WHERE id > 50;
SELECT hopper.preprocess('heirs', 'heirs_packed', 'y', 'x', num_segments => 1, seed => 1, scale => 'none');
SELECT count(*) AS pairs, bool_and(p.n IS NOT DISTINCT FROM s.n) AS inherited_packs_its_rows
FROM (SELECT x::real, y::int, count(*) AS n FROM heirs GROUP BY 1, 2) s
FULL JOIN packed_pairs('heirs_packed') p USING (x, y);
-- The same seed packs the same buffers again (the copy's order does not depend on where rows sit).
SELECT hopper.preprocess('parts', 'parts_packed_again', 'y', 'x', num_segments => 2, buffer_size => 10, seed => 1, scale => 'none');
SELECT (SELECT array_agg(independent_var ORDER BY dist_key, buffer_id) FROM parts_packed)
     = (SELECT array_agg(independent_var ORDER BY dist_key, buffer_id) FROM parts_packed_again) AS repeatable;

RESET client_min_messages;
DROP SCHEMA test_pack_sources CASCADE;
