#!/usr/bin/env bash
# Runs every hopper test, the way CI does:
#   0. the structure checks (test/structure/*.sh: include layers, SQL sources, named paths, format);
#   1. the core's unit tests (GoogleTest via ctest, no PostgreSQL needed);
#   2. builds and installs the extension;
#   3. against a throwaway cluster (test/cluster.sh): pg_regress (make installcheck), pgTAP
#      (pg_prove test/pgtap/*.sql) and the multi-session scripts test/scripts/*.sh.
# Extra suites (sanitizers, fuzzing) are in test/suites/*.sh and run after those.
# Run as root (installs into PostgreSQL's directories and starts the server as `postgres`) or as a
# user who can write there. Set HOPPER_SKIP_SUITES=1 to skip test/suites.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
JOBS=${JOBS:-$(nproc)}
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo

step() { printf '\n==== %s ====\n' "$*"; }

step "structure: layers, one source per SQL object, paths, format"
for check in test/structure/*.sh; do bash "$check"; done

step "core unit tests"
cmake -S . -B build/core -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/core -j"$JOBS"
(cd build/core && ctest --output-on-failure --no-tests=error -j"$JOBS")

step "build and install the extension"
make -j"$JOBS" PG_CONFIG="$PG_CONFIG" >/dev/null
$SUDO make install PG_CONFIG="$PG_CONFIG" >/dev/null

step "start a throwaway cluster"
CLUSTER=$(mktemp -d /tmp/hopper-test.XXXXXX)
cleanup() {
  local rc=$?
  if [ $rc -ne 0 ] && [ -f "$CLUSTER/server.log" ]; then
    echo "---- server log (last 60 lines) ----"
    tail -60 "$CLUSTER/server.log" || true
  fi
  "$ROOT/test/cluster.sh" stop "$CLUSTER" || true
  exit $rc
}
trap cleanup EXIT
eval "$("$ROOT/test/cluster.sh" start "$CLUSTER")"
export PGHOST PGPORT PGUSER PGDATABASE HOPPER_CLUSTER

step "pg_regress"
if ! make installcheck PG_CONFIG="$PG_CONFIG"; then
  [ -f regression.diffs ] && cat regression.diffs
  exit 1
fi

step "pgTAP"
psql -q -X -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS hopper_tap" -c "CREATE DATABASE hopper_tap"
psql -q -X -v ON_ERROR_STOP=1 -d hopper_tap -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION hopper"
shopt -s nullglob
tap_files=(test/pgtap/*.sql)
shopt -u nullglob
[ ${#tap_files[@]} -gt 0 ] || { echo "no pgTAP tests found in test/pgtap" >&2; exit 1; }
pg_prove -d hopper_tap --failures "${tap_files[@]}"

step "multi-session scripts"
for script in test/scripts/*.sh; do
  [ -e "$script" ] || continue
  echo "-- $script"
  bash "$script"
done

if [ -z "${HOPPER_SKIP_SUITES:-}" ]; then
  for suite in test/suites/*.sh; do
    [ -e "$suite" ] || continue
    step "suite $suite"
    bash "$suite"
  done
fi

step "all tests passed"
