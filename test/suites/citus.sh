#!/usr/bin/env bash
# hopper on Citus, against a real Citus cluster (test/citus-cluster.sh: a coordinator and 2 workers
# on unix sockets) and a plain PostgreSQL cluster from the same PostgreSQL tree:
#   1. bit for bit: test/citus/bitwise.sql (fit_multiple with 4 configurations on 4 segments, with
#      waiting models, with idle segments, fit, warm start) gives the same model states, buffers per
#      segment and (rounded) learning curves on both engines;
#   2. EXPLAIN (auto_explain of hopper's own statements): the training statement is pushed down to
#      all 4 shards on both workers, the hop is a repartitioned INSERT ... SELECT;
#   3. regression files on the Citus coordinator (pg_regress --use-existing): test/citus/sql/*.sql,
#      and those of sql/ that apply to Citus, compared with test/citus/expected/NAME.out where the
#      output differs on Citus (dist_key values, partitions vs shards, roles) or test/regress/expected/NAME.out;
#   4. a cancel in the middle of a run leaves no working table and no prepared transaction on any node;
#   5. a cancel in the middle of preprocess (a coordinator table, a distributed one) leaves no packed
#      table, shard or prepared transaction on any node;
#   6. a kill -9 of a worker's backend during fit_multiple leaves nothing behind, the run is recorded
#      as interrupted, and resumed from its checkpoints it gives the models of an uninterrupted run.
#
# Citus is not in Debian's archive and CI has none: when the PostgreSQL tree of PG_BIN (or
# HOPPER_CITUS_PG_BIN) has no Citus, the suite says so and exits 0. To run it, build Citus and
# install it and hopper into a private tree (docs/citus.md), then
#   PG_BIN=/tmp/tree/usr/lib/postgresql/15/bin bash test/suites/citus.sh
# HOPPER_CITUS_PORT (default 55430): coordinator port; workers use the next ports, the plain cluster
# port + 9. HOPPER_CITUS_DIR (default /tmp/hopper-citus-suite): where the clusters live (a fixed
# place: node names appear in some expected messages). HOPPER_CITUS_KEEP=1 leaves them running.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
export PG_BIN=${HOPPER_CITUS_PG_BIN:-${PG_BIN:-/usr/lib/postgresql/15/bin}}
PORT=${HOPPER_CITUS_PORT:-55430}
DIR=${HOPPER_CITUS_DIR:-/tmp/hopper-citus-suite}
# Regression files of sql/ that apply on Citus. (bad_input, bad_input_walk and privileges work in
# databases of their own, where Citus is not installed; combine's topology tables name plain
# PostgreSQL's dist_key values 0..7 -- the combine on Citus is tested in test/citus/sql/citus.sql.)
REGRESS_FILES=${HOPPER_CITUS_REGRESS:-"preprocess fit fit_multiple model_selection registry ps automl tabular predict_by_name class_values shared_views frozen_layers plots embeddings onnx pack_sources"}

if ! why=$(test/citus-cluster.sh check 2>&1); then
  echo "SKIP test/suites/citus.sh: Citus is not available, nothing to test."
  echo "$why" | sed 's/^/  /'
  exit 0
fi

PSQL="$PG_BIN/psql -X -q -v ON_ERROR_STOP=1 -U postgres -d postgres"
WORK=$(mktemp -d /tmp/hopper-citus-work.XXXXXX)
chmod 755 "$WORK"
cleanup() {
  local rc=$?
  if [ -z "${HOPPER_CITUS_KEEP:-}" ]; then
    test/citus-cluster.sh stop "$DIR/citus" >/dev/null 2>&1 || true
    test/cluster.sh stop "$DIR/plain" >/dev/null 2>&1 || true
  fi
  if [ $rc -ne 0 ]; then
    echo "citus suite FAILED; files in $WORK"
  else
    rm -rf "$WORK"
  fi
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# A previous run's clusters (the place is fixed) are stopped first.
test/citus-cluster.sh stop "$DIR/citus" >/dev/null 2>&1 || true
test/cluster.sh stop "$DIR/plain" >/dev/null 2>&1 || true
mkdir -p "$DIR"
chmod 755 "$DIR"
HOPPER_CITUS_PORT=$PORT test/citus-cluster.sh start "$DIR/citus" >/dev/null
HOPPER_TEST_PORT=$((PORT + 9)) test/cluster.sh start "$DIR/plain" >/dev/null
CITUS="-h $DIR/citus/coordinator -p $PORT"
PLAIN="-h $DIR/plain -p $((PORT + 9))"
$PSQL $PLAIN -c "CREATE EXTENSION hopper"
echo "Citus $($PSQL $CITUS -At -c "SELECT extversion FROM pg_extension WHERE extname = 'citus'"):" \
     "coordinator and $($PSQL $CITUS -At -c "SELECT count(*) FROM pg_dist_node WHERE groupid <> 0") workers in $DIR/citus"

echo "== 1. the same training on plain PostgreSQL and on Citus"
$PSQL $PLAIN -f test/citus/bitwise.sql >"$WORK/bitwise.plain" 2>&1 || { cat "$WORK/bitwise.plain"; fail "bitwise.sql on plain PostgreSQL"; }
$PSQL $CITUS -f test/citus/bitwise.sql >"$WORK/bitwise.citus" 2>&1 || { cat "$WORK/bitwise.citus"; fail "bitwise.sql on Citus"; }
engine=$($PSQL $CITUS -At -c "SELECT citus_table_type || ' ' || shard_count FROM citus_tables WHERE table_name = 'bitwise.bw_packed'::regclass")
[ "$engine" = "distributed 4" ] || fail "bw_packed on Citus is not distributed over 4 shards ($engine)"
if ! diff -u "$WORK/bitwise.plain" "$WORK/bitwise.citus"; then
  fail "plain PostgreSQL and Citus differ"
fi
states=$(sed -n '/== model states/,/rows)/p' "$WORK/bitwise.citus" | grep -c '|' || true)
echo "ok: $((states - 1)) model states (fit_multiple M=S=4 with warm start, M=6>S, M=2<S, fit, fit_data_parallel with 3 levels and by the rule) identical bit for bit, as are the buffers per segment and every loss and metric"

echo "== 2. EXPLAIN of hopper's statements on Citus"
$PSQL $CITUS >"$WORK/explain.citus" 2>&1 <<'SQL' || { cat "$WORK/explain.citus"; fail "explain run"; }
SET search_path = bitwise, public;
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = notice;
SET citus.explain_all_tasks = on;
SET client_min_messages = notice;
CALL hopper.fit_multiple('bw_packed', 'bw_explained', 'bw_mst6', 1);
SQL
# The plans of the training statements (INSERT INTO ..._model_output) and of the hops (INSERT INTO ..._model_input ... FROM ..._model_output).
awk '/^Query Text: INSERT INTO .*_model_output .*train_segment/{p=1; print "@@ training"; next}
     /^Query Text: INSERT INTO .*_model_input .*FROM .*_model_output/{p=1; print "@@ hop"; next}
     /^NOTICE:/{p=0} p' "$WORK/explain.citus" >"$WORK/explain.plans"
training=$(grep -c '^@@ training' "$WORK/explain.plans" || true)
hops=$(grep -c '^@@ hop' "$WORK/explain.plans" || true)
[ "$training" -eq 6 ] || fail "expected 6 training statements (M=6, S=4: 6 hops), found $training"
[ "$hops" -eq 5 ] || fail "expected 5 hop statements, found $hops"
first_plan() { awk -v t="$1" '/^@@ /{inb = ($2 == t && !seen); if (inb) seen = 1; next} inb' "$WORK/explain.plans"; }
first_training=$(first_plan training)
echo "$first_training" | grep -q 'Custom Scan (Citus Adaptive)' || fail "training statement not run by the Citus executor"
echo "$first_training" | grep -q 'Task Count: 4' || fail "training statement not sent to the 4 shards"
[ "$(echo "$first_training" | grep -c 'Insert on .*_model_output_[0-9]')" -eq 4 ] || fail "training not pushed down to every shard (an INSERT per shard)"
[ "$(echo "$first_training" | grep -c 'GroupAggregate')" -ge 4 ] || fail "training aggregate not run on the shards"
[ "$(echo "$first_training" | grep 'Node: host=' | sort -u | wc -l)" -eq 2 ] || fail "training tasks not on both workers"
if echo "$first_training" | grep -q 'INSERT/SELECT method'; then fail "training statement not pushed down (INSERT/SELECT through the coordinator or repartitioned)"; fi
first_hop=$(first_plan hop)
echo "$first_hop" | grep -q 'INSERT/SELECT method: repartition' || fail "the hop is not a repartitioned INSERT ... SELECT"
echo "ok: training pushed down to all 4 shards on both workers (Task Count: 4, Insert on each shard), hop repartitioned"
echo "$first_training" | sed -n '1,/Node: host/p' | sed 's/^/    /'

echo "== 3. regression files on the Citus coordinator"
mkdir -p "$WORK/regress/sql" "$WORK/regress/expected"
tests=""
for f in test/citus/sql/*.sql; do
  t=$(basename "$f" .sql); tests="$tests $t"
  cp "$f" "$WORK/regress/sql/"; cp "test/citus/expected/$t.out" "$WORK/regress/expected/"
done
for t in $REGRESS_FILES; do
  tests="$tests $t"
  cp "test/regress/sql/$t.sql" "$WORK/regress/sql/"
  if [ -f "test/citus/expected/$t.out" ]; then cp "test/citus/expected/$t.out" "$WORK/regress/expected/"; else cp "test/regress/expected/$t.out" "$WORK/regress/expected/"; fi
done
PG_REGRESS=$("$PG_BIN/pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress
[ -x "$PG_REGRESS" ] || PG_REGRESS=/usr/lib/postgresql/15/lib/pgxs/src/test/regress/pg_regress
# pg_regress runs the files; the outputs are compared here after normalizing what varies between
# clusters and runs (which worker reported an error first, process ids in working table names) and
# what Citus adds to any session's output without changing its results: error context lines (the
# worker that ran the statement, and the statement hopper issued there), its warning that a
# function created in pg_temp stays on the coordinator, and its warning that a view or function on a
# coordinator table is not distributed.
normalize() {
  sed -E -e '/^CONTEXT:  /d; /^SQL statement "/d' \
         -e '/has dependency on unsupported object "schema pg_temp_[0-9N]+"$/d; /will be created only locally$/d' \
         -e "/has dependency to \"table [^\"]+\" that is not in Citus' metadata\$/d" \
         -e '/^HINT:  Distribute "table [^"]+" first to distribute "[^"]+"$/d' \
         -e 's#[^ ]*/worker[0-9]+:[0-9]+#<worker>#g; s#__hopper_[0-9]+_#__hopper_N_#g' "$1"
}
(cd "$WORK/regress" && PGHOST=$DIR/citus/coordinator PGPORT=$PORT PGUSER=postgres \
   "$PG_REGRESS" --use-existing --dbname=postgres --inputdir=. --outputdir=. --bindir="$PG_BIN" $tests >/dev/null) || true
failed=""
for t in $tests; do
  if [ -f "$WORK/regress/results/$t.out" ] &&
     diff -u <(normalize "$WORK/regress/expected/$t.out") <(normalize "$WORK/regress/results/$t.out") >"$WORK/regress/$t.diff"; then
    echo "ok: $t"
  else
    echo "FAILED: $t"; head -100 "$WORK/regress/$t.diff"; failed="$failed $t"
  fi
done
[ -z "$failed" ] || fail "regression files on Citus:$failed"

echo "== 4. a cancelled run leaves nothing behind"
$PSQL $CITUS -c "CREATE TABLE bitwise.cancel_me AS SELECT 1" >/dev/null
( $PSQL $CITUS -c "SET application_name = 'hopper_cancel_me'" \
    -c "CALL hopper.fit_multiple('bitwise.bw_packed', 'bitwise.bw_cancelled', 'bitwise.bw_mst6', 1000)" \
    >"$WORK/cancel.out" 2>&1 || true ) &
runner=$!
for _ in $(seq 1 100); do
  busy=$($PSQL $CITUS -At -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'hopper_cancel_me' AND query LIKE 'CALL%'")
  [ "$busy" = 1 ] && break
  sleep 0.1
done
sleep 2
$PSQL $CITUS -At -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'hopper_cancel_me'" >/dev/null
wait $runner
grep -q 'canceling statement due to user request' "$WORK/cancel.out" || { cat "$WORK/cancel.out"; fail "the run was not cancelled"; }
sleep 1
left=$($PSQL $CITUS -At -c "SELECT string_agg(result, ',' ORDER BY nodeid) FROM run_command_on_all_nodes(\$\$SELECT count(*) FROM pg_class WHERE relname LIKE '\_\_hopper%'\$\$)")
[ "$left" = "0,0,0" ] || fail "working tables left after a cancel: $left (coordinator, worker1, worker2)"
prepared=$($PSQL $CITUS -At -c "SELECT string_agg(result, ',' ORDER BY nodeid) FROM run_command_on_all_nodes('SELECT count(*) FROM pg_prepared_xacts')")
[ "$prepared" = "0,0,0" ] || fail "prepared transactions left after a cancel: $prepared"
committed=$($PSQL $CITUS -At -c "SELECT count(*) FROM hopper.runs WHERE model_output_table = 'bitwise.bw_cancelled'")
echo "ok: cancelled after $(grep -c 'iteration [0-9]*/1000' "$WORK/cancel.out" || true) iterations; no working table, no prepared transaction on any node ($committed run recorded)"

# Every node: how many relations named like $1 (LIKE pattern), and how many prepared transactions
# are pending (after Citus's own recovery of those a crash left: recover_prepared_transactions).
on_nodes() {
  $PSQL $CITUS -At -c "SELECT string_agg(result, ',' ORDER BY nodeid) FROM run_command_on_all_nodes(\$\$$1\$\$)"
}
nothing_left() {  # nothing_left WHAT PATTERN
  local left prepared
  left=$(on_nodes "SELECT count(*) FROM pg_class WHERE relname LIKE '$2'")
  [ "$left" = "0,0,0" ] || fail "$1: relations $2 left: $left (coordinator, worker1, worker2)"
  $PSQL $CITUS -At -c "SELECT recover_prepared_transactions()" >/dev/null
  prepared=$(on_nodes "SELECT count(*) FROM pg_prepared_xacts")
  [ "$prepared" = "0,0,0" ] || fail "$1: prepared transactions left: $prepared"
}
# Waits until a session named $1 runs a statement starting with $2 on the coordinator.
wait_running() {
  local busy
  for _ in $(seq 1 200); do
    busy=$($PSQL $CITUS -At -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$1' AND state = 'active' AND query LIKE '$2%'")
    [ "$busy" = 1 ] && return 0
    sleep 0.1
  done
  fail "$1 did not start"
}

echo "== 5. a cancelled preprocess leaves no half-written table"
# 200,000 rows of 50 floats: packing writes 800 buffers to the shards, seconds on Citus (5 s on a
# 2-core EPYC), so the cancel 1 s after the start lands in the middle of it.
$PSQL $CITUS -c "CREATE TABLE bitwise.big AS SELECT g AS id, ARRAY(SELECT sin(g * 0.011 + k * 0.7) FROM generate_series(1, 50) k)::float8[] AS x, g % 5 AS y FROM generate_series(1, 200000) g" \
  -c "CREATE TABLE bitwise.big_d AS SELECT * FROM bitwise.big" -c "SET client_min_messages = warning" \
  -c "SELECT create_distributed_table('bitwise.big_d', 'id')" >/dev/null
for src in big big_d; do
  ( $PSQL $CITUS -c "SET application_name = 'hopper_cancel_pack'" \
      -c "SELECT hopper.preprocess('bitwise.$src', 'bitwise.${src}_packed', 'y', 'x', buffer_size => 250, num_segments => 4)" \
      >"$WORK/cancel_$src.out" 2>&1 || true ) &
  runner=$!
  wait_running hopper_cancel_pack "SELECT hopper.preprocess"
  sleep 1
  $PSQL $CITUS -At -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'hopper_cancel_pack'" >/dev/null
  wait $runner
  grep -q 'canceling statement due to user request' "$WORK/cancel_$src.out" || { cat "$WORK/cancel_$src.out"; fail "preprocess of $src was not cancelled"; }
  nothing_left "cancelled preprocess of $src" "${src}\_packed%"
done
echo "ok: preprocess of a coordinator table and of a distributed one cancelled; no packed table or shard, no prepared transaction on any node"

echo "== 6. a worker's backend killed during a run; the run resumed from its checkpoints"
( $PSQL $CITUS -c "SET application_name = 'hopper_kill_me'" \
    -c "CALL hopper.fit_multiple('bitwise.bw_packed', 'bitwise.bw_killed', 'bitwise.bw_mst4', 1000, checkpoint_frequency => 1, name => 'bw killed')" \
    >"$WORK/kill.out" 2>&1 || true ) &
runner=$!
wait_running hopper_kill_me "CALL"
# Some iterations commit their checkpoints first.
for _ in $(seq 1 100); do
  done_its=$($PSQL $CITUS -At -c "SELECT count(*) FROM hopper.checkpoints_expanded c JOIN hopper.runs r ON r.run_id = c.run_id WHERE r.name = 'bw killed'")
  [ "$done_its" -ge 8 ] && break
  sleep 0.1
done
W1="$PSQL -h $DIR/citus/worker1 -p $((PORT + 1))"
victim=$($W1 -At -c "SELECT pid FROM pg_stat_activity WHERE application_name LIKE 'citus_internal%' AND backend_type = 'client backend' AND pid <> pg_backend_pid() ORDER BY state = 'active' DESC LIMIT 1")
[ -n "$victim" ] || fail "no backend of the run on worker1"
restarts() { grep -c "all server processes terminated; reinitializing" "$DIR/citus/worker1/server.log" || true; }
restarts_before=$(restarts)
kill -9 "$victim"
wait $runner
grep -q 'iteration [0-9]*/1000' "$WORK/kill.out" || { cat "$WORK/kill.out"; fail "the killed run trained no iteration"; }
if grep -q '^CALL' "$WORK/kill.out"; then fail "the run finished before the kill"; fi
# Crash recovery restarts every backend of worker1. A connection tried before the postmaster has
# noticed the kill succeeds, and the next one then fails in recovery: wait for the restart itself to
# show in the log, then for connections (under load that took over 20 s; with a CI run beside it,
# over a minute): two in a row, a second apart.
for _ in $(seq 1 900); do [ "$(restarts)" -gt "$restarts_before" ] && break; sleep 0.2; done
for _ in $(seq 1 900); do
  $PSQL -h "$DIR/citus/worker1" -p $((PORT + 1)) -c "SELECT 1" >/dev/null 2>&1 && sleep 1 &&
    $PSQL -h "$DIR/citus/worker1" -p $((PORT + 1)) -c "SELECT 1" >/dev/null 2>&1 && break
  sleep 0.2
done
nothing_left "worker backend killed during a run" "\_\_hopper%"
run=$($PSQL $CITUS -At -c "SELECT run_id || ' ' || state FROM hopper.runs WHERE name = 'bw killed'")
[ "${run#* }" = "INTERRUPTED" ] || fail "the killed run is recorded as '${run#* }', not INTERRUPTED"
run=${run%% *}
last=$($PSQL $CITUS -At -c "SELECT min(i) FROM (SELECT max(iteration) AS i FROM hopper.checkpoints_expanded WHERE run_id = $run GROUP BY mst_key) s")
[ "$last" -ge 1 ] || fail "the killed run left no checkpoint"
# Resumed for 2 iterations, it gives exactly the models of an uninterrupted run of last + 2.
$PSQL $CITUS -c "SET client_min_messages = warning" \
  -c "CALL hopper.fit_multiple('bitwise.bw_packed', 'bitwise.bw_resumed', 'bitwise.bw_mst4', 2, warm_start_run => $run)" \
  -c "CALL hopper.fit_multiple('bitwise.bw_packed', 'bitwise.bw_straight', 'bitwise.bw_mst4', $((last + 2)))" >/dev/null
same=$($PSQL $CITUS -At -c "SELECT count(*) || '/' || count(*) FILTER (WHERE a.model_state = b.model_state) FROM bitwise.bw_resumed a JOIN bitwise.bw_straight b USING (mst_key)")
[ "$same" = "4/4" ] || fail "the resumed run differs from an uninterrupted one: $same identical"
echo "ok: worker1's backend killed after $last iterations; nothing left on any node, the run INTERRUPTED, resumed for 2 iterations it equals an uninterrupted run of $((last + 2)) bit for bit"

echo "citus suite passed"
