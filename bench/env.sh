# bench/env.sh: sourced (from the repository root, with ROOT set) by the benchmarks in bench/*/run.sh:
# where they work and what they report -- PG_CONFIG, WORK (BENCH_DIR: private PostgreSQL tree,
# cluster, raw results), PORT (BENCH_PORT), BUILD (BENCH_BUILD), DATA (Fashion-MNIST from Debian)
# and COMMIT (BENCH_COMMIT, or HEAD, marked when the tree has uncommitted changes to what is measured).
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
WORK=${BENCH_DIR:-/tmp/hopper-bench}
PORT=${BENCH_PORT:-54340}
BUILD=${BENCH_BUILD:-$ROOT/build/bench}
DATA=/usr/share/datasets/fashion-mnist
COMMIT=${BENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if [ -z "${BENCH_COMMIT:-}" ] && ! git diff --quiet HEAD -- src include Makefile CMakeLists.txt cmake bench ':!bench/results' sql 2>/dev/null; then
  COMMIT="$COMMIT (with uncommitted changes)"
fi
