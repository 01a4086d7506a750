-- Privileges and search_path: hopper runs with the caller's rights (SECURITY INVOKER), refuses
-- tables the caller cannot read (42501), creates outputs owned by the caller, and its internal
-- statements cannot be hijacked by objects in the caller's search_path.
-- In a database of its own: the objects, registry rows and settings it creates touch no other test.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS hopper_privileges;
CREATE DATABASE hopper_privileges;
\c hopper_privileges
CREATE EXTENSION hopper;
SET client_min_messages = warning;
\set VERBOSITY terse

-- Every function and procedure runs as its caller, but for one trigger function that no role may
-- execute (so none can attach it to a table), which locks a new model version's checkpoint
-- (registry_attacks.sql).
SELECT p.oid::regprocedure AS security_definer, p.prorettype = 'trigger'::regtype AS is_trigger,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may_execute,
       (SELECT string_agg(t.tgrelid::regclass || ' ' || t.tgname, ', ') FROM pg_trigger t WHERE t.tgfoid = p.oid) AS fired_by
FROM pg_proc p
WHERE p.pronamespace = 'hopper'::regnamespace AND p.prosecdef;

DROP ROLE IF EXISTS hopper_priv_alice;
DROP ROLE IF EXISTS hopper_priv_bob;
DROP ROLE IF EXISTS hopper_priv_mallory;
CREATE ROLE hopper_priv_alice;
CREATE ROLE hopper_priv_bob;
CREATE ROLE hopper_priv_mallory;
CREATE SCHEMA priv_alice AUTHORIZATION hopper_priv_alice;
CREATE SCHEMA priv_bob AUTHORIZATION hopper_priv_bob;
CREATE SCHEMA priv_evil AUTHORIZATION hopper_priv_mallory;
GRANT USAGE ON SCHEMA priv_alice, priv_evil TO hopper_priv_bob;
GRANT USAGE ON SCHEMA hopper TO hopper_priv_alice, hopper_priv_bob;

-- Alice's data and model.
SET ROLE hopper_priv_alice;
CREATE TABLE priv_alice.src AS
SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 300) g;
SELECT hopper.preprocess('priv_alice.src', 'priv_alice.packed', 'y', 'x', buffer_size => 50, num_segments => 2);
-- A role without BYPASSRLS trains under the registry's row-level security (its run, trials and
-- checkpoints are its own rows).
CALL hopper.fit('priv_alice.packed', 'priv_alice.model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 1);
-- The parameter tables' views, which docs/parameter_server.md tells every user to query.
SELECT count(*) >= 0 AS ps_tables_readable FROM hopper.ps_tables;
SELECT count(*) >= 0 AS ps_workers_readable FROM hopper.ps_workers;
RESET ROLE;

-- Bob cannot read Alice's tables: every function that reads one refuses with 42501.
SET ROLE hopper_priv_bob;
SELECT hopper.preprocess('priv_alice.src', 'priv_bob.packed', 'y', 'x');
CALL hopper.fit('priv_alice.packed', 'priv_bob.model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}', '', '', 1);
SELECT * FROM hopper.evaluate('priv_alice.model', 'priv_alice.packed');
SELECT hopper.predict('priv_alice.model', 'priv_alice.src', 'id', 'x', 'priv_bob.pred');
-- ... nor write into her schema.
CREATE TABLE priv_bob.src AS SELECT 1 AS id, ARRAY[1, 2]::float8[] AS x, 'a'::text AS y UNION ALL SELECT 2, ARRAY[2, 1], 'b';
SELECT hopper.preprocess('priv_bob.src', 'priv_alice.stolen', 'y', 'x');
SELECT count(*) AS bob_tables_created FROM pg_class WHERE relnamespace = 'priv_alice'::regnamespace AND relname LIKE 'stolen%';
RESET ROLE;

-- With SELECT on the packed table, Bob trains into his schema, and every output is his.
GRANT SELECT ON priv_alice.packed, priv_alice.packed_summary TO hopper_priv_bob;
SET ROLE hopper_priv_bob;
CALL hopper.fit('priv_alice.packed', 'priv_bob.model', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 1);
SELECT hopper.preprocess('priv_bob.src', 'priv_bob.packed', 'y', 'x', buffer_size => 1, num_segments => 1);
RESET ROLE;
SELECT c.relname, pg_get_userbyid(c.relowner) AS owner FROM pg_class c
WHERE c.relnamespace = 'priv_bob'::regnamespace AND c.relkind IN ('r', 'p') ORDER BY 1;

-- Mallory plants look-alikes of everything hopper's statements use in a schema that Bob puts first,
-- even before pg_catalog. Each one raises an error if it is ever called.
SET ROLE hopper_priv_mallory;
CREATE FUNCTION priv_evil.trap_ii(int4, int4) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: =(int4, int4)'; END$$;
CREATE FUNCTION priv_evil.trap_il(int4, int8) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: =(int4, int8)'; END$$;
CREATE FUNCTION priv_evil.trap_tt(text, text) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: =(text, text)'; END$$;
CREATE FUNCTION priv_evil.trap_tid(tid, tid) RETURNS bool LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: =(tid, tid)'; END$$;
CREATE OPERATOR priv_evil.= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = priv_evil.trap_ii);
CREATE OPERATOR priv_evil.= (LEFTARG = int4, RIGHTARG = int8, FUNCTION = priv_evil.trap_il);
CREATE OPERATOR priv_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = priv_evil.trap_tt);
CREATE OPERATOR priv_evil.= (LEFTARG = tid, RIGHTARG = tid, FUNCTION = priv_evil.trap_tid);
CREATE FUNCTION priv_evil.unnest(int4[]) RETURNS SETOF int4 LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: unnest(int4[])'; END$$;
CREATE FUNCTION priv_evil.unnest(bytea[]) RETURNS SETOF bytea LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: unnest(bytea[])'; END$$;
CREATE FUNCTION priv_evil.unnest(text[]) RETURNS SETOF text LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: unnest(text[])'; END$$;
CREATE FUNCTION priv_evil.array_length(int4[], int4) RETURNS int4 LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: array_length'; END$$;
CREATE FUNCTION priv_evil.cardinality(float8[]) RETURNS int4 LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: cardinality'; END$$;
CREATE FUNCTION priv_evil.now() RETURNS timestamptz LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: now()'; END$$;
CREATE FUNCTION priv_evil.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: clock_timestamp()'; END$$;
CREATE FUNCTION priv_evil.count_trap(int8, anyelement) RETURNS int8 LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: count'; END$$;
CREATE AGGREGATE priv_evil.count(anyelement) (SFUNC = priv_evil.count_trap, STYPE = int8);
CREATE FUNCTION priv_evil.max_trap(int4, int4) RETURNS int4 LANGUAGE plpgsql AS $$BEGIN RAISE EXCEPTION 'hijacked: max'; END$$;
CREATE AGGREGATE priv_evil.max(int4) (SFUNC = priv_evil.max_trap, STYPE = int4);
CREATE AGGREGATE priv_evil.min(int4) (SFUNC = priv_evil.max_trap, STYPE = int4);
-- Tables named like catalogs and like hopper's working tables.
CREATE TABLE priv_evil.pg_class (oid oid, relname name);
CREATE TABLE priv_evil.pg_namespace (oid oid, nspname name);
GRANT USAGE ON SCHEMA priv_evil TO PUBLIC;
RESET ROLE;

SET ROLE hopper_priv_bob;
SET search_path = priv_evil, pg_catalog, priv_bob, public;
-- The traps work: an unqualified call in Bob's own SQL is caught.
SELECT 1 = 1;
-- hopper's functions are not caught.
SELECT hopper.preprocess('priv_bob.src', 'priv_bob.packed2', 'y', 'x', buffer_size => 1, num_segments => 2, scale => 'standardize');
SELECT hopper.preprocess_validation('priv_bob.src', 'priv_bob.packed2_valid', 'y', 'x', 'priv_bob.packed2');
CALL hopper.fit('priv_alice.packed', 'priv_bob.model2', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 2);
SET hopper.debug_hops = on;
CALL hopper.fit('priv_alice.packed', 'priv_bob.model3', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 1, warm_start => false);
RESET hopper.debug_hops;
CALL hopper.fit('priv_alice.packed', 'priv_bob.model2', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 1, warm_start => true);
SELECT hopper.load_model_arch('priv_bob.archs', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('priv_bob.archs', 'priv_bob.configs', ARRAY[1],
    ARRAY[$$optimizer='SGD(lr=0.1)'$$, $$optimizer='Adam(lr=0.01)'$$], ARRAY['batch_size=10', 'batch_size=20', 'batch_size=30']);
CALL hopper.fit_multiple('priv_alice.packed', 'priv_bob.multi', 'priv_bob.configs', 2, metrics_compute_frequency => 1);
SELECT mst_key, loss > 0 AS has_loss FROM hopper.evaluate('priv_bob.multi', 'priv_alice.packed') ORDER BY 1;
SELECT hopper.predict('priv_bob.model2', 'priv_bob.src', 'id', 'x', 'priv_bob.pred', 'prob');
SELECT id, estimated_y FROM priv_bob.pred ORDER BY id;
SELECT pg_catalog.array_length(hopper.model_forward(model_state, ARRAY[1, 2]::float8[]), 1) AS outputs,
       hopper.model_state_info(model_state) OPERATOR(pg_catalog.->>) 'layers' AS layers
FROM priv_bob.model2;
-- The registry, checkpoints and parameter tables, under the same search path.
CALL hopper.fit('priv_alice.packed', 'priv_bob.model4', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 2, checkpoint_frequency => 1, name => 'bob_run');
SELECT hopper.create_model('bob_model') IS NOT NULL AS created;
SELECT hopper.register_model_version('bob_model', c.uuid) IS NOT NULL AS registered
FROM hopper.latest_checkpoints c WHERE c.run_name OPERATOR(pg_catalog.=) 'bob_run';
SELECT hopper.set_model_alias('bob_model', 'champion', 1);
SELECT hopper.materialize_model_version('bob_model', 'priv_bob.champion', alias => 'champion');
SELECT hopper.predict('priv_bob.champion', 'priv_bob.src', 'id', 'x', 'priv_bob.champion_pred');
SELECT pg_catalog.count(*) AS versions FROM hopper.list_model_versions('bob_model');
SELECT pg_catalog.count(*) OPERATOR(pg_catalog.>) 0 AS listed FROM hopper.list_checkpoints();
SELECT pg_catalog.count(*) >= 0 AS gc_ran FROM hopper.gc_checkpoints(dry_run => true);
SELECT hopper.delete_model_alias('bob_model', 'champion');
SELECT hopper.archive_model('bob_model');
SELECT hopper.ps_create('bob_ps', 4);
SELECT hopper.ps_save('bob_ps') IS NOT NULL AS saved;
SELECT hopper.ps_drop('bob_ps');
RESET search_path;
RESET ROLE;

-- One role other than a superuser holds at most hopper.ps_role_share (50%) of the parameter-table
-- pool, slots and memory, over all databases: one role filled all 32 slots and no other could create
-- a parameter table. Only a superuser may change the share.
CREATE FUNCTION pg_temp.sqlstate_of(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SET ROLE hopper_priv_bob;
SELECT count(hopper.ps_create('squat' || g, 1)) = current_setting('hopper.ps_max_tables')::int / 2 AS created_half
FROM generate_series(1, current_setting('hopper.ps_max_tables')::int / 2) g;
SELECT pg_temp.sqlstate_of($$SELECT hopper.ps_create('squat_more', 1)$$) AS one_more;
SELECT count(hopper.ps_drop('squat' || g)) > 0 AS dropped FROM generate_series(2, current_setting('hopper.ps_max_tables')::int / 2) g;
SELECT pg_temp.sqlstate_of(format($$SELECT hopper.ps_create('squat_big', %s)$$,
    (SELECT setting::bigint * 1024 * 1024 / 4 * 6 / 10 FROM pg_settings WHERE name = 'hopper.ps_memory_mb'))) AS most_of_the_memory;
SELECT pg_temp.sqlstate_of($$SET hopper.ps_role_share = 100$$) AS share_is_superuser_only;
RESET ROLE;
SET ROLE hopper_priv_alice;
SELECT hopper.ps_create('alice_ps', 4) IS NOT NULL AS others_still_create;
SELECT hopper.ps_drop('alice_ps');
RESET ROLE;
SELECT hopper.ps_drop('squat1');

-- A type a role creates can carry its casts (CREATE CAST needs only the type): Mallory's enum with
-- a cast to text, and a composite with one, in tables she shares. Neither runs as Bob when he packs,
-- trains on or scores them (a plain SELECT * runs neither); hopper refuses its own kind of table with
-- a column of such a type (42804). Her functions record who called them.
GRANT USAGE ON SCHEMA hopper TO hopper_priv_mallory;
SET ROLE hopper_priv_mallory;
CREATE TABLE priv_evil.witness (who name);
GRANT INSERT ON priv_evil.witness TO PUBLIC;
CREATE TYPE priv_evil.paint AS ENUM ('red', 'green', 'blue');
CREATE FUNCTION priv_evil.paint_text(p priv_evil.paint) RETURNS text LANGUAGE plpgsql AS $$
BEGIN INSERT INTO priv_evil.witness VALUES (current_user); RETURN 'cast ' || p::varchar; END $$;
CREATE CAST (priv_evil.paint AS text) WITH FUNCTION priv_evil.paint_text(priv_evil.paint);
CREATE TABLE priv_evil.cars AS SELECT g AS id, (ARRAY['red', 'green', 'blue'])[1 + g % 3]::priv_evil.paint AS paint,
  (g % 17)::float8 AS speed, CASE WHEN g % 17 > 8 THEN 'y' ELSE 'n' END AS fast FROM generate_series(1, 60) g;
CREATE TYPE priv_evil.wrapped AS (j text);
CREATE FUNCTION priv_evil.wrapped_text(r priv_evil.wrapped) RETURNS text LANGUAGE plpgsql AS $$
BEGIN INSERT INTO priv_evil.witness VALUES (current_user); RETURN r.j; END $$;
CREATE CAST (priv_evil.wrapped AS text) WITH FUNCTION priv_evil.wrapped_text(priv_evil.wrapped);
CREATE TABLE priv_evil.src AS SELECT g AS id, ARRAY[g % 7, g % 5]::float8[] AS x, (g % 2)::text AS y
FROM generate_series(1, 100) g;
SELECT hopper.preprocess('priv_evil.src', 'priv_evil.packed', 'y', 'x', num_segments => 1);
ALTER TABLE priv_evil.packed_summary ALTER COLUMN feature_recipe TYPE priv_evil.wrapped
  USING ROW(feature_recipe::text)::priv_evil.wrapped;
GRANT SELECT ON priv_evil.cars, priv_evil.packed, priv_evil.packed_summary TO hopper_priv_bob;
RESET ROLE;
SET ROLE hopper_priv_bob;
SET search_path = priv_bob, public;
SELECT hopper.preprocess('priv_evil.cars', 'priv_bob.cars_packed', 'fast', 'paint, speed', num_segments => 1);
SELECT feature_recipe -> 'columns' -> 0 -> 'categories' AS paint_categories FROM priv_bob.cars_packed_summary;
CALL hopper.fit('priv_bob.cars_packed', 'priv_bob.cars_model', '{"layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, '', 1);
SELECT hopper.predict('priv_bob.cars_model', 'priv_evil.cars', 'id', '*', 'priv_bob.cars_scored');
SELECT count(*) AS scored FROM priv_bob.cars_scored;
SELECT hopper.create_model('bob-cars') IS NOT NULL AS created;
SELECT hopper.register_model_version('bob-cars', (SELECT e.uuid FROM hopper.checkpoints_expanded e
  JOIN hopper.runs r USING (run_id) WHERE r.model_output_table = 'priv_bob.cars_model'
  ORDER BY e.checkpoint_id DESC LIMIT 1)) AS version;
SELECT count(hopper.predict_class('bob-cars', c)) AS scored_by_name FROM priv_evil.cars c;
CALL hopper.fit('priv_evil.packed', 'priv_bob.from_evil', '{"layers": [{"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)'$$, '', 1);
RESET search_path;
RESET ROLE;
SELECT count(*) AS mallory_ran_as_bob FROM priv_evil.witness WHERE who = 'hopper_priv_bob';

-- Clean up.
DROP SCHEMA priv_alice, priv_bob, priv_evil CASCADE;
DROP OWNED BY hopper_priv_alice, hopper_priv_bob, hopper_priv_mallory;
DROP ROLE hopper_priv_alice;
DROP ROLE hopper_priv_bob;
DROP ROLE hopper_priv_mallory;

\c :regress_db
DROP DATABASE hopper_privileges;
