-- The server's cache of detoasted packed buffers kept between calls (hopper.shared_buffer_cache_mb,
-- src/pg/runtime/shared_buffer_cache.cpp): preprocess keeps what it writes, so the call after it
-- starts warm, as does any later call; the key tells apart values that changed, were rewritten or
-- went (TRUNCATE, VACUUM FULL, UPDATE); a role reads only buffers of rows it can read; results are
-- those of a run that reads TOAST every time. (Eviction, the fallback without the cache, cancel,
-- termination and a crash: test/scripts/shared_buffer_cache.sh.)
CREATE SCHEMA test_shared_buffer_cache;
SET search_path = test_shared_buffer_cache, public;
SET client_min_messages = warning;

-- The test cluster preloads hopper, with the default size; it is reserved at server start.
SHOW hopper.shared_buffer_cache_mb;
SELECT enabled, size_bytes FROM hopper.shared_buffer_cache_stats();
SET hopper.shared_buffer_cache_mb = 16;

-- 64 features x 100 rows = 25.6 kB per buffer, stored out of line (the 3-class one-hot buffers stay
-- inline and are not cached).
CREATE TABLE img AS
SELECT g AS id, (g % 3) AS label,
       ARRAY(SELECT (cos(g * 3 + j) + (g % 3) * 0.4)::real FROM generate_series(1, 64) j) AS x
FROM generate_series(1, 2000) g;
\set arch '{"input_dim": 64, "layers": [{"units": 16, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}'
\set compile '{"optimizer": "sgd", "learning_rate": 0.05}'
\set fit '{"batch_size": 20}'
SELECT kept AS kept_before, warm_reads AS warm_before, stale AS stale_before FROM hopper.shared_buffer_cache_stats() \gset
SELECT hopper.preprocess('img', 'img_packed', 'label', 'x', buffer_size => 100, num_segments => 1) AS packed;
-- preprocess kept the 20 buffers it wrote.
SELECT kept - :kept_before AS kept_by_preprocess FROM hopper.shared_buffer_cache_stats();

-- The call after it fetches nothing from TOAST: its 20 first reads are warm, the 40 others hits of its
-- own table (3 iterations).
CALL hopper.fit('img_packed', 'first', :'arch', :'compile', :'fit', 3);
SELECT hits, misses, not_kept, warm FROM hopper.buffer_cache_stats();
-- So does the next.
CALL hopper.fit('img_packed', 'second', :'arch', :'compile', :'fit', 3);
SELECT hits, misses, warm FROM hopper.buffer_cache_stats();
SELECT warm_reads - :warm_before AS warm_reads FROM hopper.shared_buffer_cache_stats();
-- Bit for bit the model of a run that reads TOAST every time (hopper.buffer_cache_mb = 0: no cache at all).
SET hopper.buffer_cache_mb = 0;
CALL hopper.fit('img_packed', 'uncached', :'arch', :'compile', :'fit', 3);
SELECT misses, warm FROM hopper.buffer_cache_stats();
RESET hopper.buffer_cache_mb;
SELECT f.model_state = u.model_state AS same_as_uncached, f.model_state = s.model_state AS same_as_second
FROM first f, uncached u, second s;
-- Runs hold their buffers only while they run.
SELECT pinned FROM hopper.shared_buffer_cache_stats();

-- VACUUM FULL rewrites the table and its TOAST values, keeping their OIDs: the pointers are the same,
-- the relation file is new, and so is the key. Nothing is taken for what it is not (no stale entry
-- even had to be checked): every buffer is fetched anew, and trains the same model.
VACUUM FULL img_packed;
CALL hopper.fit('img_packed', 'after_vacuum_full', :'arch', :'compile', :'fit', 3);
SELECT hits, misses, warm FROM hopper.buffer_cache_stats();
SELECT stale - :stale_before AS stale FROM hopper.shared_buffer_cache_stats();
SELECT v.model_state = f.model_state AS same_state FROM after_vacuum_full v, first f;
-- A TRUNCATE rolled back brings the relation file back, and its buffers are still good.
BEGIN;
TRUNCATE img_packed;
ROLLBACK;
CALL hopper.fit('img_packed', 'after_rollback', :'arch', :'compile', :'fit', 3);
SELECT hits, misses, warm FROM hopper.buffer_cache_stats();
-- TRUNCATE, then the same rows again: new values in a new file, fetched.
CREATE TABLE img_rows AS SELECT * FROM img_packed;
TRUNCATE img_packed;
INSERT INTO img_packed SELECT * FROM img_rows;
CALL hopper.fit('img_packed', 'after_truncate', :'arch', :'compile', :'fit', 3);
SELECT hits, misses, warm FROM hopper.buffer_cache_stats();
SELECT t.model_state = f.model_state AS same_state FROM after_truncate t, first f;
-- An UPDATE writes new values for the rows it changes: those are fetched, the others found.
UPDATE img_packed SET independent_var[1][1] = 0.25 WHERE buffer_id < 5;
CALL hopper.fit('img_packed', 'after_update', :'arch', :'compile', :'fit', 3);
SELECT hits, misses, warm FROM hopper.buffer_cache_stats();
SELECT stale - :stale_before AS stale FROM hopper.shared_buffer_cache_stats();

-- Roles. The cache is consulted only with a TOAST pointer the executor read from a row the caller
-- could read. A role that may not read the table cannot train on it, cached or not ...
CREATE ROLE shared_cache_outsider;
CREATE ROLE shared_cache_reader;
GRANT USAGE ON SCHEMA test_shared_buffer_cache, hopper TO shared_cache_outsider, shared_cache_reader;
GRANT CREATE ON SCHEMA test_shared_buffer_cache TO shared_cache_reader;
\set VERBOSITY terse
SET ROLE shared_cache_outsider;
CALL hopper.fit('test_shared_buffer_cache.img_packed', 'test_shared_buffer_cache.outsider', :'arch', :'compile', :'fit', 1);
RESET ROLE;
-- ... and one that sees half the rows (row-level security) reads those buffers only: 10 per
-- iteration, all found in the cache, none of the others.
GRANT SELECT ON img_packed, img_packed_summary TO shared_cache_reader;
ALTER TABLE img_packed ENABLE ROW LEVEL SECURITY;
CREATE POLICY first_half ON img_packed FOR SELECT TO shared_cache_reader USING (buffer_id < 10);
SET ROLE shared_cache_reader;
CALL hopper.fit('test_shared_buffer_cache.img_packed', 'test_shared_buffer_cache.reader', :'arch', :'compile', :'fit', 3);
SELECT hits, misses, warm FROM hopper.buffer_cache_stats();
-- Emptying the server's cache is for superusers (or whom they grant it).
SELECT hopper.shared_buffer_cache_reset();
RESET ROLE;
\set VERBOSITY default
-- The reader's model is the one trained on a copy of those 10 buffers.
CREATE TABLE img_half (LIKE img_packed INCLUDING ALL) PARTITION BY LIST (dist_key);
CREATE TABLE img_half_p0 PARTITION OF img_half FOR VALUES IN (0);
INSERT INTO img_half SELECT * FROM img_packed WHERE buffer_id < 10;
CREATE TABLE img_half_summary AS SELECT * FROM img_packed_summary;
CALL hopper.fit('img_half', 'half', :'arch', :'compile', :'fit', 3);
SELECT r.model_state = h.model_state AS same_state FROM reader r, half h;
DROP TABLE reader, reader_info, reader_summary;
REVOKE ALL ON SCHEMA test_shared_buffer_cache, hopper FROM shared_cache_outsider, shared_cache_reader;
DROP OWNED BY shared_cache_outsider, shared_cache_reader;
DROP ROLE shared_cache_outsider;
DROP ROLE shared_cache_reader;

-- Emptying it: the next call fetches again.
SELECT hopper.shared_buffer_cache_reset() > 0 AS emptied;
SELECT pinned FROM hopper.shared_buffer_cache_stats();
CALL hopper.fit('img_packed', 'after_reset', :'arch', :'compile', :'fit', 3);
SELECT hits, misses, warm FROM hopper.buffer_cache_stats();

DROP SCHEMA test_shared_buffer_cache CASCADE;
