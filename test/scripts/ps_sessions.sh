#!/usr/bin/env bash
# Parameter tables with real concurrent sessions (psql processes fed through FIFOs):
#   - SSP(1): a worker two clocks ahead blocks in ps_get until the slowest clocks, then sees its Add;
#   - ASP: a worker far ahead never blocks;
#   - a cancelled wait (pg_cancel_backend) returns promptly and the session goes on;
#   - a worker whose session ends (quits, or is terminated) is reported to the waiting worker;
#     a gone worker blocking a new wait is reported at once;
#   - a worker bound to a live session is refused to another session (55006), and taken over
#     once that session ends, resuming at its clock;
#   - dropping a table wakes its waiters with an error.
# Needs PGHOST/PGPORT/PGUSER of a cluster with hopper preloaded (test/cluster.sh).
set -euo pipefail
DB=hopper_ps_sessions
WORK=$(mktemp -d /tmp/hopper-ps-sessions.XXXXXX)
declare -A FD PSQL BPID
fail() { echo "FAIL: $*" >&2; for f in "$WORK"/*.out; do [ -e "$f" ] && { echo "--- $f"; cat "$f"; }; done >&2; exit 1; }
cleanup() {
  for s in "${!FD[@]}"; do eval "exec ${FD[$s]}>&-" 2>/dev/null || true; done
  for p in "${PSQL[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d "$DB" -c "$1"; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# start NAME: a psql session reading statements from a FIFO; BPID[NAME] is its backend's pid.
start() {
  local name=$1
  mkfifo "$WORK/$name.in"
  # Other sessions' FIFO ends must not leak into this psql (they would keep those sessions alive).
  (close_fds; exec psql -X -q -At -d "$DB" <"$WORK/$name.in" >"$WORK/$name.out" 2>&1) &
  PSQL[$name]=$!
  local fd
  exec {fd}>"$WORK/$name.in"
  FD[$name]=$fd
  send "$name" "SELECT 'pid=' || pg_backend_pid();"
  expect "$name" '^pid=' 10
  BPID[$name]=$(grep -m1 '^pid=' "$WORK/$name.out" | cut -d= -f2)
}
close_fds() { local f; for f in "${FD[@]}"; do eval "exec $f>&-"; done; }
send() { echo "$2" >&"${FD[$1]}"; }
# expect NAME REGEX SECONDS: waits until the session's output matches.
expect() {
  local deadline=$(( $(now_ms) + $3 * 1000 ))
  until grep -qE "$2" "$WORK/$1.out"; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "session $1: no output matching /$2/ within $3 s"
    sleep 0.05
  done
}
# expect_count NAME REGEX N SECONDS: waits until N output lines match.
expect_count() {
  local deadline=$(( $(now_ms) + $4 * 1000 ))
  until [ "$(grep -cE "$2" "$WORK/$1.out")" -ge "$3" ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "session $1: fewer than $3 lines matching /$2/ within $4 s"
    sleep 0.05
  done
}
# quit NAME: ends the session (EOF on its input) and waits for psql to exit.
quit() {
  eval "exec ${FD[$1]}>&-"
  unset "FD[$1]"
  wait "${PSQL[$1]}" 2>/dev/null || true
  unset "PSQL[$1]"
}
# waiting PID: true while that backend sleeps in a parameter-table wait.
waiting() { [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Extension'")" = 1 ]; }
wait_until_waiting() {
  local deadline=$(( $(now_ms) + 10000 ))
  until waiting "$1"; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "backend $1 never started waiting"
    sleep 0.05
  done
}
# wait_gone PID: the backend has exited.
wait_gone() {
  local deadline=$(( $(now_ms) + 10000 ))
  until [ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE pid = $1")" = 0 ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "backend $1 did not exit"
    sleep 0.05
  done
}

psql -X -q -d postgres -v ON_ERROR_STOP=1 -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
sql "CREATE EXTENSION hopper" >/dev/null

echo "-- SSP(1): blocked two clocks ahead until the slowest worker clocks"
sql "SELECT hopper.ps_create('ssp1', 4, consistency => 'ssp', staleness => 1, num_workers => 2)" >/dev/null
start a
send a "SELECT hopper.ps_clock('ssp1', 0); SELECT hopper.ps_clock('ssp1', 0);"
send a "SELECT 'a got ' || hopper.ps_get('ssp1', 0, '{0}')::text;"
wait_until_waiting "${BPID[a]}"
sleep 0.3
grep -q 'a got' "$WORK/a.out" && fail "SSP Get two clocks ahead did not wait"
start w1
send w1 "SELECT 'added ' || hopper.ps_add('ssp1', 1, '{0}', '{5}')::text;"
expect w1 '^added $' 5
sleep 0.2
grep -q 'a got' "$WORK/a.out" && fail "an Add woke the SSP Get"
t0=$(now_ms)
send w1 "SELECT 'clocked ' || hopper.ps_clock('ssp1', 1)::text;"
expect a '^a got \{5\}$' 5
echo "   woke $(( $(now_ms) - t0 )) ms after the slowest worker clocked"
quit w1
[ "$(sql "SELECT waits FROM hopper.ps_tables WHERE name = 'ssp1'")" = 1 ] || fail "wait not counted"

echo "-- ASP: never blocks"
sql "SELECT hopper.ps_create('asp1', 4, consistency => 'asp', num_workers => 3)" >/dev/null
out=$(psql -X -q -At -d "$DB" -v ON_ERROR_STOP=1 -c "SET statement_timeout = '5s'" \
      -c "SELECT hopper.ps_clock('asp1', 0) FROM generate_series(1, 20) OFFSET 19" \
      -c "SELECT hopper.ps_get('asp1', 0, '{0,1}')")
[ "$out" = $'20\n{0,0}' ] || fail "ASP worker 20 clocks ahead: got '$out'"

echo "-- a cancelled wait returns promptly"
sql "SELECT hopper.ps_create('bsp2', 2, num_workers => 2)" >/dev/null
send a "SELECT hopper.ps_clock('bsp2', 0);"
send a "SELECT 'never ' || hopper.ps_get('bsp2', 0, '{0}')::text;"
wait_until_waiting "${BPID[a]}"
t0=$(now_ms)
sql "SELECT pg_cancel_backend(${BPID[a]})" >/dev/null
expect a 'canceling statement due to user request' 5
elapsed=$(( $(now_ms) - t0 ))
echo "   cancelled in $elapsed ms"
[ "$elapsed" -lt 3000 ] || fail "cancel took $elapsed ms"
send a "SELECT 'still here';"
expect a '^still here$' 5
grep -q never "$WORK/a.out" && fail "cancelled Get returned a value"

echo "-- a worker whose session ends is reported to the waiting worker"
start b
send b "SELECT 'b bound ' || hopper.ps_get('bsp2', 1, '{0}')::text;"
expect b '^b bound \{0\}$' 5
send a "SELECT 'a never ' || hopper.ps_get('bsp2', 0, '{0}')::text;"
wait_until_waiting "${BPID[a]}"
quit b
expect a 'ERROR:  worker 1 of parameter table "bsp2" is gone' 5
expect a 'DETAIL:  Its session ended at clock 0; worker 0 at clock 1 needs every worker at clock 1 or later \(BSP\)\.' 1
expect a 'HINT:  Run worker 1 again in a new session' 1
# Reported at once when the gone worker already holds the wait back.
t0=$(now_ms)
send a "SELECT 'a again ' || hopper.ps_get('bsp2', 0, '{0}')::text;"
expect_count a 'ERROR:  worker 1 of parameter table "bsp2" is gone' 2 5
[ $(( $(now_ms) - t0 )) -lt 2000 ] || fail "gone worker not reported at once"
[ "$(sql "SELECT status FROM hopper.ps_workers WHERE table_name = 'bsp2' AND worker = 1")" = gone ] || fail "worker 1 not gone"

echo "-- the same with a terminated session"
sql "SELECT hopper.ps_create('bsp3', 2, num_workers => 2)" >/dev/null
start c
send c "SELECT 'c bound ' || hopper.ps_clock('bsp3', 1)::text;"
expect c '^c bound 1$' 5
send a "SELECT hopper.ps_clock('bsp3', 0); SELECT hopper.ps_clock('bsp3', 0);"
send a "SELECT 'a never ' || hopper.ps_get('bsp3', 0, '{0}')::text;"
wait_until_waiting "${BPID[a]}"
sql "SELECT pg_terminate_backend(${BPID[c]})" >/dev/null
expect a 'ERROR:  worker 1 of parameter table "bsp3" is gone' 5
expect a 'Its session ended at clock 1; worker 0 at clock 2 needs every worker at clock 2 or later' 1
quit c

echo "-- a worker belongs to one live session; a new session takes over a gone worker"
sql "SELECT hopper.ps_create('own', 2, consistency => 'asp', num_workers => 2)" >/dev/null
start d
send d "SELECT 'd clock ' || hopper.ps_clock('own', 1)::text;"
expect d '^d clock 1$' 5
t0=$(now_ms)
err=$(psql -X -q -At -d "$DB" -c "\\set VERBOSITY verbose" -c "SELECT hopper.ps_get('own', 1, '{0}')" 2>&1 || true)
echo "$err" | grep -q 'ERROR:  55006: worker 1 of parameter table "own" is in use by another session' || fail "busy worker: $err"
echo "$err" | grep -q "DETAIL:  Process ${BPID[d]} is worker 1." || fail "busy worker detail: $err"
echo "   refused after $(( $(now_ms) - t0 )) ms (grace period for sessions that are ending)"
d_pid=${BPID[d]}
quit d
wait_gone "$d_pid"
out=$(sql "SELECT hopper.ps_clock('own', 1)")
[ "$out" = 2 ] || fail "takeover did not resume at clock 1: $out"
# A session quitting while another asks for its worker: the newcomer waits for the exit, no error.
start e
send e "SELECT 'e clock ' || hopper.ps_clock('own', 0)::text;"
expect e '^e clock 1$' 5
(close_fds; sql "SELECT hopper.ps_clock('own', 0)") >"$WORK/takeover.txt" 2>&1 &
taker=$!
sleep 0.3
quit e
wait "$taker" || fail "takeover failed: $(cat "$WORK/takeover.txt")"
out=$(cat "$WORK/takeover.txt")
[ "$out" = 2 ] || fail "takeover of a worker whose session was ending: $out"

echo "-- dropping a table wakes its waiters"
sql "SELECT hopper.ps_create('dropme', 2, num_workers => 2)" >/dev/null
send a "SELECT hopper.ps_clock('dropme', 0);"
send a "SELECT 'never ' || hopper.ps_get('dropme', 0, '{0}')::text;"
wait_until_waiting "${BPID[a]}"
sql "SELECT hopper.ps_drop('dropme')" >/dev/null
expect a 'ERROR:  parameter table "dropme" was dropped while worker 0 waited' 5

echo "-- session a's own workers are released when it ends"
a_pid=${BPID[a]}
quit a
wait_gone "$a_pid"
[ "$(sql "SELECT count(*) FROM hopper.ps_workers WHERE status = 'active'")" = 0 ] || fail "workers still active: $(sql "SELECT * FROM hopper.ps_workers WHERE status = 'active'")"

sql "SELECT count(*) FROM hopper.ps_tables, hopper.ps_drop(name)" >/dev/null
psql -X -q -d postgres -c "DROP DATABASE $DB"
echo "ps_sessions: all passed"
