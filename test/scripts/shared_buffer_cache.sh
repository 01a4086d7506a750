#!/usr/bin/env bash
# The server's cache of detoasted packed buffers kept between calls (src/pg/runtime/shared_buffer_cache.cpp),
# on a cluster of its own whose cache is small (hopper.shared_buffer_cache_mb = 8, of which values may
# take 7.5 MB: two tables of 3.4 MB fit, not three):
#   1. the least recently used buffers make room for new ones;
#   2. buffers a running call holds are never let go, whatever other sessions keep meanwhile, and the
#      call trains the model a run without any cache trains;
#   3. a table larger than the cache is not kept by preprocess, and what a run cannot keep it reads
#      uncached;
#   4. a run that is cancelled, terminated (FATAL) or fails holds nothing afterwards;
#   5. kill -9 of a backend in a run: the usual crash restart, the cache empty and working;
#   6. with hopper.shared_buffer_cache_mb = 0 each run keeps its buffers only while it runs, as without
#      hopper in shared_preload_libraries (test/scripts/no_preload.sh).
# Every model is compared with the one trained with hopper.buffer_cache_mb = 0 (no cache at all).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DIR=$(mktemp -d /tmp/hopper-shared-cache.XXXXXX)
trap '"$ROOT/test/cluster.sh" stop "$DIR" >/dev/null 2>&1 || true' EXIT
as_owner() { if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
fail() { echo "shared_buffer_cache.sh: FAILED: $*" >&2; exit 1; }

eval "$(HOPPER_TEST_SHARED_BUFFERS=64MB HOPPER_TEST_PORT=$((${PGPORT:-54329} + 15)) \
  HOPPER_EXTRA_CONF="hopper.shared_buffer_cache_mb = 8" "$ROOT/test/cluster.sh" start "$DIR")"
export PGHOST PGPORT PGUSER
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
stat() { q -c "SELECT $1 FROM hopper.shared_buffer_cache_stats()"; }
run_stat() { q -c "$2" -c "SELECT $1 FROM hopper.buffer_cache_stats()" | tail -1; }
wait_for() {  # wait_for SQL-condition what
  for _ in $(seq 300); do
    [ "$(q -c "SELECT $1" 2>/dev/null || echo f)" = t ] && return 0
    sleep 0.1
  done
  fail "timed out waiting for $2"
}

ARCH='{"input_dim": 64, "layers": [{"units": 16, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}'
# A model slow enough (~0.5 s an iteration) that other sessions act while its run goes on.
SLOW='{"input_dim": 64, "layers": [{"units": 512, "activation": "relu"}, {"units": 512, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}'
fit() {  # fit TABLE OUTPUT [ARCH [ITERATIONS]]
  echo "SET client_min_messages = warning; DROP TABLE IF EXISTS $2, $2_info, $2_summary;
        CALL hopper.fit('$1', '$2', '${3:-$ARCH}', \$\$optimizer='SGD(lr=0.05)'\$\$, 'batch_size=20', ${4:-2})"
}
same() { [ "$(q -c "SELECT a.model_state = b.model_state FROM $1 a, $2 b")" = t ] || fail "$1 and $2 differ"; }

q -c "CREATE EXTENSION hopper"
[ "$(stat "enabled, size_bytes")" = "t|8388608" ] || fail "the cache is not there: $(stat '*')"
# Tables of 120 buffers of 100 rows x 64 features (25.6 kB each, out of line; 28 kB in the cache).
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE TABLE src AS
SELECT g AS id, (g % 3) AS label, ARRAY(SELECT (sin(g * 7 + j) + (g % 3) * 0.3)::real FROM generate_series(1, 64) j) AS x
FROM generate_series(1, 12000) g;
SQL
pack() { q -c "SET client_min_messages = warning" \
           -c "SELECT hopper.preprocess('src', '$1', 'label', 'x', buffer_size => 100, num_segments => 1, seed => $2) IS NULL" >/dev/null; }

echo "-- least recently used first"
pack t1 1
pack t2 2
[ "$(stat evicted)" = 0 ] || fail "evicted before the cache was full: $(stat '*')"
pack t3 3
[ "$(stat "evicted > 0 AND buffers < 360")" = t ] || fail "nothing let go for t3: $(stat '*')"
[ "$(run_stat "misses || ' ' || warm" "$(fit t3 m3)")" = "0 120" ] || fail "t3, the last kept, is not warm"
cold=$(run_stat misses "$(fit t1 m1)")
[ "$cold" -gt 0 ] || fail "t1, the first kept, was not let go"
q -c "SET hopper.buffer_cache_mb = 0" -c "$(fit t1 m1_uncached)" >/dev/null
same m1 m1_uncached

echo "-- what a run holds stays, whatever others keep"
q -c "SELECT hopper.shared_buffer_cache_reset()" >/dev/null
psql -X -q -d postgres -c "SET application_name = 'slow_run'" -c "SET hopper.read_ahead_min_mb = -1" \
  -c "$(fit t1 held "$SLOW" 12)" >"$DIR/held.log" 2>&1 &
slow=$!
wait_for "pinned = 120 FROM hopper.shared_buffer_cache_stats()" "the slow run to hold t1's buffers"
pack t4 4
pack t5 5
[ "$(stat pinned)" = 120 ] || fail "the running call's buffers were let go: $(stat '*')"
# The run was still going: others were kept around it, as far as room allowed.
kill -0 $slow 2>/dev/null || fail "the slow run ended before the other sessions kept their tables"
wait $slow || { cat "$DIR/held.log"; fail "the slow run failed"; }
[ "$(stat pinned)" = 0 ] || fail "buffers still held after the run: $(stat '*')"
q -c "SET hopper.buffer_cache_mb = 0" -c "$(fit t1 held_uncached "$SLOW" 12)" >/dev/null
same held held_uncached

echo "-- a table larger than the cache"
q -c "SET client_min_messages = warning" -c "CREATE TABLE src_big AS SELECT id + k * 12000 AS id, label, x FROM src, generate_series(0, 2) k(k)" \
  -c "SELECT hopper.shared_buffer_cache_reset()" >/dev/null
kept=$(stat kept)
q -c "SET client_min_messages = warning" \
  -c "SELECT hopper.preprocess('src_big', 'big', 'label', 'x', buffer_size => 100, num_segments => 1) IS NULL" >/dev/null
[ "$(stat kept)" = "$kept" ] || fail "preprocess kept a table larger than the cache: $(stat '*')"
[ "$(run_stat "not_kept > 0 AND misses > 0" "$(fit big mbig)")" = t ] || fail "the run kept all of a table larger than the cache"
q -c "SET hopper.buffer_cache_mb = 0" -c "$(fit big mbig_uncached)" >/dev/null
same mbig mbig_uncached

echo "-- cancelled, terminated, failed: nothing held"
out=$(psql -X -q -d postgres -c "SET statement_timeout = '1s'" -c "SET hopper.read_ahead_min_mb = -1" -c "$(fit t1 cancelled "$SLOW" 50)" 2>&1 || true)
grep -q "canceling statement due to statement timeout" <<<"$out" || fail "the run was not cancelled: $out"
[ "$(stat pinned)" = 0 ] || fail "a cancelled run holds buffers: $(stat '*')"
psql -X -q -d postgres -c "SET application_name = 'terminated_run'" -c "SET hopper.read_ahead_min_mb = -1" \
  -c "$(fit t1 terminated "$SLOW" 50)" >"$DIR/terminated.log" 2>&1 &
victim=$!
wait_for "pinned = 120 FROM hopper.shared_buffer_cache_stats()" "the run to be terminated to hold its buffers"
q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'terminated_run'" >/dev/null
wait $victim || true
grep -q "terminating connection due to administrator command" "$DIR/terminated.log" || fail "not terminated: $(cat "$DIR/terminated.log")"
wait_for "pinned = 0 FROM hopper.shared_buffer_cache_stats()" "a terminated run to let go of its buffers"
q -c "UPDATE t2 SET independent_var[1][1] = 'NaN' WHERE buffer_id = 119" >/dev/null
out=$(psql -X -q -d postgres -c "$(fit t2 failed)" 2>&1 || true)
grep -q "contains NaN" <<<"$out" || fail "the run with a NaN did not fail: $out"
[ "$(stat pinned)" = 0 ] || fail "a failed run holds buffers: $(stat '*')"

echo "-- kill -9 in a run: crash restart"
psql -X -q -d postgres -c "SET application_name = 'killed_run'" -c "SET hopper.read_ahead_min_mb = -1" \
  -c "$(fit t1 killed "$SLOW" 50)" >"$DIR/killed.log" 2>&1 &
victim=$!
wait_for "pinned = 120 FROM hopper.shared_buffer_cache_stats()" "the run to be killed to hold its buffers"
kill -9 "$(q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'killed_run'")"
wait $victim || true
for _ in $(seq 100); do pg_isready -q && q -c "SELECT 1" >/dev/null 2>&1 && break; sleep 0.2; done
grep -q "terminated by signal 9" "$DIR/server.log" || fail "no crash restart: $(tail -5 "$DIR/server.log")"
[ "$(stat "enabled || ' ' || buffers || ' ' || pinned")" = "true 0 0" ] || fail "after the crash restart: $(stat '*')"
[ "$(run_stat "misses || ' ' || warm" "$(fit t1 after_crash)")" = "120 0" ] || fail "the run after the crash"
same after_crash m1_uncached
[ "$(run_stat "misses || ' ' || warm" "$(fit t1 after_crash_2)")" = "0 120" ] || fail "the second run after the crash"

echo "-- hopper.shared_buffer_cache_mb = 0: runs keep their buffers while they run"
echo "hopper.shared_buffer_cache_mb = 0" >>"$DIR/data/postgresql.conf"
as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 restart -m fast >/dev/null
[ "$(stat "enabled || ' ' || size_bytes")" = "false 0" ] || fail "the cache is still there: $(stat '*')"
pack t6 1
[ "$(run_stat "misses || ' ' || hits || ' ' || warm" "$(fit t6 off1)")" = "120 120 0" ] || fail "the first run without the cache"
[ "$(run_stat "misses || ' ' || hits || ' ' || warm" "$(fit t6 off2)")" = "120 120 0" ] || fail "the second run without the cache"
same off1 m1_uncached
echo "shared_buffer_cache.sh: ok"
