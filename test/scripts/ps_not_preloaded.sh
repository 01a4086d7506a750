#!/usr/bin/env bash
# Without hopper in shared_preload_libraries, the extension still installs and works, and every
# parameter-table function fails with a clear error (55000) that says how to fix it.
# Starts its own small cluster (test/cluster.sh with HOPPER_NO_PRELOAD=1). test/scripts/no_preload.sh
# checks that training works there; this checks every parameter-table function and its SQLSTATE.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$(mktemp -d /tmp/hopper-ps-nopreload.XXXXXX)
trap '"$ROOT/test/cluster.sh" stop "$DIR" >/dev/null 2>&1 || true' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

eval "$(HOPPER_NO_PRELOAD=1 HOPPER_TEST_SHARED_BUFFERS=16MB HOPPER_TEST_PORT=$((${PGPORT:-54329} + 8)) \
        "$ROOT/test/cluster.sh" start "$DIR")"
export PGHOST PGPORT PGUSER
psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE EXTENSION hopper"
[ "$(psql -X -At -d postgres -c "SHOW shared_preload_libraries")" = "" ] || fail "hopper still preloaded"
for stmt in "SELECT hopper.ps_create('t', 10)" "SELECT hopper.ps_get('t', 0, '{1}')" \
            "SELECT hopper.ps_add('t', 0, '{1}', '{1}')" "SELECT hopper.ps_clock('t', 0)" \
            "SELECT * FROM hopper.ps_tables" "SELECT * FROM hopper.ps_workers" "SELECT * FROM hopper.ps_memory()" \
            "SELECT hopper.ps_drop('t')" "SELECT hopper.ps_save('t')" \
            "SELECT hopper.ps_restore('00000000-0000-0000-0000-000000000000')"; do
  out=$(psql -X -q -d postgres -c "\\set VERBOSITY verbose" -c "$stmt" 2>&1 || true)
  echo "$out" | grep -q 'ERROR:  55000: parameter tables need hopper in shared_preload_libraries' || fail "$stmt: $out"
  echo "$out" | grep -q 'HINT:  Add hopper to shared_preload_libraries in postgresql.conf and restart the server.' \
    || fail "$stmt: no hint: $out"
done
# The rest of hopper works.
[ "$(psql -X -At -d postgres -c "SELECT hopper.version() IS NOT NULL")" = t ] || fail "hopper.version()"
echo "ps_not_preloaded: all passed"
