#!/usr/bin/env bash
# A training run that leaves a core idle reads its packed buffers ahead in a background worker
# (src/pg/runtime/read_ahead.cpp): fit on one segment, 24 MB of buffers (above hopper.read_ahead_min_mb's
# 16 MB). The worker must have been given every out-of-line buffer and kept some before the backend
# asked for them; the model must be the one trained without it, bit for bit; and no worker may be
# left once the run is over, also when the run fails half-way (cancelled by a statement_timeout).
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT); skips on a machine with one core, where
# no core is idle.
set -euo pipefail
DB=hopper_read_ahead
fail() { echo "read_ahead.sh: FAILED: $*" >&2; exit 1; }
if [ "$(nproc)" -lt 2 ]; then
  echo "SKIP read_ahead.sh: one core, no read-ahead"
  exit 0
fi
psql -qX -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB"
out=$(psql -qX -At -v ON_ERROR_STOP=1 -d "$DB" 2>&1 <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
-- 8,000 rows of 784 features: 32 buffers of 250 rows, 784 kB each, and their 32 one-hot buffers
-- (10 kB each): 64 values stored out of line.
CREATE TABLE img AS
SELECT g AS id, (g % 10) AS label, ARRAY(SELECT ((g * 31 + j * 7) % 256)::real FROM generate_series(1, 784) j) AS x
FROM generate_series(1, 8000) g;
SELECT hopper.preprocess('img', 'img_packed', 'label', 'x', buffer_size => 250, num_segments => 1,
                         normalizing_const => 255) IS NULL;
-- A model large enough that training a buffer takes longer than fetching one.
\set arch '{"input_dim": 784, "layers": [{"units": 256, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}'
-- preprocess kept the buffers in the server's cache (hopper.shared_buffer_cache_mb): the run finds
-- them there, and nothing is left to read ahead.
CALL hopper.fit('img_packed', 'warm', :'arch', $$optimizer='SGD(lr=0.01)'$$, 'batch_size=50', 2);
SELECT 'warm', read_ahead_listed, warm FROM hopper.buffer_cache_stats();
-- Emptied, it has to be read again: a worker reads it ahead.
SELECT hopper.shared_buffer_cache_reset() IS NULL;
CALL hopper.fit('img_packed', 'ahead', :'arch', $$optimizer='SGD(lr=0.01)'$$, 'batch_size=50', 2);
SELECT 'stats', read_ahead_listed, read_ahead_kept, misses + read_ahead_kept, hits + misses FROM hopper.buffer_cache_stats();
SET hopper.read_ahead_min_mb = -1;
CALL hopper.fit('img_packed', 'not_ahead', :'arch', $$optimizer='SGD(lr=0.01)'$$, 'batch_size=50', 2);
SELECT 'off', read_ahead_listed FROM hopper.buffer_cache_stats();
SELECT 'same', a.model_state = n.model_state AND a.model_state = w.model_state FROM ahead a, not_ahead n, warm w;
RESET hopper.read_ahead_min_mb;
SELECT 'workers', count(*) FROM pg_stat_activity WHERE backend_type = 'hopper read-ahead';
SQL
) || fail "$out"
# Runs that fail.
failing=$(psql -qX -At -d "$DB" 2>&1 <<'SQL'
SET client_min_messages = warning;
\set arch '{"input_dim": 784, "layers": [{"units": 256, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}'
-- The worker also checks the values it keeps are finite, so that the backend need not; a buffer
-- that holds a NaN it leaves unchecked, and the run fails on it as without reading ahead.
UPDATE img_packed SET independent_var[3][5] = 'NaN' WHERE buffer_id = 30;
SELECT hopper.shared_buffer_cache_reset() IS NULL;
\set VERBOSITY terse
CALL hopper.fit('img_packed', 'nan', :'arch', $$optimizer='SGD(lr=0.01)'$$, 'batch_size=50', 1);
\set VERBOSITY default
SELECT 'nan', read_ahead_listed FROM hopper.buffer_cache_stats();
UPDATE img_packed SET independent_var[3][5] = 0.5 WHERE buffer_id = 30;
-- A run cancelled in its first iteration: its worker goes too.
SET statement_timeout = '300ms';
CALL hopper.fit('img_packed', 'cancelled', :'arch', $$optimizer='SGD(lr=0.01)'$$, 'batch_size=10', 50);
SQL
)
grep -q "canceling statement due to statement timeout" <<<"$failing" || fail "the cancelled fit did not fail: $failing"
grep -q 'ERROR:  independent_var contains NaN or infinite values' <<<"$failing" ||
  fail "the NaN read ahead was not reported: $failing"
grep -q '^nan|64$' <<<"$failing" || fail "the run with a NaN did not read ahead: $failing"
stats=$(grep '^stats|' <<<"$out") || fail "$out"
IFS='|' read -r _ listed kept kept_once reads <<<"$stats"
[ "$listed" = 64 ] || fail "the worker was given $listed buffers, not the 64 out-of-line ones: $out"
[ "$kept" -gt 0 ] || fail "the worker kept no buffer before the backend read it: $out"
[ "$kept_once" = 64 ] || fail "buffers kept by the worker and by the backend add up to $kept_once, not 64: $out"
[ "$reads" = 128 ] || fail "the backend read $reads buffers, not 2 x 64: $out"
grep -q '^off|0$' <<<"$out" || fail "read_ahead_min_mb = -1 still read ahead: $out"
grep -q '^warm|0|64$' <<<"$out" || fail "the run after preprocess did not find its buffers in the server's cache: $out"
grep -q '^same|t$' <<<"$out" || fail "reading ahead changed the model: $out"
grep -q '^workers|0$' <<<"$out" || fail "a read-ahead worker outlived its run: $out"
# The cancelled run's worker stops (it checks the run's stop flag between buffers; TerminateBackgroundWorker).
for _ in $(seq 50); do
  left=$(psql -qX -At -d "$DB" -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'hopper read-ahead'")
  [ "$left" = 0 ] && break
  sleep 0.1
done
[ "$left" = 0 ] || fail "$left read-ahead worker(s) left after a cancelled run"
psql -qX -d postgres -c "DROP DATABASE $DB"
echo "read_ahead.sh: ok (the worker kept $kept of $listed buffers before the backend asked)"
