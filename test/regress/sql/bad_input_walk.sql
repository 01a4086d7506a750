-- Every public hopper function and procedure, called with NULLs and hostile values of each argument
-- type, one argument at a time. Whatever hopper does with them, it must answer with a clean error
-- (or a result): never a crash (the whole test would fail), never XX000 (hopper's "bug" code), an
-- unexpected C++ exception or a PostgreSQL internal error. Functions are found in the catalog, so
-- functions added later are walked too. The list of violations must be empty.
-- In a database of its own: the objects, registry rows and settings it creates touch no other test.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS hopper_bad_input_walk;
CREATE DATABASE hopper_bad_input_walk;
\c hopper_bad_input_walk
CREATE EXTENSION hopper;
SET client_min_messages = error;
SET statement_timeout = '300s';

-- A real model state to truncate and bit-flip, and a packed table to name.
CREATE TABLE walk_src AS
SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 60) g;
SELECT hopper.preprocess('walk_src', 'walk_packed', 'y', 'x', buffer_size => 10, num_segments => 2);
CALL hopper.fit('walk_packed', 'walk_model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 1);

SELECT hopper.load_model_arch('walk_archs', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('walk_archs', 'walk_mst', ARRAY[1], ARRAY[$$optimizer='SGD(lr=0.1)'$$], ARRAY['']);
CREATE TABLE walk_ckpt AS SELECT hopper.create_checkpoint(model_state) AS id FROM walk_model;
SELECT hopper.create_model('walk_registered') IS NOT NULL AS registered;
SELECT hopper.ps_create('walk_ps', 10);

-- A plausible value for each parameter name (so that calls get past their first argument and the
-- hostile value meets the code behind it); parameters not listed are NULL.
CREATE SEQUENCE walk_out_seq;
CREATE TEMP TABLE walk_base (param text PRIMARY KEY, literal text);
INSERT INTO walk_base VALUES
    -- a new output table for every call, so that earlier successes do not turn later calls into 42P07
    ('source_table', $$'walk_src'$$), ('output_table', $$'walk_out_' || nextval('walk_out_seq')$$),
    ('model_output_table', $$'walk_out_' || nextval('walk_out_seq')$$),
    ('packed_table', $$'walk_packed'$$), ('training_preprocessed_table', $$'walk_packed'$$),
    ('model_table', $$'walk_model'$$), ('dependent_varname', $$'y'$$), ('independent_varname', $$'x'$$),
    ('id_column', $$'id'$$), ('model_arch', $$'{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}'$$),
    ('compile_params', $$'optimizer=''SGD(lr=0.1)'''$$), ('fit_params', $$''$$), ('num_iterations', '1'),
    ('model_state', '(SELECT model_state FROM walk_model)'), ('model_weights', '(SELECT model_state FROM walk_model)'),
    ('model_states', '(SELECT ARRAY[model_state] FROM walk_model)'), ('independent_var', $$'{{1,2}}'$$),
    ('dependent_var', $$'{{1,0,0}}'$$), ('features', $$'{1,2}'$$), ('x', $$'{1,2,3}'$$),
    ('model_arch_table', $$'walk_archs'$$), ('model_selection_table', $$'walk_mst'$$), ('model_id', '1'),
    ('model_id_list', $$'{1}'$$), ('compile_params_list', $$ARRAY['optimizer=''SGD(lr=0.1)''']$$),
    ('fit_params_list', $$ARRAY['']$$), ('compile_params_grid', $$'{"optimizer": ["SGD"], "lr": [0.1]}'$$),
    ('fit_params_grid', $$'{"batch_size": [8]}'$$), ('name', $$'walk_ps'$$), ('worker', '0'), ('keys', $$'{0,1}'$$),
    ('chunk_ids', $$'{0}'$$), ('deltas', $$'{1,1}'$$), ('num_keys', '10'), ('checkpoint', '(SELECT id FROM walk_ckpt)'),
    ('checkpoints', '(SELECT ARRAY[id] FROM walk_ckpt)'), ('model_name', $$'walk_registered'$$),
    ('task_type', $$'IMPORT'$$), ('uri', $$'file:///tmp/x'$$), ('format', $$'hopper'$$);

-- Hostile values per argument type, as SQL literals.
CREATE TEMP TABLE walk_pool (type text, literal text);
INSERT INTO walk_pool
SELECT 'text', v FROM unnest(ARRAY['NULL', $$''$$, $$' '$$, $$'no_such_table'$$, $$'walk_packed'$$, $$'walk_model'$$,
    $$'a;b'$$, $$'"'$$, $$'x.y.z.w'$$, $$'pg_catalog.pg_class'$$, $$'''; DROP TABLE walk_src; --'$$,
    $$repeat('x', 100)$$, $$'{'$$, $$'SGD(lr=-1)'$$, $$'batch_size=0'$$]) v
UNION ALL SELECT 'integer', v FROM unnest(ARRAY['NULL', '0', '-1', '1', '-2147483648', '2147483647']) v
UNION ALL SELECT 'bigint', v FROM unnest(ARRAY['NULL', '0', '-1', '1', '9223372036854775807', '-9223372036854775808']) v
UNION ALL SELECT 'double precision', v FROM unnest(ARRAY['NULL', $$'NaN'$$, $$'Infinity'$$, $$'-Infinity'$$, '0', '-1', '1e308']) v
UNION ALL SELECT 'real', v FROM unnest(ARRAY['NULL', $$'NaN'$$, $$'Infinity'$$, '-1', '0']) v
UNION ALL SELECT 'boolean', v FROM unnest(ARRAY['NULL', 'true', 'false']) v
UNION ALL SELECT 'jsonb', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'[]'$$, $$'null'$$, $$'"x"'$$, $$'1e400'$$,
    $$'{"input_dim": -1, "layers": []}'$$, $$'{"input_dim": 2, "layers": [{"units": 1000001}]}'$$,
    $$repeat('[', 200) || repeat(']', 200)$$]) v
UNION ALL SELECT 'bytea', v FROM unnest(ARRAY['NULL', $$'\x'$$, $$'\x00'$$, $$'HOPPERMS'::bytea$$,
    '(SELECT model_state FROM walk_model)',
    '(SELECT substr(model_state, 1, 80) FROM walk_model)',
    '(SELECT substr(model_state, 1, length(model_state) - 1) FROM walk_model)',
    '(SELECT set_byte(model_state, 20, get_byte(model_state, 20) # 4) FROM walk_model)',
    '(SELECT set_byte(model_state, length(model_state) - 9, get_byte(model_state, length(model_state) - 9) # 128) FROM walk_model)',
    $$decode(repeat('ff', 5000), 'hex')$$]) v
UNION ALL SELECT 'real[]', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'{NULL}'$$, $$'{NaN,1}'$$, $$'{Infinity}'$$,
    $$'{{1,2},{3,4}}'$$, $$'{{{1}}}'$$, $$'[5:6]={1,2}'$$, 'array_fill(1::real, ARRAY[200000])']) v
UNION ALL SELECT 'double precision[]', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'{NULL}'$$, $$'{NaN,1}'$$,
    $$'{-Infinity,1}'$$, $$'{{1,2}}'$$, $$'{1,2}'$$, 'array_fill(1::float8, ARRAY[200000])']) v
UNION ALL SELECT 'integer[]', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'{NULL}'$$, $$'{-1}'$$, $$'{1,1}'$$, $$'{2147483647}'$$]) v
UNION ALL SELECT 'bigint[]', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'{NULL}'$$, $$'{-1}'$$, $$'{3,1,2}'$$, $$'{1,1}'$$,
    $$'{9223372036854775807}'$$, 'array_fill(0::bigint, ARRAY[100000])']) v
UNION ALL SELECT 'text[]', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'{NULL}'$$, $$'{""}'$$, $$'{"batch_size=0"}'$$,
    $$'{"optimizer=''SGD(lr=nan)''"}'$$]) v
UNION ALL SELECT 'bytea[]', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'{NULL}'$$, $$ARRAY['\x'::bytea]$$,
    '(SELECT ARRAY[substr(model_state, 1, 100)] FROM walk_model)']) v
UNION ALL SELECT 'int8range[]', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'{empty}'$$, $$'{"[0,)"}'$$,
    $$'{"[0,10)","[5,15)"}'$$, $$'{"[-9223372036854775808,9223372036854775807)"}'$$]) v
UNION ALL SELECT 'uuid', v FROM unnest(ARRAY['NULL', $$'00000000-0000-0000-0000-000000000000'$$]) v
UNION ALL SELECT 'uuid[]', v FROM unnest(ARRAY['NULL', $$'{}'$$, $$'{NULL}'$$, $$'{00000000-0000-0000-0000-000000000000}'$$]) v
UNION ALL SELECT 'name', v FROM unnest(ARRAY['NULL', $$''$$, $$'nobody'$$]) v
UNION ALL SELECT 'record', v FROM unnest(ARRAY['NULL', 'ROW(1, NULL)', 'ROW(ROW(1))',
    '(SELECT w FROM walk_model w LIMIT 1)']) v;

CREATE TABLE walk_result (fn text, call text, sqlstate text, message text);

DO $walk$
DECLARE
    f record;
    types regtype[];
    base text[];
    args text[];
    v record;
    stmt text;
    i int;
BEGIN
    FOR f IN
        SELECT p.oid, p.proname, p.prokind, p.proretset,
               -- oidvector subscripts start at 0: renumber from 1
               (SELECT array_agg(t ORDER BY o) FROM unnest(p.proargtypes::regtype[]) WITH ORDINALITY AS u(t, o)) AS argtypes,
               p.proargnames[1:p.pronargs] AS argnames
        FROM pg_proc p
        WHERE p.pronamespace = 'hopper'::regnamespace AND p.prokind IN ('f', 'p')
          -- aggregate support functions take internal; trigger functions cannot be called
          AND NOT 'internal'::regtype = ANY (p.proargtypes::regtype[])
          AND p.prorettype <> 'trigger'::regtype
        ORDER BY p.proname, p.oid
    LOOP
        types := f.argtypes;
        -- Base call: plausible values by parameter name (else NULL); then each argument in turn
        -- takes every hostile value of its type (and the all-NULL call is made once).
        base := ARRAY(SELECT coalesce((SELECT b.literal FROM walk_base b WHERE b.param = n.name), 'NULL')
                      FROM unnest(coalesce(f.argnames, '{}'::text[])) WITH ORDINALITY AS n(name, o) ORDER BY o);
        FOR i IN -1 .. coalesce(array_length(types, 1), 0) LOOP
            FOR v IN SELECT 'NULL' AS literal WHERE i <= 0
                     UNION ALL
                     SELECT literal FROM walk_pool WHERE i > 0 AND type = types[i]::text
                       -- 2^31-1 iterations would train until the lock table is full (one transaction:
                       -- every iteration's working tables stay locked); docs/reliability.md.
                       AND NOT (f.argnames[i] = 'num_iterations' AND literal = '2147483647') LOOP
                args := base;
                IF i = -1 THEN
                    args := array_fill('NULL'::text, ARRAY[coalesce(array_length(types, 1), 0)]);
                ELSIF i > 0 THEN
                    args[i] := v.literal;
                END IF;
                FOR j IN 1 .. coalesce(array_length(types, 1), 0) LOOP
                    args[j] := '(' || coalesce(args[j], 'NULL') || ')::' || types[j]::text;
                END LOOP;
                stmt := CASE WHEN f.prokind = 'p' THEN 'CALL ' ELSE 'SELECT count(*) FROM ' END ||
                        'hopper.' || quote_ident(f.proname) || '(' || coalesce(array_to_string(args, ', '), '') || ')';
                BEGIN
                    EXECUTE stmt;
                    INSERT INTO walk_result VALUES (f.proname, stmt, '00000', NULL);
                EXCEPTION WHEN OTHERS THEN
                    INSERT INTO walk_result VALUES (f.proname, stmt, SQLSTATE, SQLERRM);
                END;
                -- One transaction per call: the tables successful calls create would otherwise pile
                -- up locks until the lock table is full.
                COMMIT;
            END LOOP;
        END LOOP;
    END LOOP;
END
$walk$;

-- Violations: hopper's bug code, PostgreSQL internal errors, or C++ exceptions that escaped.
SELECT fn, call, sqlstate, message FROM walk_result
WHERE sqlstate IN ('XX000', 'XX001', 'XX002') OR sqlstate LIKE '58%'
   OR message ILIKE '%internal error%' OR message ILIKE '%exception%' OR message ILIKE '%std::%'
ORDER BY fn, call;

-- The walk reached every function (one line per function: calls made, and whether any was refused).
SELECT count(DISTINCT fn) >= 30 AS many_functions, count(*) >= 300 AS many_calls FROM walk_result;
SELECT p.proname FROM pg_proc p
WHERE p.pronamespace = 'hopper'::regnamespace AND p.prokind IN ('f', 'p')
  AND NOT 'internal'::regtype = ANY (p.proargtypes::regtype[]) AND p.prorettype <> 'trigger'::regtype
  AND p.proname NOT IN (SELECT fn FROM walk_result);
-- No working table was left behind by any failed or successful call.
SELECT relname FROM pg_class WHERE relname LIKE '\_\_hopper%';
-- The SQL-looking text argument did nothing.
SELECT count(*) AS source_rows FROM walk_src;

-- Clean up shared state the walk may have created (parameter tables outlive transactions).
DO $$ BEGIN PERFORM hopper.ps_drop(name, true) FROM hopper.ps_tables; EXCEPTION WHEN undefined_function OR undefined_table THEN NULL; END $$;

\c :regress_db
DROP DATABASE hopper_bad_input_walk;
