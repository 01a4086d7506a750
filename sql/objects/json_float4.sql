CREATE OR REPLACE FUNCTION hopper.json_float4(value jsonb) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT CASE WHEN pg_catalog.jsonb_typeof(value) OPERATOR(pg_catalog.<>) 'number' THEN NULL
                WHEN pg_catalog.abs(value::pg_catalog.numeric) OPERATOR(pg_catalog.>=) 3.4e38 THEN NULL
                WHEN pg_catalog.abs(value::pg_catalog.numeric) OPERATOR(pg_catalog.<) 1e-37 THEN 0
                ELSE value::pg_catalog.numeric::real END;
END;
COMMENT ON FUNCTION hopper.json_float4(jsonb) IS
'a JSON number as real: NULL for anything else (strings, objects, null) and for numbers beyond its range, 0 for numbers too small for it; never an error';
