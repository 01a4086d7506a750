#!/usr/bin/env bash
# bench/packing/run.sh: hopper.preprocess and preprocess_validation of Fashion-MNIST (the calls of
# bench/endtoend) by this build and by an earlier commit, side by side: two private clusters loaded
# alike from one build of the loader, runs interleaved (bench/packing/compare.py). This build runs
# with parallel workers reading rows (the default, up to max_parallel_workers_per_gather), with 1, and
# in the backend alone (max_parallel_workers_per_gather 0); every run's packed buffers are checked to be
# the base's, byte for byte.
#
#   bash bench/packing/run.sh                      # 7 runs per case (~4 min on 2 cores)
#   BENCH_PACK_RUNS=1 bash bench/packing/run.sh    # trying it out
#
# Settings: BENCH_PACK_BASE (the commit to compare with; 4dc022f, before issue 29 item 6's packing
# work), BENCH_PACK_RUNS (7), BENCH_PACK_OUT (report; default
# bench/results/<date>-<host>-packing.md) and bench/run.sh's BENCH_DIR, BENCH_PORT (the base's cluster
# takes the next port), BENCH_BUILD, BENCH_SKIP_DEPS, BENCH_KEEP, BENCH_COMMIT.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source bench/env.sh
OUT=${BENCH_PACK_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-packing.md}
BASE=${BENCH_PACK_BASE:-4dc022f}
source bench/setup.sh  # this build: $WORK/cluster, Fashion-MNIST loaded; defines run
run -c "VACUUM ANALYZE fashion_train, fashion_test"
NEW_HOST=$PGHOST NEW_PORT=$PGPORT NEW_CLUSTER=$HOPPER_CLUSTER NEW_PG_BIN=$PG_BIN

echo "== building $BASE"
BASE_COMMIT=$(git rev-parse "$BASE")
if [ "$(cat "$WORK/base-src/.commit" 2>/dev/null)" != "$BASE_COMMIT" ]; then  # else built by an earlier run
  rm -rf "$WORK/base-src" && mkdir -p "$WORK/base-src"
  git archive "$BASE_COMMIT" | tar -x -C "$WORK/base-src"
  make -s -C "$WORK/base-src" -j2 PG_CONFIG="$PG_CONFIG" >/dev/null
  echo "$BASE_COMMIT" >"$WORK/base-src/.commit"
fi
BASE_PG_BIN=$(HOPPER_BUILD_DIR="$WORK/base-src" test/private-install.sh "$WORK/base-pg" | sed -E "s/^export PG_BIN='(.*)'$/\1/")
[ -d "$WORK/base-cluster" ] && PG_BIN=$BASE_PG_BIN test/cluster.sh stop "$WORK/base-cluster"
eval "$(PG_BIN=$BASE_PG_BIN HOPPER_TEST_PORT=$((PORT + 1)) HOPPER_TEST_SHARED_BUFFERS=1GB test/cluster.sh start "$WORK/base-cluster")"
if [ "${BENCH_KEEP:-0}" != 1 ]; then
  trap 'PG_BIN=$BASE_PG_BIN "$ROOT/test/cluster.sh" stop "$WORK/base-cluster"; PG_BIN=$NEW_PG_BIN "$ROOT/test/cluster.sh" stop "$NEW_CLUSTER"' EXIT
fi
BASE_HOST=$PGHOST BASE_PORT=$PGPORT
psql -X -q -d postgres -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_catalog.pg_reload_conf()" >/dev/null
psql -X -q -d postgres -c "CREATE DATABASE hopper_bench"
export PGDATABASE=hopper_bench
load_fashion run
run -c "VACUUM ANALYZE fashion_train, fashion_test"

echo "== running (progress on stderr)"
/usr/bin/python3 bench/packing/compare.py --runs "${BENCH_PACK_RUNS:-7}" --out "$OUT" \
  --base "$BASE_HOST:$BASE_PORT:$WORK/base-cluster" --new "$NEW_HOST:$NEW_PORT:$NEW_CLUSTER" \
  --base-commit "$(git rev-parse --short "$BASE")" --commit "$COMMIT"
