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
source bench/base.sh
start_base_cluster "$BASE"

echo "== running (progress on stderr)"
/usr/bin/python3 bench/packing/compare.py --runs "${BENCH_PACK_RUNS:-7}" --out "$OUT" \
  --base "$BASE_HOST:$BASE_PORT:$BASE_CLUSTER" --new "$PGHOST:$PGPORT:$HOPPER_CLUSTER" \
  --base-commit "$(git rev-parse --short "$BASE")" --commit "$COMMIT"
