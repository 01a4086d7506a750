-- Parameter tables: create, get, add, clock (BSP, SSP, ASP), chunks, key ranges, catalog,
-- save/restore and every error branch that one session can reach (the multi-session ones are in
-- test/scripts/ps_*.sh). One session may act as several workers. Parameter tables belong to the
-- database, not to a schema: this file drops any it finds first.
CREATE SCHEMA test_ps;
SET search_path = test_ps, public;
SET client_min_messages = warning;
SELECT hopper.ps_drop(name) FROM hopper.ps_tables;  -- leftovers of an earlier run
RESET client_min_messages;

-- Errors as "SQLSTATE: message (detail)".
CREATE FUNCTION pg_temp.err(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    detail text;
BEGIN
    EXECUTE stmt;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
    RETURN SQLSTATE || ': ' || SQLERRM || CASE WHEN detail <> '' THEN ' (' || detail || ')' ELSE '' END;
END $$;

-- ---- ASP: no waiting; Adds are visible at once --------------------------------------------------
SELECT hopper.ps_create('asp_t', 10, chunk_size => 4, consistency => 'asp', num_workers => 2, init_value => 0.5);
SELECT name, num_keys, key_ranges, chunk_size, num_chunks, consistency, staleness, num_workers, min_clock,
       max_clock, memory_bytes, owner = current_user::regrole AS owned, created_at <= now() AS created
FROM hopper.ps_tables;
SELECT hopper.ps_get('asp_t', 0, '{0,1,9}');
SELECT hopper.ps_add('asp_t', 0, '{0,9}', '{1,-2}');
SELECT hopper.ps_add('asp_t', 1, ARRAY[0, 5], ARRAY[0.25, 3]);  -- int[] and numeric[] arguments are cast
SELECT hopper.ps_get('asp_t', 1, '{0,5,9}');
SELECT hopper.ps_get('asp_t', 0, '{}');
SELECT hopper.ps_add('asp_t', 0, '{}', '{}');
-- Worker 0 runs far ahead of worker 1 and still reads at once.
SELECT hopper.ps_clock('asp_t', 0) FROM generate_series(1, 5);
SELECT hopper.ps_get('asp_t', 0, '{0}');
SELECT table_name, worker, clock, status, pid = pg_backend_pid() AS this_session FROM hopper.ps_workers ORDER BY 1, 2;
-- Adds are not transactional: a rollback does not undo them.
BEGIN;
SELECT hopper.ps_add('asp_t', 0, '{1}', '{100}');
ROLLBACK;
SELECT hopper.ps_get('asp_t', 0, '{1}');

-- ---- chunks -------------------------------------------------------------------------------------
-- Chunk 2 is the short last chunk (keys 8 and 9).
SELECT hopper.ps_get_chunk('asp_t', 0, '{0,2}');
SELECT hopper.ps_add_chunk('asp_t', 0, '{1,2}', '{1,1,1,1,10,10}');
SELECT hopper.ps_get_chunk('asp_t', 0, '{0,1,2}') = hopper.ps_get('asp_t', 0, ARRAY(SELECT generate_series(0, 9)::bigint)) AS same;
SELECT hopper.ps_get('asp_t', 0, '{4,7,8,9}');
SELECT get_calls, get_keys, add_calls, add_keys, clocks, waits FROM hopper.ps_tables WHERE name = 'asp_t';

-- ---- packed forms (bytea of little-endian int8 keys and float4 values) ----------------------------
-- Keys 0 and 9; values 1.75 (0x3fe00000) and 8.5 (0x41080000), little-endian.
SELECT encode(hopper.ps_get_bytes('asp_t', 0, '\x00000000000000000900000000000000'), 'hex') AS packed_get;
SELECT hopper.ps_add_bytes('asp_t', 0, '\x0300000000000000', '\x0000803f');  -- key 3 += 1.0
SELECT hopper.ps_get('asp_t', 0, '{3}');
SELECT hopper.ps_add_chunk_bytes('asp_t', 0, '\x0200000000000000', '\x0000803f0000803f');  -- chunk 2 += 1.0
SELECT encode(hopper.ps_get_chunk_bytes('asp_t', 0, '\x0200000000000000'), 'hex') AS packed_chunk;
SELECT hopper.ps_get('asp_t', 0, '{8,9}');
SELECT length(hopper.ps_get_bytes('asp_t', 0, '')) AS empty_get, hopper.ps_add_bytes('asp_t', 0, '', '') AS empty_add;
SELECT pg_temp.err($$SELECT hopper.ps_get_bytes('asp_t', 0, '\x0102')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add_bytes('asp_t', 0, '\x0000000000000000', '\x00')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add_bytes('asp_t', 0, '\x0000000000000000', '\x0000c07f')$$);  -- NaN
SELECT pg_temp.err($$SELECT hopper.ps_add_bytes('asp_t', 0, '\x0000000000000000', '')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get_bytes('asp_t', 0, '\x0a00000000000000')$$);  -- key 10
SELECT pg_temp.err($$SELECT hopper.ps_get_bytes('asp_t', 0, '\x01000000000000000000000000000000')$$);  -- 1, 0
SELECT pg_temp.err($$SELECT hopper.ps_get_chunk_bytes('asp_t', 0, NULL)$$);
SELECT pg_temp.err($$SELECT hopper.ps_add_chunk_bytes('asp_t', 0, '\x0000000000000000', '\x0000803f')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get_chunk_bytes('asp_t', 0, '\x0300000000000000')$$);  -- chunk 3

-- ---- BSP: an iteration's Adds become visible together when the last worker clocks --------------
SELECT hopper.ps_create('bsp_t', 4, num_workers => 2);
SELECT hopper.ps_add('bsp_t', 0, '{0,1}', '{1,1}');
SELECT hopper.ps_get('bsp_t', 1, '{0,1}');  -- iteration 0 sees nothing of iteration 0
SELECT hopper.ps_clock('bsp_t', 0);
-- Worker 0 is in iteration 1 and worker 1 still in 0: its Get and its Add wait (here until the
-- statement timeout cancels them).
SET statement_timeout = '200ms';
SELECT hopper.ps_get('bsp_t', 0, '{0}');
SELECT hopper.ps_add('bsp_t', 0, '{0}', '{5}');
RESET statement_timeout;
SELECT hopper.ps_add('bsp_t', 1, '{1,2}', '{2,2}');
SELECT hopper.ps_get('bsp_t', 1, '{0,1,2}');  -- still iteration 0 for worker 1
SELECT hopper.ps_clock('bsp_t', 1);
-- Both in iteration 1: exactly the sum of iteration 0's Adds (the cancelled Add never happened).
SELECT hopper.ps_get('bsp_t', 0, '{0,1,2,3}'), hopper.ps_get('bsp_t', 1, '{0,1,2,3}');
SELECT min_clock, max_clock, waits FROM hopper.ps_tables WHERE name = 'bsp_t';

-- ---- SSP(1): a worker may be one clock ahead of the slowest; Adds are visible at once -----------
SELECT hopper.ps_create('ssp_t', 3, consistency => 'SSP', staleness => 1, num_workers => 2);
SELECT hopper.ps_add('ssp_t', 1, '{2}', '{7}');
SELECT hopper.ps_clock('ssp_t', 0);
SELECT hopper.ps_get('ssp_t', 0, '{2}');  -- one ahead: allowed, and sees worker 1's Add
SELECT hopper.ps_clock('ssp_t', 0);
SET statement_timeout = '200ms';
SELECT hopper.ps_get('ssp_t', 0, '{2}');  -- two ahead: waits
RESET statement_timeout;
SELECT hopper.ps_add('ssp_t', 0, '{0}', '{1}');  -- Adds never wait under SSP
SELECT hopper.ps_clock('ssp_t', 1);
SELECT hopper.ps_get('ssp_t', 0, '{0,1,2}');

-- ---- key ranges ---------------------------------------------------------------------------------
SELECT hopper.ps_create('ranged', ARRAY[int8range(100, 104), int8range(-3, 0), int8range(104, 106)],
                        chunk_size => 4, consistency => 'asp');
SELECT num_keys, key_ranges, num_chunks FROM hopper.ps_tables WHERE name = 'ranged';
SELECT hopper.ps_add('ranged', 0, '{-3,-1,100,105}', '{1,2,3,4}');
SELECT hopper.ps_get('ranged', 0, '{-3,-2,-1,100,101,104,105}');
-- Chunk -1 = keys -3..-1; chunk 25 = 100..103; chunk 26 = 104, 105.
SELECT hopper.ps_get_chunk('ranged', 0, '{-1,25,26}');
SELECT pg_temp.err($$SELECT hopper.ps_get('ranged', 0, '{0}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get('ranged', 0, '{-1,50}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get_chunk('ranged', 0, '{0}')$$);

-- ---- save and restore: generic checkpoints of the registry (hopper.checkpoints) -----------------
CREATE TEMP TABLE saved AS SELECT hopper.ps_save('bsp_t', '{"note": "after iteration 0"}') AS id;
SELECT c.state, c.steps_completed, c.format, c.storage, c.size_bytes, c.task_id, c.metadata, c.resources,
       c.owner = current_user AS mine, c.checksum ~ '^sha256:[0-9a-f]{64}$' AS sha256
FROM hopper.checkpoints c JOIN saved ON c.uuid = saved.id;
SELECT count(*) AS chunks FROM hopper.checkpoint_chunks k JOIN hopper.checkpoints c USING (checkpoint_id)
JOIN saved ON c.uuid = saved.id;
-- Pending Adds are saved too: both workers add in iteration 1 before the save.
SELECT hopper.ps_add('bsp_t', 0, '{3}', '{4}'), hopper.ps_add('bsp_t', 1, '{3}', '{4}');
CREATE TEMP TABLE saved2 AS SELECT hopper.ps_save('bsp_t') AS id;
SELECT hopper.ps_drop('bsp_t');
SELECT hopper.ps_restore(id) FROM saved2;
SELECT table_name, worker, clock, status FROM hopper.ps_workers WHERE table_name = 'bsp_t' ORDER BY worker;
SELECT hopper.ps_get('bsp_t', 0, '{0,1,2,3}');
SELECT hopper.ps_clock('bsp_t', 0), hopper.ps_clock('bsp_t', 1);
SELECT hopper.ps_get('bsp_t', 0, '{0,1,2,3}');  -- the restored pending Adds are folded in
-- The first checkpoint under another name.
SELECT hopper.ps_restore(id, 'bsp_copy') FROM saved;
SELECT name, consistency, num_workers, min_clock FROM hopper.ps_tables WHERE name = 'bsp_copy';
SELECT hopper.ps_get('bsp_copy', 1, '{0,1,2,3}');
SELECT pg_temp.err(format('SELECT hopper.ps_restore(%L)', id)) FROM saved;  -- bsp_t exists
-- A checkpoint over several 1 MB chunks.
SELECT hopper.ps_create('big', 300000, consistency => 'asp');
SELECT hopper.ps_add('big', 0, '{0,299999}', '{1.5,-2.5}');
CREATE TEMP TABLE saved_big AS SELECT hopper.ps_save('big') AS id;
SELECT count(*) AS chunks, sum(length(k.data)) AS bytes
FROM hopper.checkpoint_chunks k JOIN hopper.checkpoints c USING (checkpoint_id) JOIN saved_big ON c.uuid = saved_big.id;
SELECT hopper.ps_restore(id, 'big2') FROM saved_big;
SELECT hopper.ps_get('big2', 0, '{0,1,299999}');
SELECT hopper.ps_drop('big'), hopper.ps_drop('big2');
-- Damaged or unsuitable checkpoints are refused (the uuid in messages is replaced by <id>).
CREATE FUNCTION pg_temp.restore_err(id uuid) RETURNS text LANGUAGE sql
AS $$ SELECT replace(pg_temp.err(format('SELECT hopper.ps_restore(%L, %L)', id, 'damaged')), id::text, '<id>') $$;
UPDATE hopper.checkpoint_chunks SET data = set_byte(data, 60, get_byte(data, 60) # 1)
WHERE checkpoint_id = (SELECT checkpoint_id FROM hopper.checkpoints WHERE uuid = (SELECT id FROM saved));
SELECT regexp_replace(pg_temp.restore_err(id), 'sha256:[0-9a-f]{64}', 'sha256:<hex>') FROM saved;
UPDATE hopper.checkpoint_chunks SET data = substr(data, 1, 100)
WHERE checkpoint_id = (SELECT checkpoint_id FROM hopper.checkpoints WHERE uuid = (SELECT id FROM saved));
SELECT pg_temp.restore_err(id) FROM saved;
UPDATE hopper.checkpoints SET format = 'hopper_model_state_v1' WHERE uuid = (SELECT id FROM saved);
SELECT pg_temp.restore_err(id) FROM saved;
DELETE FROM hopper.checkpoint_chunks
WHERE checkpoint_id = (SELECT checkpoint_id FROM hopper.checkpoints WHERE uuid = (SELECT id FROM saved_big)) AND chunk_no = 0;
SELECT pg_temp.restore_err(id) FROM saved_big;
UPDATE hopper.checkpoints SET state = 'ERROR' WHERE uuid = (SELECT id FROM saved2);
SELECT pg_temp.restore_err(id) FROM saved2;
SELECT count(*) AS tables FROM hopper.ps_tables WHERE name = 'damaged';
SELECT pg_temp.err($$SELECT hopper.ps_restore('00000000-0000-0000-0000-000000000000')$$);
SELECT pg_temp.err($$SELECT hopper.ps_restore(NULL)$$);
SELECT pg_temp.err($$SELECT hopper.ps_save('nope')$$);
SELECT pg_temp.err($$SELECT hopper.ps_save('asp_t', '[1, 2]')$$);
SELECT hopper.delete_checkpoints(ARRAY(SELECT id FROM saved UNION ALL SELECT id FROM saved2 UNION ALL SELECT id FROM saved_big));
SELECT state, count(*) FROM hopper.checkpoints
WHERE uuid IN (SELECT id FROM saved UNION ALL SELECT id FROM saved2 UNION ALL SELECT id FROM saved_big) GROUP BY state;

-- ---- errors: operations -------------------------------------------------------------------------
SELECT hopper.ps_get('nope', 0, '{1}');
SELECT hopper.ps_get('asp_t', 0, '{3,1}');
SELECT hopper.ps_get('asp_t', 0, '{10}');
SELECT hopper.ps_get('asp_t', 2, '{1}');
SELECT pg_temp.err($$SELECT hopper.ps_get('asp_t', -1, '{1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get('asp_t', 0, '{1,1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get('asp_t', 0, '{-1,2}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get('asp_t', 0, '{1,NULL}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get('asp_t', 0, '{{1,2},{3,4}}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get('asp_t', 0, NULL)$$);
SELECT pg_temp.err($$SELECT hopper.ps_get('asp_t', NULL, '{1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get(NULL, 0, '{1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add('asp_t', 0, '{1,2}', '{1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add('asp_t', 0, '{1,2}', '{1,NaN}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add('asp_t', 0, '{1}', '{-Infinity}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add('asp_t', 0, '{1}', NULL)$$);
SELECT pg_temp.err($$SELECT hopper.ps_add('asp_t', 0, '{1}', '{NULL}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add('asp_t', 0, '{2,1}', '{1,1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add('nope', 0, '{1}', '{1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_clock('asp_t', 7)$$);
SELECT pg_temp.err($$SELECT hopper.ps_clock('nope', 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_get_chunk('asp_t', 0, '{3}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get_chunk('asp_t', 0, '{1,0}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get_chunk('asp_t', 0, '{-1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add_chunk('asp_t', 0, '{2}', '{1,2,3}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add_chunk('asp_t', 0, '{5}', '{1}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_get_chunk('asp_t', 9, '{0}')$$);
SELECT pg_temp.err($$SELECT hopper.ps_add_chunk('nope', 0, '{0}', '{1}')$$);

-- ---- errors: create and drop --------------------------------------------------------------------
SELECT hopper.ps_create('asp_t', 10);
SELECT hopper.ps_create('x', 10, consistency => 'eventual');
SELECT hopper.ps_create('x', 10, consistency => 'ssp');
SELECT pg_temp.err($$SELECT hopper.ps_create('', 10)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create(repeat('n', 64), 10)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create(NULL, 10)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', NULL::bigint)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, chunk_size => 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, chunk_size => NULL)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, consistency => 'bsp', staleness => 1)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, consistency => 'asp', staleness => 3)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, consistency => 'ssp', staleness => -1)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, num_workers => 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, num_workers => 5000)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, init_value => 'NaN')$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, consistency => NULL)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', ARRAY[int8range(0, 10), int8range(5, 20)])$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', ARRAY[int8range(0, 10), 'empty'::int8range])$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', ARRAY[int8range(0, NULL)])$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', ARRAY[int8range(0, 2), NULL])$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', '{}'::int8range[])$$);
SELECT pg_temp.err($$SELECT hopper.ps_create('x', NULL::int8range[])$$);
-- 4 GB of values do not fit in the shared memory of the test cluster.
SELECT hopper.ps_create('huge', 1000000000);
-- Table slots run out (hopper.ps_max_tables for all databases together).
DO $$
BEGIN
    FOR i IN 1..5000 LOOP
        PERFORM hopper.ps_create('filler_' || i, 1);
    END LOOP;
EXCEPTION WHEN program_limit_exceeded THEN
    RAISE NOTICE '%', SQLERRM;
END $$;
SELECT count(*) > 0 AS created FROM hopper.ps_tables WHERE name LIKE 'filler%';  -- the DO block's rollback keeps them
SELECT bool_and(hopper.ps_drop(name)) AS dropped FROM hopper.ps_tables WHERE name LIKE 'filler%';
SELECT hopper.ps_drop('nope');
SELECT hopper.ps_drop('nope', if_exists => true);
SELECT pg_temp.err($$SELECT hopper.ps_drop(NULL)$$);
-- Only the owner (or a member of its role) may drop a table.
CREATE ROLE regress_hopper_ps_other;
GRANT USAGE ON SCHEMA hopper TO regress_hopper_ps_other;
SET ROLE regress_hopper_ps_other;
SELECT pg_temp.err($$SELECT hopper.ps_drop('asp_t')$$);
RESET ROLE;
REVOKE USAGE ON SCHEMA hopper FROM regress_hopper_ps_other;
DROP ROLE regress_hopper_ps_other;

-- ---- values never overflow to infinity -------------------------------------------------------------
-- An Add that would make a value infinite leaves it unchanged (each delta on its own) and says how
-- many were dropped; under BSP the same holds when the iteration's Adds are folded in by a Clock.
SELECT hopper.ps_create('overflow_asp', 3, consistency => 'asp', init_value => 3e38);
SELECT hopper.ps_add('overflow_asp', 0, ARRAY[0, 1, 2]::bigint[], ARRAY[3e38, -1e38, 3e38]::real[]);
SELECT hopper.ps_get('overflow_asp', 0, ARRAY[0, 1, 2]::bigint[]);
SELECT hopper.ps_create('overflow_bsp', 2, init_value => 3e38);
SELECT hopper.ps_add('overflow_bsp', 0, ARRAY[0, 1]::bigint[], ARRAY[3e38, 1]::real[]);
SELECT hopper.ps_clock('overflow_bsp', 0);
SELECT hopper.ps_get('overflow_bsp', 0, ARRAY[0, 1]::bigint[]);
SELECT hopper.ps_drop('overflow_asp'), hopper.ps_drop('overflow_bsp');

-- ---- SparseSSP: Gets wait only for the workers that wrote the chunks they read -------------------
-- Keys 0..39 in chunks of 10, staleness 0, workers 0 and 1 in this one session. Worker 1 writes
-- chunk 3 at clock 0 and then stops. Worker 0 writes and reads chunk 0 only: each Get ends its
-- previous iteration (the Clock is folded in), and it runs ahead of worker 1 without waiting.
SELECT hopper.ps_create('sparse_t', 40, chunk_size => 10, consistency => 'sparse_ssp', staleness => 0, num_workers => 2);
SELECT hopper.ps_add('sparse_t', 1, ARRAY[30]::bigint[], ARRAY[5]::real[]);
SELECT hopper.ps_add('sparse_t', 0, ARRAY[1]::bigint[], ARRAY[1]::real[]);
SELECT i, hopper.ps_get('sparse_t', 0, ARRAY[0, 1]::bigint[]) FROM generate_series(1, 3) i;
SELECT hopper.ps_add('sparse_t', 0, ARRAY[1]::bigint[], ARRAY[1]::real[]);
SELECT worker, clock FROM hopper.ps_workers WHERE table_name = 'sparse_t' ORDER BY worker;
-- Worker 1 (clock 0) now writes chunk 0 for the first time, which worker 0 read at clock 2 without
-- waiting for it: more than the staleness late, and it is told so.
SELECT hopper.ps_add('sparse_t', 1, ARRAY[2]::bigint[], ARRAY[1]::real[]);
SELECT late_adds FROM hopper.ps_tables WHERE name = 'sparse_t';
-- Reading worker 1's chunk 3 from clock 2 needs worker 1 at clock 2: it waits (here: until the timeout).
SET statement_timeout = '300ms';
SELECT hopper.ps_get('sparse_t', 0, ARRAY[30]::bigint[]);
RESET statement_timeout;
-- The Get that timed out had ended worker 0's iteration first: worker 0 is at clock 3. Worker 1
-- catches up (its first Get starts an iteration, each later one ends the one before) and the read
-- goes through, with worker 1's Add in it.
SELECT i, hopper.ps_get('sparse_t', 1, ARRAY[30]::bigint[]) FROM generate_series(1, 4) i;
SELECT hopper.ps_get('sparse_t', 0, ARRAY[30]::bigint[]);
SELECT worker, clock FROM hopper.ps_workers WHERE table_name = 'sparse_t' ORDER BY worker;
-- Plain SSP with the same moves: worker 0 cannot run ahead of worker 1 on any chunk.
SELECT hopper.ps_create('dense_t', 40, chunk_size => 10, consistency => 'ssp', staleness => 0, num_workers => 2);
SELECT hopper.ps_add('dense_t', 1, ARRAY[30]::bigint[], ARRAY[5]::real[]);
SELECT hopper.ps_get('dense_t', 0, ARRAY[0, 1]::bigint[]), hopper.ps_clock('dense_t', 0);
SET statement_timeout = '300ms';
SELECT hopper.ps_get('dense_t', 0, ARRAY[0, 1]::bigint[]);
RESET statement_timeout;
SELECT pg_temp.err($$SELECT hopper.ps_create('x', 10, consistency => 'sparse_ssp')$$);
SELECT hopper.ps_drop('sparse_t'), hopper.ps_drop('dense_t');

-- ---- one table over several servers: a part per server, by a range map ---------------------------
SELECT hopper.ps_create_part('part_t', ARRAY[int8range(0, 100), int8range(100, 250)], 1, chunk_size => 50,
                             consistency => 'ssp', staleness => 1, num_workers => 2);
SELECT name, num_keys, key_ranges, part, range_map FROM hopper.ps_tables WHERE name = 'part_t';
SELECT hopper.ps_add('part_t', 0, ARRAY[100, 249]::bigint[], ARRAY[1, 2]::real[]);
SELECT hopper.ps_get('part_t', 0, ARRAY[100, 249]::bigint[]);
SELECT pg_temp.err($$SELECT hopper.ps_get('part_t', 0, ARRAY[99]::bigint[])$$);
-- Range maps with gaps, overlaps, empty or unbounded parts, boundaries inside a chunk, a part out of range.
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', ARRAY[int8range(0, 100), int8range(110, 200)], 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', ARRAY[int8range(0, 100), int8range(90, 200)], 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', ARRAY[int8range(100, 200), int8range(0, 100)], 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', ARRAY[int8range(0, 100), int8range(100, 100)], 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', ARRAY[int8range(0, 100), int8range(100, NULL)], 0)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', ARRAY[int8range(0, 105), int8range(105, 200)], 0, chunk_size => 10)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', ARRAY[int8range(0, 100), int8range(100, 200)], 2)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', ARRAY[int8range(0, 100), int8range(100, 200)], -1)$$);
SELECT pg_temp.err($$SELECT hopper.ps_create_part('x', '{}'::int8range[], 0)$$);
SELECT hopper.ps_drop('part_t');

-- ---- the catalog and clean-up -------------------------------------------------------------------
SELECT name, consistency, staleness, num_workers FROM hopper.ps_tables ORDER BY name;
SELECT tables >= 5 AS counted, used_bytes > 0 AS used, largest_free_bytes <= memory_bytes AS sane FROM hopper.ps_memory();
SELECT hopper.ps_drop(name) FROM hopper.ps_tables ORDER BY name;
SELECT count(*) AS tables FROM hopper.ps_tables;
SELECT count(*) AS workers FROM hopper.ps_workers;
