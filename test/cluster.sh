#!/usr/bin/env bash
# Throwaway PostgreSQL 15 cluster for tests, demos and benchmarks.
#
#   eval "$(test/cluster.sh start [DIR])"   # prints PGHOST/PGPORT/PGUSER/HOPPER_CLUSTER exports
#   test/cluster.sh stop DIR
# HOPPER_TEST_PORT sets the port (default 54329); HOPPER_NO_PRELOAD=1 leaves hopper out of
# shared_preload_libraries; HOPPER_PRELOAD sets that list instead (default 'hopper'; e.g.
# 'citus,hopper' for test/citus-cluster.sh); HOPPER_EXTRA_CONF holds extra postgresql.conf lines;
# HOPPER_SERVER_ENV holds VAR=value words set in the server's environment only (e.g. LD_PRELOAD of
# the sanitizer runtime, test/sanitizers_extension.sh), not in initdb's or the clients'.
#
# The server runs as the `postgres` OS user when started by root (PostgreSQL refuses root), listens
# only on a unix socket inside DIR (no TCP, so no port collides with another cluster), and logs to
# DIR/server.log so it never holds the caller's stdout open.
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PGPORT_DEFAULT=${HOPPER_TEST_PORT:-54329}

as_owner() {
  if [ "$(id -u)" = 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi
}

cmd=${1:-}
case "$cmd" in
  start)
    dir=${2:-$(mktemp -d /tmp/hopper-pg.XXXXXX)}
    mkdir -p "$dir"
    chmod 755 "$dir"
    [ "$(id -u)" = 0 ] && chown postgres: "$dir"
    as_owner "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust --no-sync -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $PGPORT_DEFAULT
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = ${HOPPER_TEST_SHARED_BUFFERS:-256MB}
max_worker_processes = 16
max_parallel_workers = 8
max_parallel_workers_per_gather = 4
log_min_messages = warning
log_line_prefix = '%m [%p] '
CONF
    # Parameter tables (hopper.ps_*) live in shared memory reserved at server start; HOPPER_NO_PRELOAD=1
    # starts a cluster where hopper is loaded on demand, as on a server nobody reconfigured.
    # HOPPER_LIB_DIR: load hopper.so from a build tree before the installed one (developers sharing
    # one machine can test their own build; the SQL script still comes from the installation).
    if [ -n "${HOPPER_LIB_DIR:-}" ]; then
      echo "dynamic_library_path = '$HOPPER_LIB_DIR:\$libdir'" >>"$dir/data/postgresql.conf"
    fi
    if [ -z "${HOPPER_NO_PRELOAD:-}" ]; then
      echo "shared_preload_libraries = '${HOPPER_PRELOAD:-hopper}'" >>"$dir/data/postgresql.conf"
    fi
    if [ -n "${HOPPER_EXTRA_CONF:-}" ]; then
      printf '%s\n' "$HOPPER_EXTRA_CONF" >>"$dir/data/postgresql.conf"
    fi
    server_env=()
    [ -n "${HOPPER_SERVER_ENV:-}" ] && read -r -a server_env <<<"$HOPPER_SERVER_ENV"
    as_owner env "${server_env[@]}" "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null \
      || { tail -50 "$dir/server.log" >&2; exit 1; }
    echo "export PGHOST='$dir' PGPORT=$PGPORT_DEFAULT PGUSER=postgres PGDATABASE=postgres HOPPER_CLUSTER='$dir'"
    ;;
  stop)
    dir=${2:?usage: cluster.sh stop DIR}
    if [ -f "$dir/data/postmaster.pid" ]; then
      as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start [DIR] | stop DIR" >&2
    exit 2
    ;;
esac
