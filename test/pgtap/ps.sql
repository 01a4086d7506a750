-- Parameter tables: the SQL interface (functions, volatility, parallel safety, comments, views,
-- checkpoint tables) and the operations' SQLSTATEs. Parameter tables live in shared memory, not in
-- the transaction: the ones created here are dropped explicitly before the ROLLBACK.
BEGIN;
-- Leftovers of an interrupted run (shared memory is not rolled back).
DO $$ BEGIN PERFORM hopper.ps_drop(name) FROM hopper.ps_tables WHERE name LIKE 'tap\_%'; END $$;
SELECT plan(63);

-- ---- interface ----
SELECT has_function('hopper', 'ps_create', ARRAY['text', 'bigint', 'integer', 'text', 'integer', 'integer', 'real']);
SELECT has_function('hopper', 'ps_create', ARRAY['text', 'int8range[]', 'integer', 'text', 'integer', 'integer', 'real']);
SELECT has_function('hopper', 'ps_drop', ARRAY['text', 'boolean']);
SELECT function_returns('hopper', 'ps_get', ARRAY['text', 'integer', 'bigint[]'], 'real[]');
SELECT function_returns('hopper', 'ps_add', ARRAY['text', 'integer', 'bigint[]', 'real[]'], 'void');
SELECT function_returns('hopper', 'ps_clock', ARRAY['text', 'integer'], 'bigint');
SELECT function_returns('hopper', 'ps_get_chunk', ARRAY['text', 'integer', 'bigint[]'], 'real[]');
SELECT function_returns('hopper', 'ps_add_chunk', ARRAY['text', 'integer', 'bigint[]', 'real[]'], 'void');
SELECT function_returns('hopper', 'ps_get_bytes', ARRAY['text', 'integer', 'bytea'], 'bytea');
SELECT function_returns('hopper', 'ps_add_bytes', ARRAY['text', 'integer', 'bytea', 'bytea'], 'void');
SELECT function_returns('hopper', 'ps_get_chunk_bytes', ARRAY['text', 'integer', 'bytea'], 'bytea');
SELECT function_returns('hopper', 'ps_add_chunk_bytes', ARRAY['text', 'integer', 'bytea', 'bytea'], 'void');
SELECT function_returns('hopper', 'ps_save', ARRAY['text', 'jsonb'], 'uuid');
SELECT function_returns('hopper', 'ps_restore', ARRAY['uuid', 'text'], 'text');
SELECT has_view('hopper', 'ps_tables', 'catalog of parameter tables');
SELECT has_view('hopper', 'ps_workers', 'workers and their clocks');
SELECT columns_are('hopper', 'ps_tables', ARRAY['name', 'num_keys', 'key_ranges', 'chunk_size', 'num_chunks',
    'consistency', 'staleness', 'num_workers', 'min_clock', 'max_clock', 'memory_bytes', 'owner', 'created_at',
    'get_calls', 'get_keys', 'add_calls', 'add_keys', 'clocks', 'waits', 'late_adds', 'part', 'range_map']);
SELECT columns_are('hopper', 'ps_workers', ARRAY['table_name', 'worker', 'clock', 'status', 'pid']);

-- Honest markings: everything that reads or changes tables, waits or binds workers is volatile and
-- parallel unsafe; the catalog readers are volatile and parallel safe.
SELECT is(
    (SELECT array_agg(DISTINCT provolatile::text || proparallel::text) FROM pg_proc
     WHERE pronamespace = 'hopper'::regnamespace
       AND proname IN ('ps_create', 'ps_drop', 'ps_get', 'ps_add', 'ps_clock', 'ps_get_chunk', 'ps_add_chunk',
                       'ps_get_bytes', 'ps_add_bytes', 'ps_get_chunk_bytes', 'ps_add_chunk_bytes',
                       'ps_save', 'ps_restore')),
    ARRAY['vu']::text[], 'operations are VOLATILE PARALLEL UNSAFE');
SELECT is(
    (SELECT array_agg(DISTINCT provolatile::text || proparallel::text) FROM pg_proc
     WHERE pronamespace = 'hopper'::regnamespace
       AND proname IN ('ps_tables_internal', 'ps_workers_internal', 'ps_memory')),
    ARRAY['vs']::text[], 'catalog readers are VOLATILE PARALLEL SAFE');
SELECT is(
    (SELECT count(*) FROM pg_proc p WHERE pronamespace = 'hopper'::regnamespace AND proname LIKE 'ps\_%'
       AND obj_description(p.oid, 'pg_proc') IS NULL),
    0::bigint, 'every ps_ function has a comment');
SELECT is(
    (SELECT count(*) FROM pg_class c WHERE relnamespace = 'hopper'::regnamespace AND relname LIKE 'ps\_%'
       AND relkind IN ('r', 'v') AND obj_description(c.oid, 'pg_class') IS NULL),
    0::bigint, 'every ps_ table and view has a comment');

-- ---- operations ----
SELECT lives_ok($$SELECT hopper.ps_create('tap_bsp', 6, chunk_size => 3, num_workers => 2)$$, 'create BSP');
SELECT lives_ok($$SELECT hopper.ps_create('tap_ssp', 6, consistency => 'ssp', staleness => 0, num_workers => 1)$$,
                'create SSP with staleness 0');
SELECT lives_ok($$SELECT hopper.ps_create('tap_asp', ARRAY[int8range(10, 13)], consistency => 'asp')$$,
                'create ASP over a key range');
SELECT results_eq($$SELECT name, consistency, num_keys FROM hopper.ps_tables WHERE name LIKE 'tap\_%' ORDER BY name$$,
                  $$VALUES ('tap_asp'::text, 'asp'::text, 3::bigint), ('tap_bsp', 'bsp', 6), ('tap_ssp', 'ssp', 6)$$,
                  'the catalog lists the tables');
SELECT is(hopper.ps_get('tap_bsp', 0, '{0,5}'), '{0,0}'::real[], 'values start at init_value');
SELECT lives_ok($$SELECT hopper.ps_add_chunk('tap_bsp', 0, '{1}', '{1,2,3}')$$, 'add a chunk');
SELECT lives_ok($$SELECT hopper.ps_add('tap_bsp', 1, '{0}', '{4}')$$, 'add keys');
SELECT is(hopper.ps_get('tap_bsp', 1, '{0,3,4,5}'), '{0,0,0,0}'::real[], 'BSP Adds are invisible within the iteration');
SELECT is(hopper.ps_clock('tap_bsp', 0), 1::bigint, 'worker 0 clocks');
SELECT is(hopper.ps_get('tap_bsp', 1, '{0,3}'), '{0,0}'::real[], 'still invisible until the last worker clocks');
SELECT is(hopper.ps_clock('tap_bsp', 1), 1::bigint, 'worker 1 clocks');
SELECT is(hopper.ps_get_chunk('tap_bsp', 0, '{0,1}'), '{4,0,0,1,2,3}'::real[], 'the iteration''s Adds appear together');
SELECT is((SELECT min_clock FROM hopper.ps_tables WHERE name = 'tap_bsp'), 1::bigint, 'min_clock advanced');
SELECT results_eq($$SELECT worker, clock, status FROM hopper.ps_workers WHERE table_name = 'tap_bsp' ORDER BY worker$$,
                  $$VALUES (0, 1::bigint, 'active'::text), (1, 1::bigint, 'active'::text)$$, 'workers are bound');
SELECT lives_ok($$SELECT hopper.ps_add('tap_ssp', 0, '{2}', '{1.5}')$$, 'SSP add');
SELECT is(hopper.ps_get('tap_ssp', 0, '{2}'), '{1.5}'::real[], 'SSP Adds are visible at once');
SELECT is(hopper.ps_get('tap_asp', 0, '{10,12}'), '{0,0}'::real[], 'ranged keys');

-- ---- SQLSTATEs ----
SELECT throws_ok($$SELECT hopper.ps_get('tap_none', 0, '{1}')$$, '42704', 'parameter table "tap_none" does not exist',
                 'unknown table');
SELECT throws_ok($$SELECT hopper.ps_add('tap_none', 0, '{1}', '{1}')$$, '42704', NULL, 'unknown table (add)');
SELECT throws_ok($$SELECT hopper.ps_clock('tap_none', 0)$$, '42704', NULL, 'unknown table (clock)');
SELECT throws_ok($$SELECT hopper.ps_drop('tap_none')$$, '42704', NULL, 'unknown table (drop)');
SELECT throws_ok($$SELECT hopper.ps_get('tap_bsp', 0, '{2,1}')$$, '22023',
                 'keys must be sorted in ascending order without duplicates', 'unsorted keys');
SELECT throws_ok($$SELECT hopper.ps_get('tap_bsp', 0, '{1,1}')$$, '22023', NULL, 'duplicate keys');
SELECT throws_ok($$SELECT hopper.ps_get('tap_bsp', 0, '{6}')$$, '22023',
                 'key 6 is out of range for parameter table "tap_bsp"', 'key out of range');
SELECT throws_ok($$SELECT hopper.ps_get('tap_asp', 0, '{9}')$$, '22023', NULL, 'key below the range');
SELECT throws_ok($$SELECT hopper.ps_get('tap_bsp', 2, '{1}')$$, '22023',
                 'worker 2 does not exist in parameter table "tap_bsp"', 'wrong worker id');
SELECT throws_ok($$SELECT hopper.ps_clock('tap_bsp', -1)$$, '22023', NULL, 'negative worker id');
SELECT throws_ok($$SELECT hopper.ps_get_chunk('tap_bsp', 0, '{2}')$$, '22023', 'chunk 2 is out of range for parameter table "tap_bsp"',
                 'chunk out of range');
SELECT throws_ok($$SELECT hopper.ps_add('tap_bsp', 0, '{1}', '{1,2}')$$, '22023', 'deltas must have one value per key',
                 'delta count');
SELECT throws_ok($$SELECT hopper.ps_add('tap_bsp', 0, '{1}', '{NaN}')$$, '22023', NULL, 'NaN delta');
SELECT throws_ok($$SELECT hopper.ps_get('tap_bsp', 0, NULL)$$, '22004', NULL, 'NULL keys');
SELECT throws_ok($$SELECT hopper.ps_create('tap_bsp', 3)$$, '42710', 'parameter table "tap_bsp" already exists',
                 'duplicate name');
SELECT throws_ok($$SELECT hopper.ps_create('tap_x', 3, consistency => 'ssp')$$, '22023', NULL, 'SSP needs a staleness');
SELECT throws_ok($$SELECT hopper.ps_create('tap_x', 100000000000)$$, '54000', NULL, 'too large for shared memory');
SELECT throws_ok($$SELECT hopper.ps_restore('00000000-0000-0000-0000-000000000001')$$, '42704', NULL,
                 'unknown checkpoint');
-- Save and restore through the registry's generic checkpoints.
CREATE TEMP TABLE tap_saved AS SELECT hopper.ps_save('tap_bsp', '{"by": "pgtap"}') AS id;
SELECT results_eq($$SELECT c.format, c.state, c.steps_completed, c.metadata->'by' FROM hopper.checkpoints c
                    JOIN tap_saved s ON c.uuid = s.id$$,
                  $$VALUES ('hopper_ps_v1'::text, 'COMPLETED'::text, 1::bigint, '"pgtap"'::jsonb)$$,
                  'ps_save writes a COMPLETED hopper_ps_v1 checkpoint');
SELECT is((SELECT hopper.ps_restore(id, 'tap_copy') FROM tap_saved), 'tap_copy', 'ps_restore under a new name');
SELECT is(hopper.ps_get_chunk('tap_copy', 0, '{0,1}'), '{4,0,0,1,2,3}'::real[], 'restored values');
-- (A wait cancelled by statement_timeout raises 57014, which pgTAP's throws_ok cannot catch: that is
-- tested in test/regress/sql/ps.sql and test/scripts/ps_sessions.sh.)
SELECT lives_ok($$SELECT hopper.ps_clock('tap_ssp', 0)$$, 'SSP(0) worker clocks');
SELECT is(hopper.ps_get('tap_ssp', 0, '{2}'), '{1.5}'::real[], 'a single worker never waits for others');

SELECT is((SELECT count(*) FROM hopper.ps_tables, hopper.ps_drop(name) WHERE name LIKE 'tap\_%'), 4::bigint, 'drop');

SELECT * FROM finish();
ROLLBACK;
