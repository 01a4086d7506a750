# bench/base.sh: sourced after bench/setup.sh by the benchmarks that run an earlier commit next to
# this build (bench/packing/run.sh; bench/endtoend/run.sh with BENCH_E2E_BASE). start_base_cluster
# COMMIT builds COMMIT's hopper (kept in $WORK/base-src between runs), installs it into a private copy
# of PostgreSQL ($WORK/base-pg), starts $WORK/base-cluster on port $PORT + 1 (shared_buffers 1 GB,
# autovacuum off) with Fashion-MNIST loaded as setup.sh loads it, and sets BASE_HOST, BASE_PORT and
# BASE_CLUSTER; the caller's PG* settings stay this build's. On exit both clusters stop (unless
# BENCH_KEEP=1).
start_base_cluster() {
  local commit
  commit=$(git rev-parse "$1")
  echo "== building $1"
  if [ "$(cat "$WORK/base-src/.commit" 2>/dev/null)" != "$commit" ]; then  # else built by an earlier run
    rm -rf "$WORK/base-src" && mkdir -p "$WORK/base-src"
    git archive "$commit" | tar -x -C "$WORK/base-src"
    make -s -C "$WORK/base-src" -j2 PG_CONFIG="$PG_CONFIG" >/dev/null
    echo "$commit" >"$WORK/base-src/.commit"
  fi
  BASE_PG_BIN=$(HOPPER_BUILD_DIR="$WORK/base-src" test/private-install.sh "$WORK/base-pg" | sed -E "s/^export PG_BIN='(.*)'$/\1/")
  BASE_CLUSTER=$WORK/base-cluster BASE_HOST=$WORK/base-cluster BASE_PORT=$((PORT + 1))
  [ -d "$BASE_CLUSTER" ] && PG_BIN=$BASE_PG_BIN test/cluster.sh stop "$BASE_CLUSTER"
  PG_BIN=$BASE_PG_BIN HOPPER_TEST_PORT=$BASE_PORT HOPPER_TEST_SHARED_BUFFERS=1GB test/cluster.sh start "$BASE_CLUSTER" >/dev/null
  if [ "${BENCH_KEEP:-0}" != 1 ]; then
    trap 'PG_BIN=$BASE_PG_BIN "$ROOT/test/cluster.sh" stop "$BASE_CLUSTER"; PG_BIN=$PG_BIN "$ROOT/test/cluster.sh" stop "$WORK/cluster"' EXIT
  fi
  base_run() { PGHOST=$BASE_HOST PGPORT=$BASE_PORT PGDATABASE=hopper_bench psql -X -q -v ON_ERROR_STOP=1 "$@"; }
  base_run -d postgres -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_catalog.pg_reload_conf()" >/dev/null
  base_run -d postgres -c "CREATE DATABASE hopper_bench"
  load_fashion base_run
  base_run -c "VACUUM ANALYZE fashion_train, fashion_test"
}
