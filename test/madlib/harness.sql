-- The helpers MADlib's deep-learning test files call, which MADlib's harness gets from MADlib's
-- utilities module (installed with MADlib, not with hopper_madlib): written here anew, with the
-- behaviour MADlib documents, in schema madlib of the yardstick's throwaway database only.
CREATE FUNCTION madlib.assert(condition boolean, msg varchar) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT condition THEN
        RAISE EXCEPTION 'Failed assertion: %', msg;
    END IF;
END $$;

-- 1 when the statement raises an error, 0 when it runs.
CREATE FUNCTION madlib.trap_error(stmt text) RETURNS integer
LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE stmt;
    EXCEPTION WHEN OTHERS THEN
        RETURN 1;
    END;
    RETURN 0;
END $$;

-- TRUE when the statement fails with a message containing msg.
CREATE FUNCTION madlib.test_error_msg(stmt text, msg text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        EXECUTE stmt;
    EXCEPTION WHEN OTHERS THEN
        RETURN strpos(SQLERRM, msg) > 0;
    END;
    RETURN false;
END $$;

CREATE FUNCTION madlib.test_input_table(stmt text) RETURNS boolean
LANGUAGE sql AS $$ SELECT madlib.test_error_msg(stmt, 'NULL/empty input table name') $$;

CREATE FUNCTION madlib.test_output_table(stmt text) RETURNS boolean
LANGUAGE sql AS $$ SELECT madlib.test_error_msg(stmt, 'NULL/empty output table name') $$;

CREATE FUNCTION madlib.relative_error(approx float8, value float8) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$ SELECT abs((approx - value) / value) $$;

CREATE FUNCTION madlib.relative_error(approx float8[], value float8[]) RETURNS float8
LANGUAGE sql IMMUTABLE AS $$
    SELECT sqrt(sum((a - v) ^ 2)) / sqrt(sum(v ^ 2)) FROM unnest(approx, value) AS t(a, v)
$$;

CREATE FUNCTION madlib.__to_char(val anyelement) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT val::text $$;

CREATE FUNCTION madlib.is_table_unlogged(tbl_name text) RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT relpersistence = 'u' FROM pg_class WHERE relname = tbl_name LIMIT 1 $$;

-- MADlib's array_ops: the elements squared (the iris setup derives a second input from it).
CREATE FUNCTION madlib.array_square(x anyarray) RETURNS anyarray
LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT array_agg(v * v ORDER BY i) FROM unnest(x) WITH ORDINALITY AS t(v, i) $$;

-- PostgreSQL 12 or later (MADlib's asks Greenplum for 6.5 or later): the GUCs assert_guc_value checks
-- exist there.
CREATE FUNCTION madlib.is_ver_greater_than_gp_640_or_pg_11() RETURNS boolean
LANGUAGE sql STABLE AS $$ SELECT current_setting('server_version_num')::int >= 120000 $$;

-- An error when a GUC has another value than expected (a function left a setting changed).
CREATE FUNCTION madlib.assert_guc_value(guc_name text, expected_guc_value text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting(guc_name) IS DISTINCT FROM expected_guc_value THEN
        RAISE EXCEPTION 'guc % assertion failed. Expected Value: %, Actual Value: %',
            guc_name, expected_guc_value, current_setting(guc_name);
    END IF;
END $$;
