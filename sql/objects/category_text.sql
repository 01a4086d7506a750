-- A value of a column declared categorical, as the text its category is named by: its type's output
-- with PostgreSQL's default settings, whatever the session's. Dates, timestamps, intervals, floats and
-- money print per DateStyle, TimeZone, IntervalStyle, extra_float_digits and lc_monetary: under
-- another session's settings the same row named another category (a date's class flipped with
-- DateStyle 'SQL, DMY'; floats went to <unknown> with extra_float_digits 0). The defaults keep the
-- categories of recipes fitted under them. (Pinned settings: not inlined; used only for those types.)
CREATE OR REPLACE FUNCTION hopper.category_text(value anyelement) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
SET DateStyle = 'ISO, MDY' SET TimeZone = 'UTC' SET IntervalStyle = 'postgres' SET extra_float_digits = 1
SET lc_monetary = 'C'
AS $$ SELECT $1::pg_catalog.text $$;
COMMENT ON FUNCTION hopper.category_text(anyelement) IS
'a categorical column''s value as the text of its category: its type''s output under PostgreSQL''s default DateStyle, IntervalStyle and extra_float_digits, TimeZone UTC and lc_monetary C, whatever the session sets';
