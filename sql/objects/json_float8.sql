-- Every role reads every row of the registry, and each role writes its own rows' JSON: a view that
-- casts one role's value must not fail for everyone (a string, or a number beyond the type's range,
-- raised 22P02/22003 in every unfiltered query). These casts give NULL for what is not a number in
-- range, and 0 for what would underflow. (BEGIN ATOMIC: bound when created, and inlined in queries.)
CREATE OR REPLACE FUNCTION hopper.json_float8(value jsonb) RETURNS double precision
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE WHEN pg_catalog.jsonb_typeof(value) OPERATOR(pg_catalog.<>) 'number' THEN NULL
                WHEN pg_catalog.abs(value::pg_catalog.numeric) OPERATOR(pg_catalog.>=) 1e308 THEN NULL
                WHEN pg_catalog.abs(value::pg_catalog.numeric) OPERATOR(pg_catalog.<) 1e-300 THEN 0
                ELSE value::pg_catalog.numeric::double precision END;
END;
COMMENT ON FUNCTION hopper.json_float8(jsonb) IS
'a JSON number as double precision: NULL for anything else (strings, objects, null) and for numbers beyond its range, 0 for numbers too small for it; never an error';
