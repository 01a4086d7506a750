#!/usr/bin/env bash
# SparseSSP across sessions: worker 0 (fast) and worker 1 (slow: it sleeps 3 s after its first Add)
# in two sessions, staleness 0, chunks of 10 keys. Under SparseSSP worker 0 runs 20 iterations on
# the chunk only it writes while worker 1 sleeps, without waiting; then it reads worker 1's chunk and
# waits until worker 1 has caught up to its clock. Under plain SSP the same 20 iterations wait for
# worker 1 from the first. Timings are checked with wide margins (the sleep is 3 s; "not blocked"
# means done within 2 s of the start, "blocked" means not before worker 1 woke up).
# Needs the test cluster (test/cluster.sh: PGHOST, PGPORT) with hopper preloaded.
set -euo pipefail
DB=hopper_ps_sparse
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "ps_sparse_ssp.sh: FAILED: $*" >&2; exit 1; }
now() { date +%s.%N; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"; q -c "SELECT hopper.ps_drop(name) FROM hopper.ps_tables" >/dev/null 2>&1 || true' EXIT

PGOPTIONS="-c client_min_messages=warning" psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q -c "CREATE EXTENSION hopper"

run_case() {  # consistency; prints: fast_done_s far_read_done_s slow_woke_s (from the start)
  local t=$1_t
  q -c "SET client_min_messages = warning" -c "SELECT hopper.ps_drop('$t', if_exists => true)" -c "SELECT hopper.ps_create('$t', 40, chunk_size => 10,
        consistency => '$1', staleness => 0, num_workers => 2)" >/dev/null
  local start; start=$(now)
  # The slow worker: one session, sleeps, then Gets its chunk (SparseSSP) or clocks (SSP) 25 times.
  local step="SELECT hopper.ps_get('$t', 1, ARRAY[30]::bigint[]), hopper.ps_clock('$t', 1)"
  [ "$1" = sparse_ssp ] && step="SELECT hopper.ps_get('$t', 1, ARRAY[30]::bigint[])"
  {
    # Worker 1 writes its chunk (keys 30..39) at clock 0, in the session it keeps, then says so.
    echo "SELECT hopper.ps_add('$t', 1, ARRAY[30, 31]::bigint[], ARRAY[5, 1]::real[]);"
    echo "\\o $TMP/slow_ready"; echo "SELECT 1;"; echo "\\o"
    echo "SELECT pg_sleep(3);"
    echo "\\o $TMP/slow_woke"; echo "SELECT extract(epoch FROM clock_timestamp());"; echo "\\o"
    for _ in $(seq 1 25); do echo "$step;"; done
  } > "$TMP/slow.sql"
  # (Under SSP the slow worker outlives the fast one and its last steps fail: worker 0 is gone.)
  rm -f "$TMP/slow_ready"
  q -f "$TMP/slow.sql" >/dev/null 2>&1 &
  local slow=$!
  for _ in $(seq 1 200); do [ -s "$TMP/slow_ready" ] && break; sleep 0.05; done
  [ -s "$TMP/slow_ready" ] || fail "the slow worker did not start"
  start=$(now)
  # The fast worker: 20 iterations on chunk 0, then one Get of worker 1's chunk 3.
  local fast_step="SELECT hopper.ps_get('$t', 0, ARRAY[0]::bigint[]), hopper.ps_add('$t', 0, ARRAY[0]::bigint[], ARRAY[1]::real[]), hopper.ps_clock('$t', 0)"
  [ "$1" = sparse_ssp ] && fast_step="SELECT hopper.ps_get('$t', 0, ARRAY[0]::bigint[]), hopper.ps_add('$t', 0, ARRAY[0]::bigint[], ARRAY[1]::real[])"
  {
    echo "SET statement_timeout = '20s';"
    for _ in $(seq 1 20); do echo "$fast_step;"; done
    echo "\\o $TMP/fast_done"; echo "SELECT extract(epoch FROM clock_timestamp());"; echo "\\o"
    echo "SELECT hopper.ps_get('$t', 0, ARRAY[30]::bigint[]);"
    echo "\\o $TMP/far_done"; echo "SELECT extract(epoch FROM clock_timestamp());"; echo "\\o"
  } > "$TMP/fast.sql"
  q -f "$TMP/fast.sql" >/dev/null
  wait "$slow" || true
  echo "$(echo "$(cat "$TMP/fast_done") - $start" | bc) $(echo "$(cat "$TMP/far_done") - $start" | bc) $(echo "$(cat "$TMP/slow_woke") - $start" | bc)"
}

read -r FAST FAR WOKE <<<"$(run_case sparse_ssp)"
echo "SparseSSP: fast worker's 20 iterations done at ${FAST} s, its read of the slow worker's chunk at ${FAR} s; slow worker woke at ${WOKE} s"
[ "$(echo "$FAST < 2" | bc)" = 1 ] || fail "SparseSSP: the fast worker was held back on a chunk the slow worker never wrote (${FAST} s)"
[ "$(echo "$FAR >= $WOKE" | bc)" = 1 ] || fail "SparseSSP: the fast worker read the slow worker's chunk before the slow worker caught up"

read -r FAST FAR WOKE <<<"$(run_case ssp)"
echo "SSP: fast worker's 20 iterations done at ${FAST} s; slow worker woke at ${WOKE} s"
[ "$(echo "$FAST >= $WOKE" | bc)" = 1 ] || fail "SSP: the fast worker ran ahead of the slow one (${FAST} s < ${WOKE} s)"
echo "ps_sparse_ssp.sh: ok"
