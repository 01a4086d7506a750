#!/usr/bin/env bash
# A table dropped while a run reads it: CALL hopper.fit commits after every iteration and holds no
# lock on its packed and validation tables in between, so another session's DROP TABLE goes through
# there. The run then stops at its next iteration with 42P01 naming the table (it failed with
# hopper's own SQL in its context), keeps the checkpoints of the iterations before, and leaves no
# working table. Runs against the test cluster (PGHOST, PGPORT, PGUSER set by test/cluster.sh).
set -euo pipefail
DB=hopper_drop_during_run
WORK=$(mktemp -d /tmp/hopper-drop.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "drop_during_run.sh: FAILED: $*" >&2; exit 1; }

PGOPTIONS="-c client_min_messages=warning" psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
-- 4,000 rows of 50 features; an iteration of the model below takes a few tenths of a second.
CREATE TABLE pts AS
SELECT g AS id, (SELECT array_agg(sin(g * 0.37 + k * 1.3)) FROM generate_series(1, 50) k)::float8[] AS x, (g % 4) AS y
FROM generate_series(1, 4000) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'y', 'x', buffer_size => 100, num_segments => 2);
SELECT hopper.preprocess_validation('pts', 'pts_valid', 'y', 'x', 'pts_packed');
SQL

( q -c "CALL hopper.fit('pts_packed', 'm', '{\"layers\": [{\"units\": 256, \"activation\": \"relu\"}, {\"units\": 4, \"activation\": \"softmax\"}]}', num_iterations => 200, validation_table => 'pts_valid')" \
    >"$WORK/fit.out" 2>&1 || true ) &
runner=$!
# Once an iteration has committed, drop the validation table (it waits for the iteration under way).
for _ in $(seq 1 300); do
  done_iterations=$(q -c "SELECT count(*) FROM hopper.checkpoints_expanded" 2>/dev/null || echo 0)
  [ "${done_iterations:-0}" -ge 1 ] && break
  sleep 0.1
done
[ "${done_iterations:-0}" -ge 1 ] || fail "no iteration committed in 30 s"
q -c "DROP TABLE pts_valid, pts_valid_summary"
wait $runner
grep -q 'ERROR:  validation table public.pts_valid was dropped during the run' "$WORK/fit.out" ||
  { cat "$WORK/fit.out"; fail "the run did not stop naming the dropped table"; }
grep -q 'CONTEXT:' "$WORK/fit.out" && { cat "$WORK/fit.out"; fail "the error carries hopper's SQL as context"; }
kept=$(q -c "SELECT count(*) FROM hopper.checkpoints_expanded WHERE state = 'COMPLETED'")
[ "$kept" -ge 1 ] || fail "no checkpoint kept"
left=$(q -c "SELECT count(*) FROM pg_class WHERE relname LIKE '\_\_hopper%'")
[ "$left" = 0 ] || fail "$left working tables left"
status=$(q -c "SELECT state FROM hopper.runs ORDER BY run_id DESC LIMIT 1")
echo "ok: the run stopped naming the dropped validation table ($(grep -c 'iteration [0-9]*/200' "$WORK/fit.out" || true) iterations done, $kept checkpoints kept, run $status, no working table)"

# The same table changed under the same OID: a column retyped between iterations (a table emptied
# and turned into a view kept its OID too, and its functions then ran as the caller). The run stops
# naming the table instead of reading the column as real[] (XX000 "cache lookup failed").
q >/dev/null <<'SQL'
SET client_min_messages = warning;
SELECT hopper.preprocess_validation('pts', 'pts_valid2', 'y', 'x', 'pts_packed');
SQL
( q -c "CALL hopper.fit('pts_packed', 'm2', '{\"layers\": [{\"units\": 256, \"activation\": \"relu\"}, {\"units\": 4, \"activation\": \"softmax\"}]}', num_iterations => 200, validation_table => 'pts_valid2')" \
    >"$WORK/fit2.out" 2>&1 || true ) &
runner=$!
before=$(q -c "SELECT count(*) FROM hopper.checkpoints_expanded")
for _ in $(seq 1 300); do
  now=$(q -c "SELECT count(*) FROM hopper.checkpoints_expanded" 2>/dev/null || echo "$before")
  [ "$now" -gt "$before" ] && break
  sleep 0.1
done
[ "$now" -gt "$before" ] || fail "no iteration of the second run committed in 30 s"
q -c "ALTER TABLE pts_valid2 ALTER COLUMN independent_var TYPE float8[]"
wait $runner
grep -q 'ERROR:  validation table public.pts_valid2 was changed during the run' "$WORK/fit2.out" ||
  { cat "$WORK/fit2.out"; fail "the run did not stop naming the changed table"; }
echo "ok: the run stopped naming the retyped validation table ($(grep -c 'iteration [0-9]*/200' "$WORK/fit2.out" || true) iterations done)"
psql -qX -d postgres -c "DROP DATABASE $DB" >/dev/null
