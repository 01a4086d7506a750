# bench/setup.sh: sourced by bench/run.sh and bench/cnn/run.sh (from the repository root, with ROOT,
# PG_CONFIG, WORK, PORT, BUILD and DATA set): Debian packages, the build (hopper and the benchmark
# programs), a private copy of PostgreSQL with this build installed, a throwaway cluster in
# $WORK/cluster (stopped on exit unless BENCH_KEEP=1), database hopper_bench with the extension and
# Fashion-MNIST loaded raw into fashion_train and fashion_test (pixels 0-255, class_name as label);
# defines run (psql that stops at the first error).
echo "== dependencies (Debian packages)"
if [ "${BENCH_SKIP_DEPS:-0}" != 1 ]; then
  # python3-sklearn/-torch use the system BLAS through libblas.so.3: OpenBLAS, as the issue's
  # reference figures assume (Debian's default libblas3 is the slow reference implementation).
  bash scripts/install-deps.sh python3-sklearn python3-torch python3-numpy libopenblas0-pthread python3-threadpoolctl \
    libbenchmark-dev dataset-fashion-mnist time libblis4-serial libdnnl-dev
fi

echo "== building hopper and the benchmark programs"
make -j2 PG_CONFIG="$PG_CONFIG" >/dev/null
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" --target hopper_core_alone hopper_gemm_bench hopper_conv_bench hopper_load_idx -j2 >/dev/null
eval "$(test/private-install.sh "$WORK/pg")"   # sets PG_BIN
export PATH="$PG_BIN:$PATH"

echo "== starting a private cluster in $WORK/cluster"
[ -d "$WORK/cluster" ] && PG_BIN=$PG_BIN test/cluster.sh stop "$WORK/cluster"
eval "$(PG_BIN=$PG_BIN HOPPER_TEST_PORT=$PORT HOPPER_TEST_SHARED_BUFFERS=1GB test/cluster.sh start "$WORK/cluster")"
export PGHOST PGPORT PGUSER HOPPER_CLUSTER
# BENCH_HUGE_PAGES=1: reserve the huge pages the cluster's shared memory asks for (as root) and restart
# it, so that PostgreSQL maps its buffers and hopper's buffer cache with 2 MB pages (huge_pages = try).
# With 4 kB pages each process that reads the cached buffers maps them page by page: ~17 ms of a
# backend's first iteration on Fashion-MNIST, and of each fresh worker's in every iteration of
# fit_multiple on two segments (perf, 2026-11-29). The report says which pages the run had.
if [ "${BENCH_HUGE_PAGES:-0}" = 1 ]; then
  pages=$(psql -X -At -d postgres -c "SHOW shared_memory_size_in_huge_pages")
  PG_BIN=$PG_BIN test/cluster.sh stop "$WORK/cluster"
  if [ "$(cat /proc/sys/vm/nr_hugepages)" -lt "$pages" ]; then
    $([ "$(id -u)" = 0 ] || echo sudo) sysctl -q -w vm.nr_hugepages="$pages"
  fi
  eval "$(PG_BIN=$PG_BIN HOPPER_TEST_PORT=$PORT HOPPER_TEST_SHARED_BUFFERS=1GB test/cluster.sh start "$WORK/cluster")"
fi
if [ "${BENCH_KEEP:-0}" != 1 ]; then
  trap 'PG_BIN=$PG_BIN "$ROOT/test/cluster.sh" stop "$WORK/cluster"' EXIT
fi
# Nothing but the benchmark may run in this cluster (bench/hopper_run.py tells processes apart by role).
psql -X -q -d postgres -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_catalog.pg_reload_conf()" >/dev/null
psql -X -q -d postgres -c "CREATE DATABASE hopper_bench"
export PGDATABASE=hopper_bench

echo "== loading and packing Fashion-MNIST"
run() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
source bench/fashion.sh
load_fashion run
