-- Nothing hopper or hopper_madlib ships resolves through the caller's search_path (issue 25).
-- 1. The catalog: every SQL and PL/pgSQL function and procedure of schemas hopper and madlib either
--    runs with search_path = pg_catalog, pg_temp or has a SQL-standard body (BEGIN ATOMIC: parsed,
--    so bound to its operators and functions, when the extension is created). A new body that is
--    neither fails here.
-- 2. The attack: an unprivileged role plants look-alike operators and functions in a schema on a
--    superuser's search_path (first, ahead of pg_catalog) that record every call and try to make
--    the role SUPERUSER; the superuser then calls every hopper_madlib function and the hopper
--    functions with SQL bodies, and nothing planted runs. (Before the fix the planted ||(varchar,
--    text) ran inside madlib_keras_evaluate and the role became a superuser.)
-- In a database of its own: roles, plants and registry rows touch no other test.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS hopper_search_path;
CREATE DATABASE hopper_search_path;
\c hopper_search_path
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE EXTENSION hopper_madlib;

-- ---- 1. the catalog ----
SELECT p.oid::regprocedure AS resolves_through_callers_search_path
FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
WHERE p.pronamespace IN ('hopper'::regnamespace, 'madlib'::regnamespace)
  AND l.lanname IN ('sql', 'plpgsql')
  AND p.prosqlbody IS NULL
  AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false)
ORDER BY p.oid::regprocedure::text;
-- What the check covers (it cannot pass by finding nothing; counts left out so that new functions
-- need no change here).
SELECT p.pronamespace::regnamespace AS schema, p.prosqlbody IS NOT NULL AS sql_standard_body,
       p.proconfig IS NOT NULL AS pinned, count(*) > 0 AS checked
FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
WHERE p.pronamespace IN ('hopper'::regnamespace, 'madlib'::regnamespace) AND l.lanname IN ('sql', 'plpgsql')
GROUP BY 1, 2, 3 ORDER BY p.pronamespace::regnamespace::text, 2, 3;
-- Every user-facing madlib function is a SQL-standard body (it resolves the caller's table names).
SELECT p.proname AS madlib_function_not_sql_standard FROM pg_proc p
WHERE p.pronamespace = 'madlib'::regnamespace AND p.proname NOT LIKE '\_\_%' AND p.prosqlbody IS NULL;

-- ---- 2. the attack ----
DROP ROLE IF EXISTS hopper_sp_mallory;
CREATE ROLE hopper_sp_mallory;
CREATE SCHEMA sp_evil AUTHORIZATION hopper_sp_mallory;
GRANT USAGE ON SCHEMA sp_evil TO PUBLIC;
SET ROLE hopper_sp_mallory;
CREATE TABLE sp_evil.calls (what text, context text);
GRANT INSERT ON sp_evil.calls TO PUBLIC;
-- Runs as whoever calls a plant: records the call (and where it came from) and tries to make
-- mallory a superuser.
CREATE FUNCTION sp_evil.caught(what text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    context text;
BEGIN
    GET DIAGNOSTICS context = PG_CONTEXT;
    INSERT INTO sp_evil.calls VALUES (what, context);
    BEGIN
        ALTER ROLE hopper_sp_mallory SUPERUSER;
    EXCEPTION WHEN insufficient_privilege THEN NULL;
    END;
END $$;
-- Plants that do their job as well (so a run goes on and every call gets recorded).
CREATE FUNCTION sp_evil.cat_vt(a varchar, b text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('||(varchar, text)'); RETURN pg_catalog.textcat(a, b); END $$;
CREATE OPERATOR sp_evil.|| (LEFTARG = varchar, RIGHTARG = text, FUNCTION = sp_evil.cat_vt);
CREATE FUNCTION sp_evil.cat_tv(a text, b varchar) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('||(text, varchar)'); RETURN pg_catalog.textcat(a, b); END $$;
CREATE OPERATOR sp_evil.|| (LEFTARG = text, RIGHTARG = varchar, FUNCTION = sp_evil.cat_tv);
CREATE FUNCTION sp_evil.cat_tt(a text, b text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('||(text, text)'); RETURN pg_catalog.textcat(a, b); END $$;
CREATE OPERATOR sp_evil.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = sp_evil.cat_tt);
CREATE FUNCTION sp_evil.cat_jj(a jsonb, b jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('||(jsonb, jsonb)'); RETURN pg_catalog.jsonb_concat(a, b); END $$;
CREATE OPERATOR sp_evil.|| (LEFTARG = jsonb, RIGHTARG = jsonb, FUNCTION = sp_evil.cat_jj);
CREATE FUNCTION sp_evil.eq_tt(a text, b text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('=(text, text)'); RETURN pg_catalog.texteq(a, b); END $$;
CREATE OPERATOR sp_evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = sp_evil.eq_tt);
CREATE FUNCTION sp_evil.eq_vt(a varchar, b text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('=(varchar, text)'); RETURN pg_catalog.texteq(a, b); END $$;
CREATE OPERATOR sp_evil.= (LEFTARG = varchar, RIGHTARG = text, FUNCTION = sp_evil.eq_vt);
CREATE FUNCTION sp_evil.ne_tt(a text, b text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('<>(text, text)'); RETURN pg_catalog.textne(a, b); END $$;
CREATE OPERATOR sp_evil.<> (LEFTARG = text, RIGHTARG = text, FUNCTION = sp_evil.ne_tt);
CREATE FUNCTION sp_evil.eq_ii(a int4, b int4) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('=(int4, int4)'); RETURN pg_catalog.int4eq(a, b); END $$;
CREATE OPERATOR sp_evil.= (LEFTARG = int4, RIGHTARG = int4, FUNCTION = sp_evil.eq_ii);
CREATE FUNCTION sp_evil.eq_nn(a name, b name) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('=(name, name)'); RETURN pg_catalog.nameeq(a, b); END $$;
CREATE OPERATOR sp_evil.= (LEFTARG = name, RIGHTARG = name, FUNCTION = sp_evil.eq_nn);
CREATE FUNCTION sp_evil.eq_oo(a oid, b oid) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('=(oid, oid)'); RETURN pg_catalog.oideq(a, b); END $$;
CREATE OPERATOR sp_evil.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = sp_evil.eq_oo);
CREATE FUNCTION sp_evil.get_ji(a jsonb, b int4) RETURNS jsonb LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('->(jsonb, int4)'); RETURN pg_catalog.jsonb_array_element(a, b); END $$;
CREATE OPERATOR sp_evil.-> (LEFTARG = jsonb, RIGHTARG = int4, FUNCTION = sp_evil.get_ji);
CREATE FUNCTION sp_evil.gettext_ji(a jsonb, b int4) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('->>(jsonb, int4)'); RETURN pg_catalog.jsonb_array_element_text(a, b); END $$;
CREATE OPERATOR sp_evil.->> (LEFTARG = jsonb, RIGHTARG = int4, FUNCTION = sp_evil.gettext_ji);
CREATE FUNCTION sp_evil.gettext_jt(a jsonb, b text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('->>(jsonb, text)'); RETURN pg_catalog.jsonb_object_field_text(a, b); END $$;
CREATE OPERATOR sp_evil.->> (LEFTARG = jsonb, RIGHTARG = text, FUNCTION = sp_evil.gettext_jt);
CREATE FUNCTION sp_evil.lower(a varchar) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('lower(varchar)'); RETURN pg_catalog.lower(a::text); END $$;
CREATE FUNCTION sp_evil.lower(a text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('lower(text)'); RETURN pg_catalog.lower(a); END $$;
CREATE FUNCTION sp_evil.btrim(a varchar) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('btrim(varchar)'); RETURN pg_catalog.btrim(a::text); END $$;
CREATE FUNCTION sp_evil.btrim(a text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('btrim(text)'); RETURN pg_catalog.btrim(a); END $$;
CREATE FUNCTION sp_evil.format(f text, a regclass) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('format(text, regclass)'); RETURN pg_catalog.format(f, a); END $$;
CREATE FUNCTION sp_evil.format(f text, a text, b text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('format(text, text, text)'); RETURN pg_catalog.format(f, a, b); END $$;
CREATE FUNCTION sp_evil.quote_ident(a text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('quote_ident(text)'); RETURN pg_catalog.quote_ident(a); END $$;
CREATE FUNCTION sp_evil.parse_ident(a text) RETURNS text[] LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('parse_ident(text)'); RETURN pg_catalog.parse_ident(a); END $$;
CREATE FUNCTION sp_evil.to_regclass(a text) RETURNS regclass LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('to_regclass(text)'); RETURN pg_catalog.to_regclass(a); END $$;
CREATE FUNCTION sp_evil.cardinality(a text[]) RETURNS int4 LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('cardinality(text[])'); RETURN pg_catalog.cardinality(a); END $$;
CREATE FUNCTION sp_evil.array_length(a int4[], d int4) RETURNS int4 LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('array_length(int4[], int4)'); RETURN pg_catalog.array_length(a, d); END $$;
CREATE FUNCTION sp_evil.jsonb_typeof(a jsonb) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('jsonb_typeof(jsonb)'); RETURN pg_catalog.jsonb_typeof(a); END $$;
CREATE FUNCTION sp_evil.jsonb_array_length(a jsonb) RETURNS int4 LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('jsonb_array_length(jsonb)'); RETURN pg_catalog.jsonb_array_length(a); END $$;
CREATE FUNCTION sp_evil.split_part(a text, b text, n int4) RETURNS text LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('split_part(text, text, int4)'); RETURN pg_catalog.split_part(a, b, n); END $$;
CREATE FUNCTION sp_evil.current_schema() RETURNS name LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('current_schema()'); RETURN pg_catalog.current_schema(); END $$;
CREATE FUNCTION sp_evil.now() RETURNS timestamptz LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('now()'); RETURN pg_catalog.now(); END $$;
CREATE FUNCTION sp_evil.pg_trigger_depth() RETURNS int4 LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('pg_trigger_depth()'); RETURN pg_catalog.pg_trigger_depth(); END $$;
CREATE FUNCTION sp_evil.pg_has_role(r oid, m text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught('pg_has_role(oid, text)'); RETURN pg_catalog.pg_has_role(r, m); END $$;
-- Type names that are not SQL keywords are looked up too: domains of the same names whose check
-- runs mallory's code on every cast to them.
CREATE FUNCTION sp_evil.caught_b(what text) RETURNS bool LANGUAGE plpgsql AS $$
BEGIN PERFORM sp_evil.caught(what); RETURN true; END $$;
CREATE DOMAIN sp_evil.text AS pg_catalog.text CHECK (sp_evil.caught_b('type text'));
CREATE DOMAIN sp_evil.jsonb AS pg_catalog.jsonb CHECK (sp_evil.caught_b('type jsonb'));
CREATE DOMAIN sp_evil.bytea AS pg_catalog.bytea CHECK (sp_evil.caught_b('type bytea'));
CREATE DOMAIN sp_evil.uuid AS pg_catalog.uuid CHECK (sp_evil.caught_b('type uuid'));
CREATE DOMAIN sp_evil.float8 AS pg_catalog.float8 CHECK (sp_evil.caught_b('type float8'));
CREATE DOMAIN sp_evil.int4 AS pg_catalog.int4 CHECK (sp_evil.caught_b('type int4'));
CREATE DOMAIN sp_evil.int8 AS pg_catalog.int8 CHECK (sp_evil.caught_b('type int8'));
CREATE DOMAIN sp_evil.regclass AS pg_catalog.regclass CHECK (sp_evil.caught_b('type regclass'));
RESET ROLE;

-- The superuser's data, made before the plants are on its search_path.
CREATE SCHEMA sp_admin;
SET search_path = sp_admin, public;
CREATE TABLE sp_data AS
SELECT g AS id, ARRAY[g % 3, (g % 3) * 2 + g % 2, g % 5, 1]::float8[] AS x, ('c' || g % 3)::varchar AS y
FROM generate_series(1, 90) g;
\set arch '{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d1", "activation": "softmax", "units": 3, "batch_input_shape": [null, 4], "use_bias": true}}], "backend": "tensorflow"}'
\set compile '$$ loss=''categorical_crossentropy'', optimizer=''SGD(lr=0.1)'', metrics=[''accuracy''] $$'

-- The plants work: statements of the superuser's own that use || on varchar, or cast to jsonb with
-- the plants ahead of pg_catalog, run mallory's code, which makes mallory a superuser (undone).
SET search_path = sp_admin, sp_evil, public;
SELECT 'a'::varchar || 'b' AS control;
SET search_path = sp_admin, sp_evil, pg_catalog, public;
SELECT '{}'::jsonb AS control;
RESET search_path;
SELECT what AS planted_object_ran FROM sp_evil.calls ORDER BY 1;
SELECT rolsuper AS mallory_is_superuser FROM pg_roles WHERE rolname = 'hopper_sp_mallory';
ALTER ROLE hopper_sp_mallory NOSUPERUSER;
DELETE FROM sp_evil.calls;

-- The plants on the path even ahead of pg_catalog (only the schema, pg_catalog implicitly first,
-- as the issue's administrator had it, is tried too, below).
SET search_path = sp_admin, sp_evil, pg_catalog, public;
SELECT madlib.training_preprocessor_dl('sp_data', 'sp_packed', 'y', 'x', 30);
SELECT madlib.validation_preprocessor_dl('sp_data', 'sp_packed_v', 'y', 'x', 'sp_packed', 30);
SELECT madlib.load_keras_model('sp_arch', :'arch'::json, NULL, 'one', 'a softmax');
SELECT madlib.load_keras_model('sp_arch', :'arch'::json, NULL, 'two', 'deleted below');
SELECT madlib.delete_keras_model('sp_arch', 2);
SELECT madlib.madlib_keras_fit('sp_packed', 'sp_model', 'sp_arch', 1, :compile, 'batch_size=10', 2, FALSE, 'sp_packed_v');
SELECT madlib.load_model_selection_table('sp_arch', 'sp_mst', ARRAY[1], ARRAY[:compile], ARRAY['batch_size=10']);
SELECT madlib.generate_model_configs('sp_arch', 'sp_mst_random', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.01, 0.1, 'log']}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [10], 'epochs': [1]}$$, 'random', 2, 7);
SELECT madlib.madlib_keras_fit_multiple_model('sp_packed', 'sp_multi', 'sp_mst', 1, FALSE, 'sp_packed_v');
SELECT madlib.madlib_keras_automl('sp_packed', 'sp_automl', 'sp_arch', 'sp_automl_mst', ARRAY[1],
    $${'loss': ['categorical_crossentropy'], 'optimizer_params_list': [{'optimizer': ['SGD'], 'lr': [0.05, 0.1, 'linear']}], 'metrics': ['accuracy']}$$,
    $${'batch_size': [10]}$$, 'hyperband', 'R=2, eta=2', 3);
SELECT madlib.madlib_keras_evaluate('sp_model', 'sp_packed_v', 'sp_eval');
SELECT madlib.madlib_keras_predict('sp_model', 'sp_data', 'id', 'x', 'sp_pred');
SELECT madlib.madlib_keras_predict('sp_model', 'sp_data', 'id', 'x', 'sp_pred_top', 2);
SELECT madlib.madlib_keras_predict('sp_model', 'sp_data', 'id', 'x', 'sp_pred_likely', 0.5);
UPDATE sp_arch SET model_weights = (SELECT model_weights FROM sp_model) WHERE model_id OPERATOR(pg_catalog.=) 1;
SELECT madlib.madlib_keras_predict_byom('sp_arch', 1, 'sp_data', 'id', 'x', 'sp_pred_byom');
SELECT madlib.train_test_split('sp_data', 'sp_split', 0.5, NULL, 'y', 'id, x', NULL, TRUE);
SELECT madlib.train_test_split('sp_data', 'sp_split_one', 0.5);
SELECT madlib.hyperband_schedule('sp_schedule', 9);
SELECT madlib.gpu_configuration('sp_gpus');
-- hopper's own API (its C functions' statements qualify everything or run under search_path
-- pg_catalog, pg_temp), its SQL-bodied functions and triggers (registry rows, versions, the views'
-- policies). The test's own casts and comparisons name pg_catalog's: the plants would catch them.
\set spec '{"input_dim": 4, "layers": [{"units": 3, "activation": "softmax"}]}'
\set hcompile '$$optimizer=''SGD(lr=0.1)'', metrics=[''accuracy'']$$'
SELECT hopper.preprocess('sp_data', 'sp_h_packed', 'y', 'x', buffer_size => 30, scale => 'standardize');
CALL hopper.fit('sp_h_packed', 'sp_h_fit', :'spec', :hcompile, 'batch_size=10', 1, name => 'sp fit');
CALL hopper.fit('sp_h_packed', 'sp_h_fit', :'spec', :hcompile, 'batch_size=10', 1, warm_start => true);
CALL hopper.fit_data_parallel('sp_h_packed', 'sp_h_dp', :'spec', :hcompile, 'batch_size=10', 1, name => 'sp dp');
SELECT count(*) AS evaluated FROM hopper.evaluate('sp_h_fit', 'sp_h_packed');
SELECT hopper.predict('sp_h_fit', 'sp_data', 'id', 'x', 'sp_h_pred', 'prob');
SELECT hopper.argmax(hopper.model_forward(s.model_state, '{1,2,3,1}'::pg_catalog.float8[])) IS NOT NULL AS scored,
       hopper.model_state_info(s.model_state) IS NOT NULL AS info,
       pg_catalog.cardinality(hopper.model_weights(s.model_state)) AS weights
FROM sp_h_fit s;
SELECT (hopper.plan_combine(4000000, NULL, NULL, NULL)) IS NOT NULL AS planned;
SELECT (hopper.hierarchical_combine('sp_h_fit', 'model_average', '{model_state, mst_key}', dist_key_column => 'mst_key',
                                    topology_table => NULL, link_cost_table => NULL)).levels AS combine_levels;
SELECT hopper.create_task('IMPORT', 'sp import') AS task \gset
SELECT hopper.create_checkpoint((SELECT model_state FROM sp_h_fit), :task) AS ckpt \gset
SELECT hopper.create_checkpoint_reference('s3://bucket/sp.pt', 'torch', 10, 'md5:abc', :task) AS ref \gset
SELECT pg_catalog.length(hopper.checkpoint_state(:'ckpt')) > 0 AS loaded;
SELECT c.uuid AS fit_ckpt FROM hopper.latest_checkpoints c WHERE c.run_name OPERATOR(pg_catalog.=) 'sp fit' LIMIT 1 \gset
SELECT hopper.materialize_checkpoint(:'fit_ckpt', 'sp_h_materialized');
SELECT count(*) > 0 AS listed FROM hopper.list_checkpoints();
SELECT count(*) >= 0 AS collected FROM hopper.gc_checkpoints((SELECT r.run_id FROM hopper.runs r WHERE r.name OPERATOR(pg_catalog.=) 'sp fit'));
SELECT hopper.set_checkpoint_state(:'ref', 'ERROR');
SELECT hopper.delete_checkpoints(ARRAY[:'ref']::pg_catalog.uuid[]) >= 0 AS deleted;
SELECT hopper.end_task(:task);
SELECT hopper.mark_interrupted_runs();
SELECT hopper.create_model('sp-model');
SELECT hopper.register_model_version('sp-model', :'ckpt') AS version;
SELECT hopper.register_model_version('sp-model', :'fit_ckpt') AS version;
SELECT hopper.set_model_alias('sp-model', 'champion', 1);
SELECT pg_catalog.length(hopper.model_version_state('sp-model', alias => 'champion')) > 0 AS loaded;
SELECT hopper.materialize_model_version('sp-model', 'sp_h_version', 2);
SELECT count(*) AS versions FROM hopper.list_model_versions('sp-model');
SELECT hopper.delete_model_alias('sp-model', 'champion');
SELECT hopper.delete_model_version('sp-model', 1);
SELECT hopper.archive_model('sp-model');
SELECT hopper.unarchive_model('sp-model');
SELECT hopper.create_model('sp-model-2');
SELECT hopper.delete_model('sp-model-2');
SELECT pg_catalog.length(hopper.learning_curves_svg((SELECT r.run_id FROM hopper.runs r WHERE r.name OPERATOR(pg_catalog.=) 'sp fit'))) > 0 AS drawn;
SELECT hopper.sparkline('{1,3,2}'::pg_catalog.float8[]) IS NOT NULL AS sparkline;
SELECT count(*) > 0 AS runs_listed FROM hopper.runs;
SELECT count(*) >= 0 AS curves FROM hopper.learning_curves;
SELECT count(*) >= 0 AS progress FROM hopper.run_progress;
SELECT count(*) >= 0 AS trials FROM hopper.search_trials;
SELECT count(*) >= 0 AS brackets FROM hopper.search_brackets;
SELECT count(*) > 0 AS expanded FROM hopper.checkpoints_expanded;
SELECT count(*) >= 0 AS best FROM hopper.best_checkpoints;
SELECT count(*) > 0 AS versions_expanded FROM hopper.model_versions_expanded;
SELECT (hopper.buffer_cache_stats()).hits >= 0 AS cache_stats, hopper.version() IS NOT NULL AS version;
SELECT hopper.ps_create('sp_ps', 8, chunk_size => 4, num_workers => 1, init_value => 0.5);
SELECT hopper.ps_get('sp_ps', 0, '{0,1}');
SELECT hopper.ps_add('sp_ps', 0, '{0}', '{1}');
SELECT hopper.ps_get_chunk('sp_ps', 0, '{0}');
SELECT hopper.ps_add_chunk('sp_ps', 0, '{1}', '{1,1,1,1}');
SELECT pg_catalog.length(hopper.ps_get_bytes('sp_ps', 0, '\x0000000000000000')) AS got_bytes;
SELECT hopper.ps_add_bytes('sp_ps', 0, '\x0000000000000000', '\x0000803f');
SELECT pg_catalog.length(hopper.ps_get_chunk_bytes('sp_ps', 0, '\x0000000000000000')) AS got_chunk_bytes;
SELECT hopper.ps_add_chunk_bytes('sp_ps', 0, '\x0100000000000000', '\x0000803f0000803f0000803f0000803f');
SELECT hopper.ps_clock('sp_ps', 0);
SELECT count(*) > 0 AS ps_tables FROM hopper.ps_tables;
SELECT count(*) > 0 AS ps_workers FROM hopper.ps_workers;
SELECT (hopper.ps_memory()).memory_bytes > 0 AS ps_memory;
SELECT hopper.ps_save('sp_ps') AS ps_ckpt \gset
SELECT hopper.ps_drop('sp_ps');
SELECT hopper.ps_restore(:'ps_ckpt', 'sp_ps_restored');
SELECT hopper.ps_get('sp_ps_restored', 0, '{0}');
SELECT hopper.ps_drop('sp_ps_restored');
-- As in the issue: the plants' schema on the path, pg_catalog implicitly first.
SET search_path = sp_admin, sp_evil, public;
SELECT madlib.madlib_keras_evaluate('sp_model', 'sp_packed_v', 'sp_eval_2');
SELECT madlib.madlib_keras_fit('sp_packed', 'sp_model_2', 'sp_arch', 1, :compile, 'batch_size=10', 1);
RESET search_path;

-- Every output is there, and nothing planted ran.
SELECT c.relname AS output FROM pg_class c
WHERE c.relnamespace = 'sp_admin'::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
  AND c.relname <> 'sp_data' ORDER BY 1;
SELECT what AS planted_object_ran, context FROM sp_evil.calls;
SELECT rolsuper AS mallory_is_superuser FROM pg_roles WHERE rolname = 'hopper_sp_mallory';

\c :regress_db
SET client_min_messages = warning;
DROP DATABASE hopper_search_path;
DROP ROLE hopper_sp_mallory;
