#!/usr/bin/env bash
# A throwaway Citus cluster for tests: a coordinator and N workers (default 2), each a throwaway
# PostgreSQL cluster started by test/cluster.sh on its own unix socket (no TCP), with
# shared_preload_libraries = 'citus,hopper' (Citus must come first), CREATE EXTENSION citus and
# hopper on every node, and the workers registered with the coordinator.
#
#   eval "$(PG_BIN=... test/citus-cluster.sh start [DIR])"   # prints the coordinator's PGHOST/PGPORT/...
#   test/citus-cluster.sh stop DIR
#   test/citus-cluster.sh check                                # exit 0 if Citus is installed, 3 if not
#
# PG_BIN: the bin directory of a PostgreSQL 15 tree where both Citus and hopper are installed (Citus
# is not in Debian's archive: build it from its public repository and `make install DESTDIR=` into
# a private tree made by test/private-install.sh; see docs/citus.md). Without Citus in that tree the
# script says so and exits with status 3, which callers (test/suites/citus.sh) treat as "skip".
# HOPPER_CITUS_PORT: the coordinator's port (default 55430); worker i listens on port + i.
# HOPPER_CITUS_WORKERS: number of workers (default 2). The database is `postgres` on every node.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

export PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PORT=${HOPPER_CITUS_PORT:-55430}
WORKERS=${HOPPER_CITUS_WORKERS:-2}

citus_missing() {
  local pkglib share
  if [ ! -x "$PG_BIN/postgres" ]; then
    echo "no PostgreSQL server in PG_BIN=$PG_BIN" >&2
    return 0
  fi
  pkglib=$("$PG_BIN/pg_config" --pkglibdir)
  share=$("$PG_BIN/pg_config" --sharedir)
  if [ ! -f "$pkglib/citus.so" ] || [ ! -f "$share/extension/citus.control" ]; then
    echo "Citus is not installed in the PostgreSQL tree of PG_BIN=$PG_BIN" \
         "(no $pkglib/citus.so or $share/extension/citus.control)." >&2
    echo "Build Citus from https://github.com/citusdata/citus and install it into that tree" \
         "(make install DESTDIR=...), then set PG_BIN to the tree's bin directory; see docs/citus.md." >&2
    return 0
  fi
  if [ ! -f "$pkglib/hopper.so" ] || [ ! -f "$share/extension/hopper.control" ]; then
    echo "hopper is not installed in the PostgreSQL tree of PG_BIN=$PG_BIN (test/private-install.sh installs it)." >&2
    return 0
  fi
  return 1
}

psql_on() {  # psql_on DIR PORT SQL...
  local dir=$1 port=$2
  shift 2
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -U postgres -d postgres "$@"
}

cmd=${1:-}
case "$cmd" in
  check)
    if citus_missing; then exit 3; fi
    ;;
  start)
    if citus_missing; then exit 3; fi
    dir=${2:-$(mktemp -d /tmp/hopper-citus.XXXXXX)}
    mkdir -p "$dir"
    chmod 755 "$dir"
    # Node connections go over the same unix sockets; SSL cannot run over them.
    conf="citus.node_conninfo = 'sslmode=disable'
max_connections = 200
citus.max_adaptive_executor_pool_size = 16
citus.enable_statistics_collection = off"
    names=(coordinator)
    for i in $(seq 1 "$WORKERS"); do names+=("worker$i"); done
    i=0
    for name in "${names[@]}"; do
      # citus.local_hostname: how a node reaches itself (its own socket), e.g. when a node added later
      # makes Citus copy reference tables: over 'localhost' (TCP, which these nodes do not listen on)
      # every hopper run failed after citus_add_node (a Citus sweep).
      HOPPER_TEST_PORT=$((PORT + i)) HOPPER_PRELOAD='citus,hopper' HOPPER_EXTRA_CONF="$conf
citus.local_hostname = '$dir/$name'" \
        "$ROOT/test/cluster.sh" start "$dir/$name" >/dev/null \
        || { echo "could not start the Citus node $name (see $dir/$name/server.log)" >&2; exit 1; }
      psql_on "$dir/$name" $((PORT + i)) -c "SET client_min_messages = warning" \
        -c "CREATE EXTENSION citus" -c "CREATE EXTENSION hopper"
      i=$((i + 1))
    done
    psql_on "$dir/coordinator" "$PORT" -c "SET client_min_messages = warning" \
      -c "SELECT pg_catalog.citus_set_coordinator_host('$dir/coordinator', $PORT)" >/dev/null
    for i in $(seq 1 "$WORKERS"); do
      psql_on "$dir/coordinator" "$PORT" -c "SET client_min_messages = warning" \
        -c "SELECT pg_catalog.citus_add_node('$dir/worker$i', $((PORT + i)))" >/dev/null
    done
    echo "export PGHOST='$dir/coordinator' PGPORT=$PORT PGUSER=postgres PGDATABASE=postgres HOPPER_CITUS_CLUSTER='$dir'"
    ;;
  stop)
    dir=${2:?usage: citus-cluster.sh stop DIR}
    for node in "$dir"/coordinator "$dir"/worker*; do
      [ -d "$node" ] && "$ROOT/test/cluster.sh" stop "$node"
    done
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start [DIR] | stop DIR | check" >&2
    exit 2
    ;;
esac
