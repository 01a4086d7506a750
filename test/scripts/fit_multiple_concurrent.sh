#!/usr/bin/env bash
# Two sessions run fit_multiple at the same time on the same packed table, with different output
# tables: both succeed, their runs overlap in time, they train the same models (the same
# configurations give bit-identical states whatever runs beside them), and no working table
# (__hopper_<pid>_<n>_model_input/_output) is left. Then a run cancelled in the middle leaves
# neither working tables nor output tables.
# Needs PGHOST/PGPORT/PGUSER of a test cluster (test/run-all.sh sets them); exits non-zero on failure.
set -euo pipefail
DB=hopper_fm_concurrent
TMP=$(mktemp -d)
cleanup() {
  jobs -p | xargs -r kill 2>/dev/null || true
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
q() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "fit_multiple_concurrent: $*" >&2; exit 1; }

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE points AS
SELECT g AS id, ARRAY[(g % 3) * 2.0 + sin(g), cos(g)]::float8[] AS x, (g % 3)::text AS label FROM generate_series(1, 1200) g;
SELECT hopper.preprocess('points', 'packed', 'label', 'x', buffer_size => 50, num_segments => 2);
SELECT hopper.load_model_arch('arch', '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"},
                                                                   {"units": 3, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('arch', 'mst', ARRAY[1],
    ARRAY[$$optimizer='Adam(lr=0.01)'$$, $$optimizer='SGD(lr=0.1)'$$, $$optimizer='RMSprop(lr=0.01)'$$], ARRAY['batch_size=10']);
SQL

# A barrier: both sessions wait for a shared advisory lock that a third session holds, so that they
# start together when it lets go.
psql -X -q -d "$DB" -c "SELECT pg_advisory_lock(4711)" -c "SELECT pg_sleep(1)" >/dev/null &
holder=$!
for _ in $(seq 100); do
  [ "$(q -A -t -c "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4711 AND granted")" = 1 ] && break
  sleep 0.05
done
run() {
  psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "SET client_min_messages = warning" \
    -c "SELECT pg_advisory_lock_shared(4711), pg_advisory_unlock_shared(4711)" \
    -c "CALL hopper.fit_multiple('packed', '$1', 'mst', 4, metrics_compute_frequency => 2)" >"$TMP/$1.log" 2>&1
}
run out_a & a=$!
run out_b & b=$!
wait "$holder" || fail "the barrier session failed"
wait "$a" || { cat "$TMP/out_a.log" >&2; fail "session A failed"; }
wait "$b" || { cat "$TMP/out_b.log" >&2; fail "session B failed"; }

expected="3|3|t|t|0"
actual=$(q -A -t <<'SQL'
SELECT (SELECT count(*) FROM out_a) AS models_a, (SELECT count(*) FROM out_b) AS models_b,
       -- the two runs overlapped in time
       (SELECT a.start_training_time < b.end_training_time AND b.start_training_time < a.end_training_time
          FROM out_a_summary a, out_b_summary b) AS overlapped,
       -- and each trained the same models as the other
       (SELECT bool_and(a.model_state = b.model_state) FROM out_a a JOIN out_b b USING (mst_key)) AS identical,
       (SELECT count(*) FROM pg_class WHERE relname LIKE '\_\_hopper%') AS working_tables;
SQL
)
[ "$actual" = "$expected" ] || fail "expected models_a|models_b|overlapped|identical|working_tables = $expected, got $actual"

# A run cancelled in the middle: no working tables, no output tables.
psql -X -q -d "$DB" -c "SET client_min_messages = warning" \
  -c "CALL hopper.fit_multiple('packed', 'out_cancelled', 'mst', 1000)" >"$TMP/cancelled.log" 2>&1 &
c=$!
for _ in $(seq 200); do
  [ "$(q -A -t -c "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'CALL hopper.fit_multiple(%out_cancelled%' AND state = 'active'")" = 1 ] && break
  sleep 0.05
done
sleep 0.5
[ "$(q -A -t -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE 'CALL hopper.fit_multiple(%out_cancelled%'")" = t ] \
  || fail "the long run was not found to cancel"
if wait "$c"; then fail "the cancelled run succeeded"; fi
grep -q "canceling statement due to user request" "$TMP/cancelled.log" || { cat "$TMP/cancelled.log" >&2; fail "unexpected error"; }
actual=$(q -A -t -c "SELECT count(*) FROM pg_class WHERE relname LIKE '\_\_hopper%' OR relname LIKE 'out\_cancelled%'")
[ "$actual" = 0 ] || fail "the cancelled run left $actual tables"
echo "fit_multiple_concurrent: ok"
