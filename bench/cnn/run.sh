#!/usr/bin/env bash
# bench/cnn/run.sh: the Keras "simple convnet" on Fashion-MNIST (Conv2D 32 3x3 relu, MaxPooling 2,
# Conv2D 64 3x3 relu, MaxPooling 2, Flatten, Dropout 0.5, Dense 10 softmax; minibatch 128, Adam lr
# 0.001, one thread): hopper fit next to the same network in PyTorch, s/epoch and test accuracy, the
# GEMM floor of its products, then fit_multiple of four CNN configurations on 1 and 2 segments.
#
#   bash bench/cnn/run.sh                      # alone: builds, private cluster, loads the data
#   BENCH_CNN=1 bash bench/run.sh              # as the optional last section of bench/run.sh
#   BENCH_CNN_EPOCHS=2 BENCH_CNN_FM_ITERATIONS=1 bash bench/cnn/run.sh   # shorter
#
# Settings (environment): BENCH_CNN_EPOCHS (fit, PyTorch and core alone; default 10),
# BENCH_CNN_FM_ITERATIONS (fit_multiple; default 2), BENCH_CNN_ONLY=case,case (see CASES in
# bench/cnn/bench_cnn.py), BENCH_CNN_OUT (report; default bench/results/<date>-<host>-cnn.md), and
# bench/run.sh's BENCH_DIR, BENCH_PORT, BENCH_SKIP_DEPS, BENCH_KEEP. One run per case (a CNN epoch
# takes tens of seconds on one core); CPU seconds are reported beside wall seconds for busy machines.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source bench/env.sh
EPOCHS=${BENCH_CNN_EPOCHS:-10}
FM_ITERATIONS=${BENCH_CNN_FM_ITERATIONS:-2}
OUT=${BENCH_CNN_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-cnn.md}

if [ "${BENCH_CNN_REUSE:-0}" = 1 ]; then
  # Called by bench/run.sh: its cluster runs (PGHOST... exported) and the data are loaded.
  run() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
else
  source bench/setup.sh
fi

echo "== packing Fashion-MNIST for the CNN (28x28x1 images, buffers of 128 rows: one minibatch each)"
run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS cnn_packed_1, cnn_packed_1_summary, cnn_test_packed_1, cnn_test_packed_1_summary,
                     cnn_packed_2, cnn_packed_2_summary, cnn_test_packed_2, cnn_test_packed_2_summary,
                     cnn_arch, cnn_mst, cnn_mst_summary;
SELECT hopper.preprocess('fashion_train', 'cnn_packed_1', 'class_name', 'pixels',
                         buffer_size => 128, num_segments => 1, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess_validation('fashion_test', 'cnn_test_packed_1', 'class_name', 'pixels', 'cnn_packed_1');
SELECT hopper.preprocess('fashion_train', 'cnn_packed_2', 'class_name', 'pixels',
                         buffer_size => 128, num_segments => 2, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess_validation('fashion_test', 'cnn_test_packed_2', 'class_name', 'pixels', 'cnn_packed_2');
VACUUM ANALYZE;
SQL
run -c "SELECT count(*), sum(pg_catalog.array_length(independent_var, 1)) FROM cnn_packed_1" \
    -c "SELECT count(*), sum(pg_catalog.array_length(independent_var, 1)) FROM cnn_packed_2" >/dev/null

echo "== running the CNN benchmark (fit/PyTorch $EPOCHS epochs, fit_multiple $FM_ITERATIONS iterations); progress on stderr"
/usr/bin/python3 bench/cnn/bench_cnn.py --work "$WORK" --build "$BUILD" --out "$OUT" --epochs "$EPOCHS" \
  --fm-iterations "$FM_ITERATIONS" --commit "$COMMIT" --only "${BENCH_CNN_ONLY:-}"
