#!/usr/bin/env bash
# Data-parallel fit on Fashion-MNIST (60,000 training, 10,000 test images): MLP 784-128-10, Adam,
# 10 iterations over 4 segments. Each iteration every segment trains a copy of the model on its
# 15,000 images (all segments at once) and the copies are averaged, weighted by rows, through the
# hierarchical combine. Prints the test accuracy per iteration and fails below 0.84. Writes its
# output to bench/results/fit_data_parallel_fashion.txt.
#   bench/fit_data_parallel_fashion.sh
# Needs the Debian package dataset-fashion-mnist (scripts/install-deps.sh dataset-fashion-mnist).
# Uses the cluster in PGHOST/PGPORT if set, else starts a throwaway one (hopper must be installed).
# ITERATIONS (default 10), SEGMENTS (default 4).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${HOPPER_BUILD:-$ROOT/build/core}
OUT=$ROOT/bench/results/fit_data_parallel_fashion.txt
DATA=/usr/share/datasets/fashion-mnist
ITERATIONS=${ITERATIONS:-10}
SEGMENTS=${SEGMENTS:-4}
if [ ! -x "$BUILD/hopper_load_idx" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" --target hopper_load_idx -j2 >/dev/null
fi
if [ -z "${PGHOST:-}" ]; then
  CLUSTER=$(mktemp -d /tmp/hopper-dp-fashion.XXXXXX)
  trap '"$ROOT/test/cluster.sh" stop "$CLUSTER"' EXIT
  eval "$("$ROOT/test/cluster.sh" start "$CLUSTER")"
  export PGHOST PGPORT PGUSER
fi
DB=hopper_bench_dp_fashion
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
run() { psql -X -q -v ON_ERROR_STOP=1 -P pager=off -d "$DB" "$@"; }

source "$ROOT/bench/fashion.sh"
load_fashion run

{
  echo "# bench/fit_data_parallel_fashion.sh, $(date -u +%Y-%m-%d), $(nproc) cores, $SEGMENTS segments, $ITERATIONS iterations"
  run <<SQL
SET client_min_messages = warning;
SELECT hopper.preprocess('fashion_train', 'fashion_packed', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => $SEGMENTS, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess_validation('fashion_test', 'fashion_test_packed', 'class_name', 'pixels', 'fashion_packed');
SET client_min_messages = notice;
\timing on
CALL hopper.fit_data_parallel('fashion_packed', 'fashion_dp',
  '{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}',
  \$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$, 'batch_size=128',
  $ITERATIONS, validation_table => 'fashion_test_packed', metrics_compute_frequency => 1);
\timing off
\pset footer off
SELECT i.metrics_iters[k] AS iteration, round(i.training_metrics[k]::numeric, 4) AS train_accuracy,
       round(i.validation_metrics[k]::numeric, 4) AS test_accuracy, round(i.validation_loss[k]::numeric, 4) AS test_loss
FROM fashion_dp_info i, generate_subscripts(i.metrics_iters, 1) k ORDER BY k;
SELECT method, num_segments, round(training_seconds::numeric, 1) AS training_s,
       round(hop_seconds::numeric, 2) AS averaging_s, round(evaluation_seconds::numeric, 1) AS evaluation_s,
       i.steps, i.samples_seen, i.status
FROM fashion_dp_summary, fashion_dp_info i;
SELECT round(validation_metrics_final::numeric, 4) AS final_test_accuracy FROM fashion_dp_info;
SQL
} 2>&1 | tee "$OUT"

acc=$(run -A -t -c "SELECT validation_metrics_final FROM fashion_dp_info")
awk -v a="$acc" 'BEGIN { exit !(a >= 0.84) }' || { echo "test accuracy $acc is below 0.84" >&2; exit 1; }
psql -X -q -d postgres -c "DROP DATABASE $DB"
