#!/usr/bin/env bash
# One parameter table over two PostgreSQL servers (FlexPS's range manager), through the C++ client's
# PartitionedKVTable (client/include/hopper/kvtable.h) in separate worker processes:
#   - the keys are split at a chunk boundary, each server holds its part and only its part;
#   - SSP(1), BSP and SparseSSP with 3 workers adding to every key: every Get within the bounds of
#     the consistency, across both servers;
#   - servers given in the wrong order, or a table that is not a part, are refused (22023);
#   - a server that disappears in the middle of a run (immediate shutdown) ends every worker with
#     a clear error (08006 on the lost server, 55000 for a worker gone), never a hang.
# Starts a second throwaway server beside the test cluster. Needs PGHOST/PGPORT/PGUSER of a cluster
# with hopper preloaded (test/cluster.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=hopper_ps_servers
BUILD=${HOPPER_PS_BUILD:-$ROOT/build/core}
if [ ! -x "$BUILD/hopper_ps_tool" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" --target hopper_ps_tool -j2 >/dev/null
fi
TOOL=$BUILD/hopper_ps_tool
fail() { echo "ps_servers.sh: FAILED: $*" >&2; exit 1; }

SECOND=$(mktemp -d /tmp/hopper-ps-second.XXXXXX)
P2=$((PGPORT + 13))
cleanup() { "$ROOT/test/cluster.sh" stop "$SECOND" >/dev/null 2>&1 || true; }
trap cleanup EXIT
HOPPER_TEST_PORT=$P2 "$ROOT/test/cluster.sh" start "$SECOND" >/dev/null
S1="host=$PGHOST port=$PGPORT user=${PGUSER:-postgres} dbname=$DB"
S2="host=$SECOND port=$P2 user=postgres dbname=$DB"
BOTH="$S1,$S2"
for s in "host=$PGHOST port=$PGPORT user=${PGUSER:-postgres}" "host=$SECOND port=$P2 user=postgres"; do
  psql -X -q -v ON_ERROR_STOP=1 "$s dbname=postgres" -c "SET client_min_messages = warning" \
    -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
  psql -X -q -v ON_ERROR_STOP=1 "$s dbname=$DB" -c "CREATE EXTENSION hopper"
done
on() { psql -X -q -At -v ON_ERROR_STOP=1 "$1" -c "$2"; }

# run_workers TABLE ITERATIONS KEYS: three worker processes over both servers; all must pass.
run_workers() {
  local pids=() w rc=0
  for w in 0 1 2; do
    "$TOOL" check "$BOTH" "$1" "$w" "$2" "$3" "$w" >/dev/null &
    pids+=($!)
  done
  for w in 0 1 2; do wait "${pids[$w]}" || rc=1; done
  [ $rc = 0 ] || fail "workers on the two servers' $1 failed"
}

echo "-- SSP(1) over two servers, 3 worker processes"
"$TOOL" create-parts "$BOTH" ssp_t 1000 100 ssp 1 3
[ "$(on "$S1" "SELECT part || ' ' || key_ranges::text || ' ' || range_map::text FROM hopper.ps_tables")" = '0 {"[0,500)"} {"[0,500)","[500,1000)"}' ] ||
  fail "server 1 does not hold the first half"
[ "$(on "$S2" "SELECT part || ' ' || key_ranges::text FROM hopper.ps_tables")" = '1 {"[500,1000)"}' ] ||
  fail "server 2 does not hold the second half"
run_workers ssp_t 30 1000
# Both servers saw each worker clock 30 times.
[ "$(on "$S1" "SELECT string_agg(clock::text, ',' ORDER BY worker) FROM hopper.ps_workers")" = "30,30,30" ] || fail "server 1's clocks"
[ "$(on "$S2" "SELECT string_agg(clock::text, ',' ORDER BY worker) FROM hopper.ps_workers")" = "30,30,30" ] || fail "server 2's clocks"

echo "-- BSP and SparseSSP over two servers"
"$TOOL" create-parts "$BOTH" bsp_t 300 50 bsp 0 3
run_workers bsp_t 20 300
"$TOOL" create-parts "$BOTH" sparse_t 300 50 sparse_ssp 1 3
run_workers sparse_t 20 300

echo "-- servers in the wrong order, a table that is not partitioned"
OUT=$("$TOOL" check "$S2,$S1" ssp_t 0 1 10 2>&1 || true)
case "$OUT" in *"error 22023"*"does not hold part 0"*) ;; *) fail "servers in the wrong order: $OUT" ;; esac
on "$S1" "SELECT hopper.ps_create('plain_t', 100)" >/dev/null
on "$S2" "SELECT hopper.ps_create('plain_t', 100)" >/dev/null
OUT=$("$TOOL" check "$BOTH" plain_t 0 1 10 2>&1 || true)
case "$OUT" in *"error 22023"*"is not a part"*) ;; *) fail "a plain table as a partitioned one: $OUT" ;; esac

echo "-- a server disappears in the middle of a run"
"$TOOL" create-parts "$BOTH" gone_t 200 50 bsp 0 2 >/dev/null
pids=()
for w in 0 1; do
  timeout 60 "$TOOL" check "$BOTH" gone_t "$w" 1000000 200 "$w" > "$SECOND/worker$w.out" 2>&1 &
  pids+=($!)
done
for _ in $(seq 1 100); do
  [ "$(on "$S1" "SELECT min(clock) FROM hopper.ps_workers WHERE table_name = 'gone_t'")" -ge 5 ] 2>/dev/null && break
  sleep 0.1
done
START=$(date +%s)
if [ "$(id -u)" = 0 ]; then
  (cd / && runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D "$SECOND/data" -m immediate -w stop >/dev/null)
else
  /usr/lib/postgresql/15/bin/pg_ctl -D "$SECOND/data" -m immediate -w stop >/dev/null
fi
for w in 0 1; do
  rc=0; wait "${pids[$w]}" || rc=$?
  [ "$rc" != 124 ] || fail "worker $w hung after a server went away"
  [ "$rc" != 0 ] || fail "worker $w did not notice that a server went away"
  grep -Eq "error (08006|08001|55000|57P01)" "$SECOND/worker$w.out" || fail "worker $w: unclear error: $(cat "$SECOND/worker$w.out")"
done
echo "   both workers stopped within $(( $(date +%s) - START )) s: $(tr '\n' ' ' < "$SECOND/worker0.out")/ $(tr '\n' ' ' < "$SECOND/worker1.out")"
on "$S1" "SELECT hopper.ps_drop(name) FROM hopper.ps_tables" >/dev/null
echo "ps_servers.sh: ok"
