#!/usr/bin/env bash
# Crash recovery: fit_multiple (CALL outside a transaction block, one commit per iteration, a
# checkpoint per configuration and iteration) is killed with an immediate shutdown of the whole
# server at several points of its run; after a restart:
#   * the output tables are absent or complete (never half-written), no working table remains;
#   * every checkpoint that was complete before the crash is still there and complete;
#   * warm start from the crashed run (warm_start_run) continues from its last checkpoints and
#     finishes, and its models have trained further than the checkpoints.
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT, HOPPER_CLUSTER). CRASH_POINTS overrides
# the kill points: "N" kills once N iterations have committed ("0": inside the first iteration).
set -euo pipefail
DB=hopper_crash
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DATA=${HOPPER_CLUSTER:?crash_recovery.sh needs HOPPER_CLUSTER (test/cluster.sh)}/data
POINTS=${CRASH_POINTS:-"0 1 2 4"}
# Far more iterations than the last kill point, so that the run is still going when the kill comes
# even on a fast, quiet machine: an iteration here takes tens of milliseconds, and between the poll
# that sees point N committed and the kill the run went on by up to 6 iterations (with 10, the run
# killed at point 4 had finished: 2026-11-28, AMD EPYC family 25). The resumed run trains at most
# RESUME_ITERATIONS of what is left.
ITERATIONS=40
RESUME_ITERATIONS=5
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "crash_recovery.sh: FAILED: $*" >&2; exit 1; }
as_owner() {
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}
crash() { as_owner "$PG_BIN/pg_ctl" -D "$DATA" -m immediate -w stop >/dev/null; }
start() { as_owner "$PG_BIN/pg_ctl" -D "$DATA" -l "$HOPPER_CLUSTER/server.log" -w -t 120 start >/dev/null; }
# If anything fails, leave the server running for the scripts after this one.
trap 'pg_isready -q || start || true' EXIT

# The test cluster runs with synchronous_commit = off (test/cluster.sh), under which a crash may lose
# the last commits -- by design, not hopper's doing. This database gets PostgreSQL's default back, so
# that "committed before the crash" means what it means in production.
PGOPTIONS="-c client_min_messages=warning" psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB" -c "ALTER DATABASE $DB SET synchronous_commit = on"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE src AS
SELECT g AS id, (SELECT array_agg(sin(g * 0.11 + k * 0.7)) FROM generate_series(1, 20) k)::float8[] AS x,
       (g % 10) AS y
FROM generate_series(1, 4000) g;
SELECT hopper.preprocess('src', 'packed', 'y', 'x', buffer_size => 100, num_segments => 2, scale => 'standardize');
SELECT hopper.load_model_arch('archs', '{"input_dim": 20, "layers": [{"units": 128, "activation": "relu"},
    {"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('archs', 'configs', ARRAY[1],
    ARRAY[$$optimizer='Adam(lr=0.001)', metrics=['accuracy']$$, $$optimizer='SGD(lr=0.05, momentum=0.9)', metrics=['accuracy']$$],
    ARRAY['batch_size=20', 'batch_size=50']);
SQL

# Output tables of a run: absent, or complete (4 models, their info rows, a summary).
count_rows() {
  if [ -z "$(q -c "SELECT to_regclass('$1')")" ]; then echo -1; else q -c "SELECT count(*) FROM $1"; fi
}
check_output() {
  local out=$1 shape
  shape="$(count_rows "$out")/$(count_rows "${out}_info")/$(count_rows "${out}_summary")"
  case "$shape" in
    -1/-1/-1) echo absent ;;
    4/4/1) echo complete ;;
    *) fail "$out is half-written (models/info/summary rows: $shape)" ;;
  esac
}
check_no_working_tables() {
  local left
  left=$(q -c "SELECT string_agg(relname, ', ') FROM pg_class WHERE relname LIKE '\_\_hopper%'")
  [ -z "$left" ] || fail "working tables left after the crash: $left"
}

runs=0
for point in $POINTS; do
  out="crash_$point"
  log=$(mktemp)
  psql -qX -d "$DB" -c "SET client_min_messages = warning" \
    -c "CALL hopper.fit_multiple('packed', '$out', 'configs', $ITERATIONS, metrics_compute_frequency => 1,
                                 checkpoint_frequency => 1, name => '$out')" >"$log" 2>&1 &
  pid=$!
  # Wait until `point` iterations have committed (their checkpoints are visible), then a little more
  # so that the kill lands inside the next iteration.
  for _ in $(seq 1 600); do
    done_its=$(q -c "SELECT coalesce(min(iteration), 0) FROM hopper.latest_checkpoints WHERE run_name = '$out'
                     HAVING count(*) = 4 UNION ALL SELECT 0 LIMIT 1" 2>/dev/null || echo 0)
    [ "${done_its:-0}" -ge "$point" ] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.1
  done
  kill -0 $pid 2>/dev/null || { cat "$log"; fail "the run finished before the kill point $point"; }
  sleep 0.05
  before=$(q -c "SELECT coalesce(string_agg(uuid::text, ',' ORDER BY uuid), '') FROM hopper.checkpoints_expanded
                 WHERE run_name = '$out' AND state = 'COMPLETED'")
  crash
  wait $pid || true
  start
  runs=$((runs + 1))

  state=$(check_output "$out")
  check_no_working_tables
  # Completed checkpoints survive, still complete.
  after=$(q -c "SELECT coalesce(string_agg(uuid::text, ',' ORDER BY uuid), '') FROM hopper.checkpoints_expanded
                WHERE run_name = '$out' AND state = 'COMPLETED'")
  for u in ${before//,/ }; do
    case ",$after," in *",$u,"*) ;; *) fail "checkpoint $u was complete before the crash and is gone";; esac
  done
  last=$(q -c "SELECT coalesce(min(iteration), 0) FROM hopper.latest_checkpoints WHERE run_name = '$out'")
  run_id=$(q -c "SELECT run_id FROM hopper.runs WHERE name = '$out'")
  # Warm start from the crashed run's last checkpoints (or from scratch if it had none) finishes.
  rest=$((ITERATIONS - last))
  [ "$rest" -gt 0 ] || fail "the run had finished all $ITERATIONS iterations when the kill came (point $point)"
  [ "$rest" -le "$RESUME_ITERATIONS" ] || rest=$RESUME_ITERATIONS
  if [ "$last" -gt 0 ]; then
    steps_before=$(q -c "SELECT min(steps_completed) FROM hopper.latest_checkpoints WHERE run_id = $run_id")
    q -c "SET client_min_messages = warning" \
      -c "CALL hopper.fit_multiple('packed', '${out}_resumed', 'configs', $rest, warm_start_run => $run_id)"
    [ "$(check_output "${out}_resumed")" = complete ] || fail "warm start after the crash left no output"
    steps_after=$(q -c "SELECT min(steps) FROM ${out}_resumed_info")
    [ "$steps_after" -gt "$steps_before" ] || fail "warm start did not continue from the checkpoints ($steps_after <= $steps_before steps)"
    resumed="resumed from iteration $last ($steps_before -> $steps_after steps)"
  else
    q -c "SET client_min_messages = warning" -c "CALL hopper.fit_multiple('packed', '${out}_resumed', 'configs', $rest)"
    [ "$(check_output "${out}_resumed")" = complete ] || fail "a run after the crash left no output"
    resumed="no checkpoint yet: trained again from scratch"
  fi
  n_before=$(echo "$before" | tr ',' '\n' | grep -c . || true)
  printf '  kill after %s committed iterations: output %s, %d checkpoints kept, %s\n' "$point" "$state" "$n_before" "$resumed"
  rm -f "$log"
done
psql -qX -d postgres -c "DROP DATABASE $DB"
echo "crash_recovery.sh: ok ($runs crashes)"
