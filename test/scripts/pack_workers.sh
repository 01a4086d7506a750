#!/usr/bin/env bash
# preprocess reads and converts a large source's rows in parallel workers while its backend writes
# the buffers (src/pg/training/pack_buffers.cpp). Against the test cluster (PGHOST, PGPORT, PGUSER
# set by test/cluster.sh):
#   * the workers are there while it packs (pg_stat_activity: parallel workers led by its backend),
#     and the table they pack is the one the backend alone packs, byte for byte;
#   * a cancel while they read stops the backend and its workers and leaves no table behind;
#   * a worker terminated while it reads fails the call (its error, in the backend) and leaves no
#     table and no process behind; the next preprocess packs the same bytes again.
set -euo pipefail
DB=hopper_pack_workers
WORK=$(mktemp -d /tmp/hopper-pack-workers.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
q() { psql -qAtX -v ON_ERROR_STOP=1 -d "$DB" "$@"; }
fail() { echo "pack_workers.sh: FAILED: $*" >&2; exit 1; }

PGOPTIONS="-c client_min_messages=warning" psql -qX -v ON_ERROR_STOP=1 -d postgres \
  -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
-- 60,000 rows of 300 features that hardly compress (70 MB of float4 to read): a second or more of
-- packing on two cores.
CREATE TABLE src AS
SELECT g AS id, ARRAY(SELECT ((g * 7919 + k * 104729) % 100003)::real FROM generate_series(1, 300) k) AS x,
       'class ' || (g % 10) AS y
FROM generate_series(1, 60000) g;
VACUUM ANALYZE src;
CREATE FUNCTION packed_md5(packed regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE sum text;
BEGIN
    EXECUTE format($q$SELECT md5(string_agg(int4send(dist_key) || int4send(buffer_id) || array_send(independent_var)
                                          || array_send(dependent_var), ''::bytea ORDER BY dist_key, buffer_id))
                      FROM %s$q$, packed) INTO sum;
    RETURN sum;
END $$;
SET max_parallel_workers_per_gather = 0;
SELECT hopper.preprocess('src', 'serial_packed', 'y', 'x', normalizing_const => 255, num_segments => 2);
SQL
SERIAL=$(q -c "SELECT packed_md5('serial_packed')")
PACK="SELECT hopper.preprocess('src', 'OUT', 'y', 'x', normalizing_const => 255, num_segments => 2)"

# Starts preprocess into table $1 in the background (application_name pack_$1); its psql's pid in
# $PACK_PID.
start_pack() {
  PGAPPNAME="pack_$1" psql -qX -d "$DB" -c "SET client_min_messages = warning" \
    -c "SET max_parallel_workers_per_gather = 2" -c "${PACK//OUT/$1}" >"$WORK/$1.log" 2>&1 &
  PACK_PID=$!
}

# Waits until parallel workers led by the backend of preprocess into $1 show up and prints
# "<backend pid> <a worker's pid>"; fails if the call ends first.
workers_of() {
  local out=$1 seen
  for _ in $(seq 1 1000); do
    seen=$(q -c "SELECT b.pid || ' ' || w.pid FROM pg_stat_activity b JOIN pg_stat_activity w ON w.leader_pid = b.pid
                 WHERE b.application_name = 'pack_$out' AND w.backend_type = 'parallel worker' LIMIT 1")
    if [ -n "$seen" ]; then
      echo "$seen"
      return
    fi
    kill -0 "$PACK_PID" 2>/dev/null || { cat "$WORK/$out.log" >&2; fail "$out: preprocess ended before any worker showed up"; }
    sleep 0.01
  done
  fail "$out: no parallel worker showed up"
}

# Nothing of a stopped call may remain: no table, no process of it (backend $2).
check_clean() {
  local out=$1 backend=$2 left
  left=$(q -c "SELECT string_agg(relname, ', ') FROM pg_class WHERE relname LIKE '$out%'")
  [ -z "$left" ] || fail "$out left tables behind: $left"
  for _ in $(seq 1 50); do  # its psql has ended; the backend may take a moment to exit
    left=$(q -c "SELECT count(*) FROM pg_stat_activity WHERE pid = $backend OR leader_pid = $backend")
    [ "$left" = 0 ] && return
    sleep 0.1
  done
  fail "$out left $left processes behind"
}

echo "pack_workers.sh: preprocess with parallel workers"
start_pack with_workers
read -r backend worker <<<"$(workers_of with_workers)"
wait "$PACK_PID" || { cat "$WORK/with_workers.log"; fail "preprocess with workers failed"; }
[ "$(q -c "SELECT packed_md5('with_workers')")" = "$SERIAL" ] || fail "workers packed other bytes than the backend alone"
echo "  workers read the rows (backend $backend, worker $worker); the same bytes as the backend alone"

start_pack cancelled
read -r backend worker <<<"$(workers_of cancelled)"
q -c "SELECT pg_cancel_backend($backend)" >/dev/null
wait "$PACK_PID" || true
grep -q "canceling statement due to user request" "$WORK/cancelled.log" || { cat "$WORK/cancelled.log"; fail "the cancel did not stop preprocess"; }
check_clean cancelled "$backend"
echo "  a cancel while workers read stops it, nothing left"

start_pack worker_gone
read -r backend worker <<<"$(workers_of worker_gone)"
q -c "SELECT pg_terminate_backend($worker)" >/dev/null
wait "$PACK_PID" && fail "preprocess succeeded without the worker it lost"
grep -q "ERROR" "$WORK/worker_gone.log" || { cat "$WORK/worker_gone.log"; fail "no error when a worker was terminated"; }
check_clean worker_gone "$backend"
echo "  a worker terminated while it reads fails the call: $(grep -m1 ERROR "$WORK/worker_gone.log")"

start_pack again
read -r backend worker <<<"$(workers_of again)"
wait "$PACK_PID" || { cat "$WORK/again.log"; fail "preprocess after the failures failed"; }
[ "$(q -c "SELECT packed_md5('again')")" = "$SERIAL" ] || fail "packing after the failures gave other bytes"
psql -qX -d postgres -c "DROP DATABASE $DB"
echo "pack_workers.sh: ok"
