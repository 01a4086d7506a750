#!/usr/bin/env bash
# Cancel and timeouts: pg_cancel_backend and statement_timeout stop preprocess, fit, fit_multiple
# (training, or evaluating in the group of processes that trains) and parameter-server waits within
# a few seconds, on data big enough to run for a minute, and leave no working table (__hopper_*) and
# no output table behind. Runs against the test cluster (PGHOST, PGPORT, PGUSER set by
# test/cluster.sh); CANCEL_LIMIT (seconds, default 5) bounds how long a stop may take.
set -euo pipefail
DB=hopper_cancel
LIMIT=${CANCEL_LIMIT:-5}
WORK=$(mktemp -d /tmp/hopper-cancel.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
now_ms() { date +%s%3N; }
fail() { echo "cancel.sh: FAILED: $*" >&2; exit 1; }

PGOPTIONS="-c client_min_messages=warning" psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
-- 20,000 rows of 200 features; one iteration of the model below takes about 2 s on two cores.
CREATE TABLE big AS
SELECT g AS id, (SELECT array_agg(sin(g * 0.37 + k * 1.3)) FROM generate_series(1, 200) k)::float8[] AS x,
       (g % 10) AS y
FROM generate_series(1, 20000) g;
SELECT hopper.preprocess('big', 'big_packed', 'y', 'x', buffer_size => 200, num_segments => 2, scale => 'standardize');
-- A slow source (about 10 s per scan) for preprocess to be cancelled in.
CREATE VIEW slow_source AS SELECT id, x, y FROM big WHERE pg_catalog.pg_sleep(0.0005) IS NOT NULL;
-- Evaluation outweighing training: 400 rows to train on, the 20,000 to validate on (the group of
-- processes evaluates them while it trains: src/pg/training/hop_workers.h).
CREATE TABLE small AS SELECT * FROM big WHERE id <= 400;
SELECT hopper.preprocess('small', 'small_packed', 'y', 'x', buffer_size => 200, num_segments => 2, scale => 'standardize');
SELECT hopper.preprocess_validation('big', 'big_valid', 'y', 'x', 'small_packed');
SELECT hopper.load_model_arch('archs', '{"input_dim": 200, "layers": [{"units": 512, "activation": "relu"},
    {"units": 512, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('archs', 'configs', ARRAY[1],
    ARRAY[$$optimizer='Adam(lr=0.001)', metrics=['accuracy']$$, $$optimizer='SGD(lr=0.01, momentum=0.9)'$$],
    ARRAY['batch_size=50', 'batch_size=100']);
SQL

ARCH='{"input_dim": 200, "layers": [{"units": 512, "activation": "relu"}, {"units": 512, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}'
FIT="CALL hopper.fit('big_packed', 'OUT', '$ARCH', \$\$optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$, 'batch_size=50', 30)"
FIT_MULTIPLE="CALL hopper.fit_multiple('big_packed', 'OUT', 'configs', 30, metrics_compute_frequency => 1)"
FIT_EVAL="CALL hopper.fit_multiple('small_packed', 'OUT', 'configs', 30, 'big_valid', 1)"
PREPROCESS="SELECT hopper.preprocess('slow_source', 'OUT', 'y', 'x', buffer_size => 200, num_segments => 2)"

# Nothing of a stopped run may remain: no working table, no output, _info, _summary or partition.
check_clean() {
  local out=$1 what=$2
  local left
  left=$(q -c "SELECT string_agg(relname, ', ' ORDER BY relname) FROM pg_class
               WHERE relname LIKE '\_\_hopper%' OR relname LIKE '$out%'")
  [ -z "$left" ] || fail "$what left tables behind: $left"
}

# Runs SQL in the background, cancels it after `after` seconds, and checks how fast it stopped.
cancel_after() {
  local what=$1 sql=$2 out=$3 after=$4
  local log="$WORK/$out.log"
  PGAPPNAME="cancel_$out" psql -qX -d "$DB" -c "SET client_min_messages = warning" -c "${sql//OUT/$out}" >"$log" 2>&1 &
  local pid=$!
  sleep "$after"
  kill -0 $pid 2>/dev/null || { cat "$log"; fail "$what finished before it could be cancelled"; }
  local t0 t1
  t0=$(now_ms)
  [ "$(q -c "WITH target AS MATERIALIZED (SELECT pid FROM pg_stat_activity
                 WHERE application_name = 'cancel_$out' AND backend_type = 'client backend')
               SELECT count(*) FILTER (WHERE pg_cancel_backend(pid)) FROM target")" = 1 ] \
    || fail "$what: no backend to cancel"
  wait $pid || true
  t1=$(now_ms)
  grep -q "canceling statement due to user request" "$log" || { cat "$log"; fail "$what was not cancelled"; }
  local ms=$((t1 - t0))
  [ $ms -le $((LIMIT * 1000)) ] || fail "$what took ${ms} ms to stop after pg_cancel_backend (limit ${LIMIT} s)"
  check_clean "$out" "$what"
  printf '  %-34s stopped %5d ms after pg_cancel_backend, nothing left\n' "$what" $ms
}

# Runs SQL with statement_timeout and checks that it stopped soon after the timeout.
timeout_after() {
  local what=$1 sql=$2 out=$3 timeout=$4
  local log="$WORK/$out.log" t0 t1
  t0=$(now_ms)
  psql -qX -d "$DB" -c "SET client_min_messages = warning" -c "SET statement_timeout = '${timeout}s'" \
    -c "${sql//OUT/$out}" >"$log" 2>&1 || true
  t1=$(now_ms)
  grep -q "canceling statement due to statement timeout" "$log" || { cat "$log"; fail "$what did not time out"; }
  local late=$((t1 - t0 - timeout * 1000))
  [ $late -le $((LIMIT * 1000)) ] || fail "$what stopped ${late} ms after its statement_timeout (limit ${LIMIT} s)"
  check_clean "$out" "$what"
  printf '  %-34s stopped %5d ms after statement_timeout, nothing left\n' "$what" $late
}

echo "cancel.sh: stopping long runs (limit ${LIMIT} s)"
cancel_after "fit (mid-iteration 2)" "$FIT" c_fit 3
cancel_after "fit (first iteration)" "$FIT" c_fit_early 1
cancel_after "fit_multiple (mid-run)" "$FIT_MULTIPLE" c_fitm 4
cancel_after "preprocess" "$PREPROCESS" c_pre 2
cancel_after "fit_multiple (evaluating)" "$FIT_EVAL" c_eval 3
timeout_after "fit" "$FIT" t_fit 3
timeout_after "fit_multiple" "$FIT_MULTIPLE" t_fitm 5
timeout_after "preprocess" "$PREPROCESS" t_pre 2
timeout_after "fit_multiple (evaluating)" "$FIT_EVAL" t_eval 3
# Inside a transaction block the run is one transaction: a cancel rolls all of it back.
cancel_after "fit in BEGIN ... COMMIT" "BEGIN; $FIT; COMMIT;" c_fit_tx 3

# Parameter-server waits: under BSP, worker 0 one clock ahead waits in ps_get for worker 1, which
# never comes. The wait must end at a cancel or a timeout, and the table stay usable.
q -c "SELECT hopper.ps_create('c_ps', 10, num_workers => 2)" >/dev/null
PS_WAIT="SELECT hopper.ps_clock('c_ps', 0); SELECT hopper.ps_get('c_ps', 0, '{0, 1}')"
cancel_after "ps_get waiting (BSP)" "$PS_WAIT" c_ps_wait 2
timeout_after "ps_get waiting (BSP)" "$PS_WAIT" t_ps_wait 2
[ "$(q -c "SELECT hopper.ps_drop('c_ps')")" = t ] || fail "the parameter table is not usable after the cancels"

# The database is still usable, and a run after all this completes.
q -c "SET client_min_messages = warning" \
  -c "CALL hopper.fit('big_packed', 'after_cancel', '$ARCH', \$\$optimizer='Adam(lr=0.001)'\$\$, 'batch_size=50', 1)"
[ "$(q -c "SELECT count(*) FROM after_cancel_info WHERE status = 'completed'")" = 1 ] || fail "a run after the cancels did not complete"
psql -qX -d postgres -c "DROP DATABASE $DB"
echo "cancel.sh: ok"
