-- Checkpoints and model registry: catalog contracts (tables, keys, indexes, row-level security,
-- dump configuration, volatility), index-only plans for the everyday queries, and SQLSTATEs.
BEGIN;
SELECT plan(73);
SET LOCAL client_min_messages = warning;

-- ---- catalog contracts ----
SELECT has_table('hopper', t, 'table ' || t) FROM unnest(ARRAY['tasks', 'run_records', 'trials', 'trial_metrics', 'checkpoints',
    'checkpoint_chunks', 'checkpoint_training', 'models', 'model_versions', 'model_aliases', 'output_tables']) t;
SELECT has_view('hopper', v, 'view ' || v) FROM unnest(ARRAY['runs', 'checkpoints_expanded', 'latest_checkpoints', 'best_checkpoints',
                                                             'model_versions_expanded', 'learning_curves']) v;
SELECT is((SELECT reloptions FROM pg_class WHERE oid = 'hopper.runs'::regclass), ARRAY['security_invoker=true'],
          'hopper.runs applies the caller''s row-level security');
SELECT fk_ok('hopper', 'model_versions', 'checkpoint_id', 'hopper', 'checkpoints', 'checkpoint_id');
SELECT fk_ok('hopper', 'model_versions', 'model_id', 'hopper', 'models', 'model_id');
SELECT fk_ok('hopper', 'checkpoints', 'task_id', 'hopper', 'tasks', 'task_id');
SELECT fk_ok('hopper', 'trials', 'trial_id', 'hopper', 'tasks', 'task_id');
SELECT col_is_unique('hopper', 'checkpoints', 'uuid', 'checkpoint uuids are unique');
SELECT col_is_unique('hopper', 'model_versions', ARRAY['model_id', 'version'], 'version numbers are unique per model');
SELECT col_is_pk('hopper', 'model_versions', 'version_id', 'version ids are unique across models');
SELECT has_index('hopper', 'checkpoints', 'checkpoints_task_steps_idx', 'index for the latest checkpoint of a configuration');
SELECT has_index('hopper', 'checkpoint_training', 'checkpoint_training_best_idx', 'index for the best checkpoint of a configuration');
SELECT has_index('hopper', 'models', 'models_name_key', 'case-insensitive unique model names');
SELECT is_empty($$SELECT attname FROM pg_attribute WHERE attrelid = 'hopper.checkpoints'::regclass AND atttypid = 'bytea'::regtype$$,
                'SELECT * FROM hopper.checkpoints reads no payload');
SELECT is((SELECT attstorage FROM pg_attribute WHERE attrelid = 'hopper.checkpoint_chunks'::regclass AND attname = 'data'), 'e',
          'chunks are stored uncompressed');
SELECT is_empty($$SELECT relname FROM pg_class WHERE relnamespace = 'hopper'::regnamespace
                  AND relname IN ('tasks', 'run_records', 'trials', 'trial_metrics', 'checkpoints', 'checkpoint_chunks',
                                  'checkpoint_training', 'models', 'model_versions', 'model_aliases', 'output_tables')
                  AND NOT relrowsecurity$$, 'row-level security on every registry table');
SELECT is((SELECT count(*)::int FROM pg_extension e, unnest(e.extconfig) c
           WHERE e.extname = 'hopper' AND c::regclass::text IN ('hopper.tasks', 'hopper.run_records', 'hopper.trials', 'hopper.trial_metrics',
                 'hopper.checkpoints', 'hopper.checkpoint_chunks', 'hopper.checkpoint_training', 'hopper.models',
                 'hopper.model_versions', 'hopper.model_aliases', 'hopper.output_tables')), 11, 'pg_dump keeps the rows of every registry table');
SELECT is((SELECT count(*)::int FROM pg_extension e, unnest(e.extconfig) c WHERE e.extname = 'hopper'
           AND c::regclass::text LIKE 'hopper.%_id_seq'), 6, 'pg_dump keeps the identity counters');
-- Adaptive searches (hopper.fit_automl): their tables are registry tables too.
SELECT has_table('hopper', t, 'table ' || t) FROM unnest(ARRAY['searches', 'search_rungs', 'trial_rungs']) t;
SELECT has_view('hopper', v, 'view ' || v) FROM unnest(ARRAY['search_brackets', 'search_trials', 'run_progress']) v;
SELECT is((SELECT count(*)::int FROM pg_class WHERE relnamespace = 'hopper'::regnamespace
           AND relname IN ('searches', 'search_rungs', 'trial_rungs') AND relrowsecurity
           AND EXISTS (SELECT 1 FROM pg_extension e, unnest(e.extconfig) c WHERE e.extname = 'hopper' AND c = pg_class.oid)
           AND (SELECT prokind FROM pg_proc WHERE oid = 'hopper.fit_automl'::regproc) = 'p'),
          3, 'search tables: row-level security, kept by pg_dump; fit_automl is a procedure');
SELECT has_trigger('hopper', 'model_versions', 'model_versions_before_insert', 'numbering trigger');
SELECT has_trigger('hopper', 'model_versions', 'model_versions_lock_checkpoint', 'checkpoint lock trigger');
-- Only a checkpoint's owner may UPDATE or row-lock it (SELECT ... FOR UPDATE/SHARE applies the UPDATE
-- policy): open to every role, one statement locked every role's checkpoints.
SELECT is((SELECT pg_get_expr(p.polqual, p.polrelid) || ' / ' || pg_get_expr(p.polwithcheck, p.polrelid)
           FROM pg_policy p WHERE p.polrelid = 'hopper.checkpoints'::regclass AND p.polcmd = 'w'),
          'hopper.may_modify(owner) / hopper.may_modify(owner)', 'checkpoints: UPDATE and row locks are the owner''s');
SELECT has_trigger('hopper', 'checkpoints', 'checkpoints_before_update', 'deletion guard trigger');
-- Whether a checkpoint is registered is read from hopper.model_versions, never from a counter: a
-- user's own trigger runs hopper's at depth 2, so a depth-guarded counter was anyone's to rewrite.
SELECT hasnt_column('hopper', 'checkpoints', 'version_count', 'no registration counter users could write');
SELECT is_empty($$SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'hopper'::regnamespace
                  AND p.prosrc LIKE '%pg_trigger_depth%' AND p.proname <> 'models_before_update'$$,
                'no guard trusts trigger depth (next_version: only its own model''s owner can write it)');
SELECT is((SELECT string_agg(proname || ':' || provolatile::text, ',' ORDER BY proname) FROM pg_proc
           WHERE pronamespace = 'hopper'::regnamespace AND proname IN ('checkpoint_state', 'list_checkpoints',
                 'list_model_versions', 'model_version_state', 'register_model_version', 'gc_checkpoints')),
          'checkpoint_state:s,gc_checkpoints:v,list_checkpoints:s,list_model_versions:s,model_version_state:s,register_model_version:v',
          'readers are STABLE, writers VOLATILE');
SELECT is_empty($$SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'hopper'::regnamespace
                  AND p.prorettype = 'trigger'::regtype
                  AND p.prolang <> (SELECT l.oid FROM pg_language l WHERE l.lanname = 'c')
                  AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false)$$,
                'trigger functions with an SQL or PL/pgSQL body run with a safe search_path (a C one resolves no name)');

-- ---- a small run ----
CREATE TABLE tap_reg_points AS
SELECT g AS id, ARRAY[(g % 2) * 4.0 + sin(g), (g % 2) * -4.0 + cos(g)]::float8[] AS x, (g % 2)::text AS label
FROM generate_series(1, 200) g;
SELECT hopper.preprocess('tap_reg_points', 'public.tap_reg_packed', 'label', 'x', buffer_size => 20, num_segments => 2);
CALL hopper.fit('tap_reg_packed', 'tap_reg_m', '{"input_dim": 2, "layers": [{"units": 4, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, 'batch_size=10', 3, name => 'tap_reg', searcher_metric => 'accuracy');
SELECT is((SELECT count(*)::int FROM hopper.checkpoints_expanded WHERE run_name = 'tap_reg'), 3, 'a checkpoint per iteration by default');
SELECT ok((SELECT bool_and(signed_searcher_value = -searcher_value AND searcher_value BETWEEN 0 AND 1)
           FROM hopper.checkpoints_expanded WHERE run_name = 'tap_reg'), 'accuracy ranks by its negation');
SELECT cmp_ok((SELECT abs(searcher_value - i.training_metrics_final) FROM hopper.latest_checkpoints, tap_reg_m_info i
               WHERE run_name = 'tap_reg'), '<', 1e-12::float8, 'the searcher value is the training accuracy of the _info table');

-- ---- the everyday queries are index scans ----
CREATE FUNCTION pg_temp.plan_of(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE 'EXPLAIN (COSTS OFF) ' || q;
END $$;
SET LOCAL enable_seqscan = off;
SELECT ok(EXISTS (SELECT 1 FROM pg_temp.plan_of('SELECT * FROM hopper.latest_checkpoints WHERE run_name = ''tap_reg''') l
                  WHERE l LIKE '%Index Scan Backward using checkpoints_task_steps_idx%'),
          'latest checkpoint per configuration: a backward index scan');
SELECT ok(EXISTS (SELECT 1 FROM pg_temp.plan_of('SELECT * FROM hopper.best_checkpoints WHERE run_name = ''tap_reg''') l
                  WHERE l LIKE '%Index Scan using checkpoint_training_best_idx%'),
          'best checkpoint per configuration: an index scan');
SELECT ok(NOT EXISTS (SELECT 1 FROM pg_temp.plan_of('SELECT * FROM hopper.checkpoints_expanded WHERE trial_id = 1 ORDER BY steps_completed DESC LIMIT 1') l
                      WHERE l LIKE '%Seq Scan%' OR l LIKE '%Sort%'),
          'the view filtered by configuration reads indexes in order');
RESET enable_seqscan;

-- ---- registration ----
SELECT lives_ok($$SELECT hopper.create_model('tap-model')$$, 'create a model');
SELECT is(hopper.register_model_version('tap-model', uuid), 1, 'first version is 1')
FROM hopper.checkpoints_expanded WHERE run_name = 'tap_reg' AND iteration = 1;
SELECT is(hopper.register_model_version('tap-model', uuid), 2, 'second version is 2')
FROM hopper.checkpoints_expanded WHERE run_name = 'tap_reg' AND iteration = 2;
SELECT lives_ok($$SELECT hopper.delete_model_version('tap-model', 2)$$, 'delete version 2');
SELECT is(hopper.register_model_version('tap-model', uuid), 3, 'numbers are not reused')
FROM hopper.checkpoints_expanded WHERE run_name = 'tap_reg' AND iteration = 3;
SELECT results_eq($$SELECT version FROM hopper.model_versions_expanded WHERE model_name = 'tap-model' ORDER BY version$$,
                  ARRAY[1, 3], 'versions of the model');
SELECT is(hopper.model_version_state('tap-model'), (SELECT model_state FROM tap_reg_m), 'the latest version is the trained model');

-- ---- SQLSTATEs ----
SELECT throws_ok($$SELECT hopper.create_model('tap-MODEL')$$, '42710', NULL, 'duplicate model name');
SELECT throws_ok($$SELECT hopper.create_model('bad name')$$, '22023', NULL, 'invalid model name');
SELECT throws_ok($$SELECT hopper.register_model_version('tap-nope', gen_random_uuid())$$, '42704', NULL, 'missing model');
SELECT throws_ok($$SELECT hopper.register_model_version('tap-model', gen_random_uuid())$$, '42704', NULL, 'missing checkpoint');
SELECT throws_ok($$SELECT hopper.register_model_version('tap-model', NULL)$$, '22004', NULL, 'NULL checkpoint');
SELECT throws_ok(format($$SELECT hopper.delete_checkpoints(ARRAY['%s'::uuid])$$, uuid), '55006', NULL, 'registered checkpoint')
FROM hopper.checkpoints_expanded WHERE run_name = 'tap_reg' AND iteration = 1;
SELECT lives_ok($$SELECT hopper.archive_model('tap-model')$$, 'archive');
SELECT throws_ok(format($$SELECT hopper.register_model_version('tap-model', '%s')$$, uuid), '55000', NULL, 'archived model')
FROM hopper.checkpoints_expanded WHERE run_name = 'tap_reg' AND iteration = 2;
SELECT throws_ok($$UPDATE hopper.models SET next_version = 1 WHERE name = 'tap-model'$$, '428C9', NULL, 'counter never goes down');
SELECT throws_ok($$SELECT hopper.list_checkpoints(order_by => 'nonsense.x')$$, '22023', NULL, 'bad sort key');
SELECT throws_ok($$SELECT hopper.gc_checkpoints(keep_latest_per_run => -1)$$, '22023', NULL, 'bad GC policy');
SELECT throws_ok($$SELECT hopper.checkpoint_state(gen_random_uuid())$$, '42704', NULL, 'missing checkpoint state');

SELECT * FROM finish();
ROLLBACK;
