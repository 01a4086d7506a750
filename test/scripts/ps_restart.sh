#!/usr/bin/env bash
# Parameter tables across server restarts, on a cluster of its own:
#   1. values live in shared memory: a restart loses the table, and ps_restore brings back exactly
#      what ps_save saved (values, BSP pending Adds, worker clocks);
#   2. without hopper in shared_preload_libraries, the extension still works and every
#      parameter-table function fails with 55000 and a hint that says how to fix it
#      (test/scripts/no_preload.sh checks that training works there).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
DIR=$(mktemp -d /tmp/hopper-ps-restart.XXXXXX)
trap '"$ROOT/test/cluster.sh" stop "$DIR" >/dev/null 2>&1 || true' EXIT
as_owner() { if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
restart() { as_owner "$PG_BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 restart -m fast >/dev/null; }
fail() { echo "FAIL: $*" >&2; exit 1; }

eval "$(HOPPER_TEST_SHARED_BUFFERS=16MB HOPPER_TEST_PORT=$((${PGPORT:-54329} + 8)) "$ROOT/test/cluster.sh" start "$DIR")"
export PGHOST PGPORT PGUSER
q() { psql -X -q -At -v ON_ERROR_STOP=1 -d postgres "$@"; }
q -c "CREATE EXTENSION hopper"

echo "-- save, restart, restore"
q -c "SELECT hopper.ps_create('w', 1000, chunk_size => 100, num_workers => 2)" \
  -c "SELECT hopper.ps_add('w', 0, '{0,999}', '{1.5,2.5}'), hopper.ps_add('w', 1, '{0}', '{1}')" \
  -c "SELECT hopper.ps_clock('w', 0), hopper.ps_clock('w', 1)" \
  -c "SELECT hopper.ps_add('w', 0, '{5}', '{7}'), hopper.ps_clock('w', 0)" >/dev/null
before=$(q -c "SELECT hopper.ps_get('w', 1, '{0,5,999}')::text || ' ' || min_clock || ' ' || max_clock FROM hopper.ps_tables")
[ "$before" = "{2.5,0,2.5} 1 2" ] || fail "before the restart: $before"
id=$(q -c "SELECT hopper.ps_save('w')")
restart
[ "$(q -c "SELECT count(*) FROM hopper.ps_tables")" = 0 ] || fail "the table survived a restart"
[ "$(q -c "SELECT hopper.ps_restore('$id')")" = w ] || fail "restore"
after=$(q -c "SELECT hopper.ps_get('w', 1, '{0,5,999}')::text || ' ' || min_clock || ' ' || max_clock FROM hopper.ps_tables")
[ "$after" = "{2.5,0,2.5} 1 2" ] || fail "after the restart: $after"
# Worker 0's pending Add of iteration 1 comes back and is folded in when worker 1 finishes it.
q -c "SELECT hopper.ps_clock('w', 1)" >/dev/null
[ "$(q -c "SELECT hopper.ps_get('w', 0, '{5}')")" = "{7}" ] || fail "pending Add not restored"

echo "-- without shared_preload_libraries"
sed -i '/^shared_preload_libraries/d' "$DIR/data/postgresql.conf"
restart
[ "$(q -c "SHOW shared_preload_libraries")" = "" ] || fail "hopper still preloaded"
for stmt in "SELECT hopper.ps_create('t', 10)" "SELECT hopper.ps_get('t', 0, '{1}')" \
            "SELECT hopper.ps_add('t', 0, '{1}', '{1}')" "SELECT hopper.ps_clock('t', 0)" \
            "SELECT hopper.ps_get_bytes('t', 0, '')" "SELECT hopper.ps_get_chunk('t', 0, '{0}')" \
            "SELECT * FROM hopper.ps_tables" "SELECT * FROM hopper.ps_workers" "SELECT * FROM hopper.ps_memory()" \
            "SELECT hopper.ps_drop('t')" "SELECT hopper.ps_save('t')" "SELECT hopper.ps_restore('$id')"; do
  out=$(psql -X -q -d postgres -c "\\set VERBOSITY verbose" -c "$stmt" 2>&1 || true)
  echo "$out" | grep -q 'ERROR:  55000: parameter tables need hopper in shared_preload_libraries' || fail "$stmt: $out"
  echo "$out" | grep -q 'HINT:  Add hopper to shared_preload_libraries in postgresql.conf and restart the server.' \
    || fail "$stmt: no hint: $out"
done
[ "$(q -c "SELECT hopper.version() IS NOT NULL")" = t ] || fail "hopper.version()"
echo "ps_restart: all passed"
