#!/usr/bin/env bash
# Parameter tables driven by separate worker processes through the C++ client (hopper_ps_tool,
# client/tools/ps_tool.cpp), each with its own connection:
#   - BSP, 3 workers each adding 1 to every key per iteration: a Get at clock c sees exactly 3c;
#   - SSP(1) and ASP with 3 workers: every Get within the consistency's bounds;
#   - the client's errors carry the server's SQLSTATEs;
#   - the example (logistic regression, 2 worker processes, SSP) learns a small synthetic problem.
# Needs PGHOST/PGPORT/PGUSER of a cluster with hopper preloaded (test/cluster.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=hopper_ps_workers
BUILD=${HOPPER_PS_BUILD:-$ROOT/build/core}
if [ ! -x "$BUILD/hopper_ps_tool" ] || [ ! -x "$BUILD/ps_logreg" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" --target hopper_ps_tool ps_logreg -j2 >/dev/null
fi
TOOL=$BUILD/hopper_ps_tool
CONN="dbname=$DB"
fail() { echo "FAIL: $*" >&2; exit 1; }
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }

psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" \
  -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
sql "CREATE EXTENSION hopper" >/dev/null

# run_workers TABLE ITERATIONS KEYS SEED: three worker processes at once; all must pass.
run_workers() {
  local pids=() w rc=0
  for w in 0 1 2; do
    "$TOOL" check "$CONN" "$1" "$w" "$2" "$3" "$4" >/dev/null &
    pids+=($!)
  done
  for w in 0 1 2; do wait "${pids[$w]}" || rc=1; done
  [ $rc = 0 ] || fail "workers on $1 failed"
}

for round in 1 2; do
  echo "-- BSP, 3 worker processes, round $round: a Get at clock c sees exactly 3c"
  sql "SELECT hopper.ps_create('bsp', 8, chunk_size => 4, num_workers => 3)" >/dev/null
  run_workers bsp 40 8 "$round"
  [ "$(sql "SELECT hopper.ps_get_chunk('bsp', 0, '{0,1}')")" = "{120,120,120,120,120,120,120,120}" ] \
    || fail "BSP final values: $(sql "SELECT hopper.ps_get_chunk('bsp', 0, '{0,1}')")"
  sql "SELECT hopper.ps_drop('bsp')" >/dev/null
done
echo "   $(sql "SELECT 'ok'")"

echo "-- SSP(1), 3 worker processes: every Get between 3(c-1) and 3(c+2)"
sql "SELECT hopper.ps_create('ssp', 8, chunk_size => 2, consistency => 'ssp', staleness => 1, num_workers => 3)" >/dev/null
run_workers ssp 40 8 3
[ "$(sql "SELECT hopper.ps_get('ssp', 0, '{0,7}')")" = "{120,120}" ] || fail "SSP final values"

echo "-- ASP, 3 worker processes"
sql "SELECT hopper.ps_create('asp', 8, chunk_size => 8, consistency => 'asp', num_workers => 3)" >/dev/null
run_workers asp 40 8 4
[ "$(sql "SELECT hopper.ps_get('asp', 0, '{0,7}')")" = "{120,120}" ] || fail "ASP final values"
sql "SELECT waits FROM hopper.ps_tables WHERE name = 'asp'" | grep -qx 0 || fail "an ASP Get waited"

echo "-- client errors"
"$TOOL" expect-error "$CONN" nope 0 42704 get 1
"$TOOL" expect-error "$CONN" asp 0 22023 get 3 1
"$TOOL" expect-error "$CONN" asp 0 22023 get 8
"$TOOL" expect-error "$CONN" asp 5 22023 get 1
"$TOOL" expect-error "$CONN" asp 0 22023 add 2 2
"$TOOL" expect-error "$CONN" asp 0 22023 add_short 1
"$TOOL" expect-error "$CONN" asp 0 22023 get_chunk 1
"$TOOL" expect-error "dbname=${DB}_missing" asp 0 08001 get 1

echo "-- the example: logistic regression with 2 worker processes under SSP (synthetic data)"
out=$("$BUILD/ps_logreg" --conninfo "$CONN" --synthetic --workers 2 --iterations 150 --batch 32 --lr 0.1 \
      --consistency ssp --staleness 1 --table logreg)
echo "$out" | sed 's/^/   /'
acc=$(echo "$out" | sed -n 's/^test accuracy: //p')
awk -v a="$acc" 'BEGIN { exit !(a >= 0.9) }' || fail "example test accuracy $acc < 0.9"

sql "SELECT count(*) FROM hopper.ps_tables, hopper.ps_drop(name)" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE $DB"
echo "ps_workers: all passed"
