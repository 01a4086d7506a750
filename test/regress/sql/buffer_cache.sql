-- The run's cache of detoasted packed buffers (hopper.buffer_cache_mb, src/pg/runtime/buffer_cache.cpp):
-- what it keeps, that it never changes a result, its budget, and that it is gone after every run.
-- The test cluster preloads hopper, so runs keep their buffers in the server's cache kept between
-- calls (hopper.shared_buffer_cache_mb: shared_buffer_cache.sql); here it is emptied before the runs
-- whose first reads should fetch from TOAST. Its pins are per run: none is left after a run, also
-- after one that failed.
CREATE SCHEMA test_buffer_cache;
SET search_path = test_buffer_cache, public;
SET client_min_messages = warning;

-- 64 features x 100 rows = 25.6 kB per buffer: stored out of line in TOAST, which is what the cache
-- keeps (the 3-class dependent_var buffers stay inline and are not cached).
CREATE TABLE wide AS
SELECT g AS id, (g % 3) AS label,
       ARRAY(SELECT (sin(g * 7 + j) + (g % 3) * 0.3)::real FROM generate_series(1, 64) j) AS x
FROM generate_series(1, 2000) g;
SELECT hopper.preprocess('wide', 'wide_packed', 'label', 'x', buffer_size => 100, num_segments => 1) AS packed;
SELECT count(*) AS buffers, min(pg_column_size(independent_var)) AS stored_bytes FROM wide_packed;

\set arch '{"input_dim": 64, "layers": [{"units": 16, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}'

-- Before any run the counters are zero.
SELECT * FROM hopper.buffer_cache_stats();

-- 3 iterations: every buffer is read 3 times to train (the training metrics come from those
-- passes). The first read of each of the 20 buffers detoasts it (misses), the other 40 reads are hits.
-- (preprocess kept them in the server's cache: emptied first, for a cold start.)
SELECT hopper.shared_buffer_cache_reset() > 0 AS emptied;
CALL hopper.fit('wide_packed', 'cached', :'arch', '{"optimizer": "sgd", "learning_rate": 0.05}', '{"batch_size": 20}', 3);
-- kept_bytes: 20 buffers of 25,632 bytes, each with the cache's 32-byte header.
SELECT hits, misses, not_kept, kept_bytes, budget_bytes = 1024 * 1024 * 1024 AS default_budget, warm FROM hopper.buffer_cache_stats();
-- The session lets go of the cache's shared memory when the run ends.
SELECT attached FROM hopper.buffer_cache_stats();

-- Reading ahead (hopper.read_ahead_min_mb, src/pg/runtime/read_ahead.cpp): fit trains its model on
-- one segment at a time, so with a core to spare a background worker fetches the buffers into the
-- cache from the other end while the backend fetches them from the start. Below read_ahead_min_mb
-- (16 MB by default; this table has 0.5 MB) no worker starts, as in the run above; at 0 one starts
-- for any size (on a machine of more than one core: test/scripts/read_ahead.sh checks what it keeps).
-- Whoever fetches a buffer first keeps it, once, and every read of the backend is a hit or a miss;
-- the model is the same bit for bit.
SET hopper.read_ahead_min_mb = 0;
SELECT hopper.shared_buffer_cache_reset() > 0 AS emptied;
CALL hopper.fit('wide_packed', 'read_ahead', :'arch', '{"optimizer": "sgd", "learning_rate": 0.05}', '{"batch_size": 20}', 3);
SELECT misses + read_ahead_kept AS kept_once, hits + misses AS reads, not_kept, attached, read_ahead_listed FROM hopper.buffer_cache_stats();
SELECT r.model_state = c.model_state AS same_state FROM read_ahead r, cached c;
RESET hopper.read_ahead_min_mb;
SET hopper.read_ahead_min_mb = -2;

-- Turned off, the same run detoasts every read and trains the same model bit for bit.
SET hopper.buffer_cache_mb = 0;
CALL hopper.fit('wide_packed', 'uncached', :'arch', '{"optimizer": "sgd", "learning_rate": 0.05}', '{"batch_size": 20}', 3);
SELECT * FROM hopper.buffer_cache_stats();
SELECT c.model_state = u.model_state AS same_state, ci.training_loss = ui.training_loss AS same_loss
FROM cached c, uncached u, cached_info ci, uncached_info ui;

-- A budget smaller than the data: what does not fit is detoasted as before.
CREATE TABLE wide_big AS SELECT g + 2000 AS id, label, x FROM wide, generate_series(0, 2) g;
SELECT hopper.preprocess('wide_big', 'wide_big_packed', 'label', 'x', buffer_size => 100, num_segments => 1) AS packed;
SET hopper.buffer_cache_mb = 1;
SELECT hopper.shared_buffer_cache_reset() > 0 AS emptied;
CALL hopper.fit('wide_big_packed', 'budget', :'arch', '{"optimizer": "adam", "learning_rate": 0.01}', '{"batch_size": 50}', 2);
SELECT hits, misses, not_kept, kept_bytes <= budget_bytes AS within_budget, budget_bytes FROM hopper.buffer_cache_stats();
SET hopper.buffer_cache_mb = 0;
CALL hopper.fit('wide_big_packed', 'budget_off', :'arch', '{"optimizer": "adam", "learning_rate": 0.01}', '{"batch_size": 50}', 2);
SELECT b.model_state = o.model_state AS same_state FROM budget b, budget_off o;
RESET hopper.buffer_cache_mb;

-- fit_multiple: models hop over 2 segments, trained serially by the backend or by parallel
-- workers: every model ends the same.
SELECT hopper.preprocess('wide', 'wide_packed2', 'label', 'x', buffer_size => 100, num_segments => 2) AS packed;
SELECT hopper.load_model_arch('arch', :'arch', 'mlp') AS model_id;
SELECT hopper.load_model_selection_table('arch', 'mst', ARRAY[1],
    ARRAY['{"optimizer": "sgd", "learning_rate": 0.01, "momentum": 0.9}', '{"optimizer": "sgd", "learning_rate": 0.03, "momentum": 0.9}',
          '{"optimizer": "adam", "learning_rate": 0.01}'],
    ARRAY['{"batch_size": 25}']);
SET hopper.parallel_segments = 1;
CALL hopper.fit_multiple('wide_packed2', 'serial', 'mst', 2);
-- preprocess kept the buffers: every first read is warm.
SELECT hits, misses, not_kept, warm FROM hopper.buffer_cache_stats();
RESET hopper.parallel_segments;
CALL hopper.fit_multiple('wide_packed2', 'parallel', 'mst', 2);
-- The leader and its parallel workers (new ones for every statement) share the run's cache: the
-- same reads, the same counts.
SELECT hits, misses, not_kept, warm FROM hopper.buffer_cache_stats();
SELECT s.mst_key, s.model_state = p.model_state AS same_state FROM serial s JOIN parallel p USING (mst_key) ORDER BY 1;
-- Cold: the processes of the group, in a parallel operation, each keep their segment's buffers at
-- their first miss, by a scan of its TOAST relation.
SELECT hopper.shared_buffer_cache_reset() > 0 AS emptied;
CALL hopper.fit_multiple('wide_packed2', 'parallel_cold', 'mst', 2);
SELECT hits, misses, not_kept, warm FROM hopper.buffer_cache_stats();
SELECT s.mst_key, s.model_state = p.model_state AS same_state FROM serial s JOIN parallel_cold p USING (mst_key) ORDER BY 1;

-- Data changed between runs: a new run never sees the previous run's buffers (new values, new
-- TOAST pointers: fetched).
UPDATE wide_packed SET independent_var[1:100][1:1] = array_fill(0.5::real, ARRAY[100, 1]);
CALL hopper.fit('wide_packed', 'changed', :'arch', '{"optimizer": "sgd", "learning_rate": 0.05}', '{"batch_size": 20}', 3);
SELECT hits, misses, warm FROM hopper.buffer_cache_stats();
SET hopper.buffer_cache_mb = 0;
CALL hopper.fit('wide_packed', 'changed_off', :'arch', '{"optimizer": "sgd", "learning_rate": 0.05}', '{"batch_size": 20}', 3);
RESET hopper.buffer_cache_mb;
SELECT c.model_state = o.model_state AS same_state, c.model_state <> k.model_state AS differs_from_before
FROM changed c, changed_off o, cached k;

-- A run that fails half-way frees its cache too: a non-finite value in the last buffer.
UPDATE wide_packed SET independent_var[1][1] = 'NaN' WHERE buffer_id = (SELECT max(buffer_id) FROM wide_packed);
\set VERBOSITY terse
CALL hopper.fit('wide_packed', 'failed', :'arch', '{"optimizer": "sgd", "learning_rate": 0.05}', '{"batch_size": 20}', 3);
\set VERBOSITY default
-- (19 buffers unchanged since the run above, found there; the changed one fetched.) Its buffers
-- are let go: no running call holds any.
SELECT hits, misses, attached FROM hopper.buffer_cache_stats();
SELECT pinned FROM hopper.shared_buffer_cache_stats();

-- Workers find the cache through an internal setting that only hopper sets: no user can point
-- a session at another session's cache.
CREATE ROLE buffer_cache_user;
SET ROLE buffer_cache_user;
SET hopper.buffer_cache_area = '1:2:3:4';
RESET ROLE;
DROP ROLE buffer_cache_user;
SHOW hopper.buffer_cache_area;
-- Even a superuser's made-up value (this session as the leader, a segment that does not exist)
-- leaves the parallel workers of an evaluation without a cache and the results unchanged.
CREATE TABLE evaluated AS SELECT * FROM hopper.evaluate('parallel', 'wide_packed2');
SELECT pg_backend_pid() || ':12345:1' AS made_up \gset
SET hopper.buffer_cache_area = :'made_up';
SELECT count(*) AS models, bool_and(e.loss = v.loss) AS same_loss
FROM hopper.evaluate('parallel', 'wide_packed2') e JOIN evaluated v USING (mst_key);
RESET hopper.buffer_cache_area;

-- How buffers get in: stored uncompressed (floats hardly compress), as wide_packed's are, they are
-- fetched from TOAST straight into the cache; stored compressed (here: features of 5 values), they are
-- detoasted and then copied in. Both give what the uncached run gives, bit for bit.
SELECT bool_and(pg_column_compression(independent_var) IS NULL) AS uncompressed FROM wide_packed;
CREATE TABLE flat AS
SELECT g AS id, (g % 3) AS label, ARRAY(SELECT ((g * j) % 5)::real FROM generate_series(1, 64) j) AS x
FROM generate_series(1, 1800) g;
SELECT hopper.preprocess('flat', 'flat_packed', 'label', 'x', buffer_size => 600, num_segments => 1) AS packed;
-- preprocess stores packed buffers uncompressed (STORAGE EXTERNAL); a user may change that.
ALTER TABLE flat_packed ALTER COLUMN independent_var SET STORAGE EXTENDED;
UPDATE flat_packed SET independent_var = independent_var || '{}'::real[];
-- Compressed 40-fold, still stored out of line (over 2 kB).
SELECT bool_and(pg_column_compression(independent_var) IS NOT NULL) AS compressed,
       bool_and(pg_column_size(independent_var) > 2048) AS out_of_line FROM flat_packed;
CALL hopper.fit('flat_packed', 'flat_cached', :'arch', '{"optimizer": "sgd", "learning_rate": 0.05}', '{"batch_size": 20}', 2);
-- The 3 compressed features' buffers are new values (the UPDATE): fetched, decompressed and kept
-- (misses); the 3 one-hot buffers preprocess kept are warm; 12 reads in all.
SELECT hits, misses, not_kept, warm FROM hopper.buffer_cache_stats();
SET hopper.buffer_cache_mb = 0;
CALL hopper.fit('flat_packed', 'flat_uncached', :'arch', '{"optimizer": "sgd", "learning_rate": 0.05}', '{"batch_size": 20}', 2);
RESET hopper.buffer_cache_mb;
SELECT c.model_state = u.model_state AS same_state FROM flat_cached c, flat_uncached u;

-- The setting's range.
SET hopper.buffer_cache_mb = -1;
RESET hopper.buffer_cache_mb;

DROP SCHEMA test_buffer_cache CASCADE;
