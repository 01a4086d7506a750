#!/usr/bin/env bash
# bench/endtoend/run.sh: the whole path from a table in PostgreSQL to a trained model (issue 29 item
# 6). hopper (preprocess + preprocess_validation + fit, 5 epochs, defaults) against PyTorch's path
# (COPY the tables out, parse them with numpy, train 5 epochs with bench/run.sh's loop), on
# Fashion-MNIST loaded as bench/run.sh loads it; one report (bench/endtoend/bench.py) with the ratio.
#
#   bash bench/endtoend/run.sh                    # 5 runs per case, interleaved (~5 min on 2 cores)
#   BENCH_E2E_RUNS=1 bash bench/endtoend/run.sh   # trying it out
#
# Settings: BENCH_E2E_RUNS (5), BENCH_E2E_EPOCHS (5), BENCH_E2E_ONLY=hopper,torch-binary-1,...
# (cases of bench/endtoend/bench.py), BENCH_E2E_BASE (a commit whose hopper runs too, case
# hopper-base, in a cluster of its own: bench/base.sh), BENCH_E2E_OUT (report; default
# bench/results/<date>-<host>-endtoend.md) and bench/run.sh's BENCH_DIR, BENCH_PORT, BENCH_BUILD,
# BENCH_SKIP_DEPS, BENCH_KEEP, BENCH_COMMIT.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source bench/env.sh
OUT=${BENCH_E2E_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-endtoend.md}
source bench/setup.sh
# The user's tables as they are after a while in a database: visibility hints set, statistics
# taken, so that neither side's first read pays for writing them.
run -c "VACUUM ANALYZE fashion_train, fashion_test"
BASE_ARGS=()
if [ -n "${BENCH_E2E_BASE:-}" ]; then
  source bench/base.sh
  start_base_cluster "$BENCH_E2E_BASE"
  BASE_ARGS=(--base "$BASE_HOST:$BASE_PORT:$BASE_CLUSTER" --base-commit "$(git rev-parse --short "$BENCH_E2E_BASE")")
fi

echo "== running (progress on stderr)"
rm -f "$WORK/endtoend_results.jsonl"
/usr/bin/python3 bench/endtoend/bench.py --runs "${BENCH_E2E_RUNS:-5}" --epochs "${BENCH_E2E_EPOCHS:-5}" \
  --only "${BENCH_E2E_ONLY:-}" --out "$OUT" --raw "$WORK/endtoend_results.jsonl" --commit "$COMMIT" "${BASE_ARGS[@]}"
