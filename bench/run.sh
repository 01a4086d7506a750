#!/usr/bin/env bash
# bench/run.sh: hopper side by side with scikit-learn, PyTorch and the machine's own GEMM limit, on
# Fashion-MNIST (MLP 784-128-10, minibatch 256, SGD+momentum and Adam, one thread then two).
#
#   bash bench/run.sh                  # full run: 10 epochs, median of 3 runs, scaling table (~25 min on 2 quiet cores)
#   BENCH_QUICK=1 bash bench/run.sh    # trying it out: 2 epochs, 1 run, no profile (~2 min)
#
# On a fresh Debian 12 machine it installs what it needs (Debian packages, with sudo unless root),
# builds hopper and the benchmark programs, installs the build into a private copy of PostgreSQL
# (test/private-install.sh) so the benchmark measures this build and nobody else's, starts a
# throwaway cluster from it, loads and packs Fashion-MNIST, runs every case (bench/bench.py) and
# prints one report, also written to bench/results/<date>-<host>.md. See bench/README.md.
#
# Settings (environment): BENCH_QUICK=1; BENCH_EPOCHS, BENCH_RUNS (override either mode);
# BENCH_DIR (default /tmp/hopper-bench: private PostgreSQL tree, cluster, raw results);
# BENCH_PORT (default 54340); BENCH_OUT (report file); BENCH_PROFILE=0 (skip the perf profiles);
# BENCH_SKIP_DEPS=1 (do not call apt); BENCH_KEEP=1 (leave the cluster running); BENCH_SCALING=0 (skip
# the scaling table, which packs 840,000 more rows first);
# BENCH_ONLY=case,case (run only these cases, for trying things out: see CASES in bench/bench.py).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then EPOCHS=${BENCH_EPOCHS:-2}; RUNS=${BENCH_RUNS:-1}; PROFILE=${BENCH_PROFILE:-0}
else EPOCHS=${BENCH_EPOCHS:-10}; RUNS=${BENCH_RUNS:-3}; PROFILE=${BENCH_PROFILE:-1}; fi
WORK=${BENCH_DIR:-/tmp/hopper-bench}
PORT=${BENCH_PORT:-54340}
BUILD=$ROOT/build/bench
DATA=/usr/share/datasets/fashion-mnist
HOST=$(hostname -s)
SUFFIX=$([ "$QUICK" = 1 ] && echo -quick || true)
OUT=${BENCH_OUT:-$ROOT/bench/results/$(date +%F)-$HOST$SUFFIX.md}
# The commit measured, and whether the work tree differed from it.
COMMIT=${BENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if [ -z "${BENCH_COMMIT:-}" ] && ! git diff --quiet HEAD -- src include Makefile CMakeLists.txt cmake bench ':!bench/results' sql 2>/dev/null; then
  COMMIT="$COMMIT (with uncommitted changes)"
fi

source bench/setup.sh

echo "== packing Fashion-MNIST"
run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
SELECT hopper.preprocess('fashion_train', 'fashion_packed_1', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => 1, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess_validation('fashion_test', 'fashion_test_packed_1', 'class_name', 'pixels', 'fashion_packed_1');
SELECT hopper.preprocess('fashion_train', 'fashion_packed_2', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => 2, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess_validation('fashion_test', 'fashion_test_packed_2', 'class_name', 'pixels', 'fashion_packed_2');
SELECT hopper.load_model_arch('bench_arch',
  '{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}',
  'mlp-784-128-10');
SELECT hopper.load_model_selection_table('bench_arch', 'bench_mst', ARRAY[1],
  ARRAY[$$loss='categorical_crossentropy', optimizer='SGD(lr=0.01, momentum=0.9)', metrics=['accuracy']$$,
        $$loss='categorical_crossentropy', optimizer='SGD(lr=0.03, momentum=0.9)', metrics=['accuracy']$$,
        $$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']$$,
        $$loss='categorical_crossentropy', optimizer='Adam(lr=0.003)', metrics=['accuracy']$$],
  ARRAY['batch_size=256']);
VACUUM ANALYZE;
SQL
# The fixed cost of a hop: 1,024 rows on 2 segments (bench.py's "tiny" case).
run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
CREATE TABLE fashion_tiny AS SELECT * FROM fashion_train WHERE id < 1024;
SELECT hopper.preprocess('fashion_tiny', 'fashion_tiny_packed_2', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => 2, normalizing_const => 255, seed => 1);
SQL
# The scaling table (bench.py's SCALING_POINTS): 4 segments, 16 and 32 configurations (learning rates
# spread log-uniformly by generate_model_configs' grid), the data replicated 4 times (2 segments) and
# 10 times (1 and 2 segments).
if [ "${BENCH_SCALING:-1}" = 1 ]; then
  echo "== packing the scaling table's data (4 segments; 240,000 and 600,000 rows)"
  run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
SELECT hopper.preprocess('fashion_train', 'fashion_packed_4', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => 4, normalizing_const => 255, seed => 1);
SELECT hopper.load_model_selection_table('bench_arch', 'bench_mst_16', ARRAY[1],
  ARRAY(SELECT format($$loss='categorical_crossentropy', optimizer='%s(lr=%s)', metrics=['accuracy']$$, o, lr)
        FROM unnest(ARRAY['SGD', 'Adam']) o, unnest(ARRAY[0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.03]) lr),
  ARRAY['batch_size=256']);
SELECT hopper.load_model_selection_table('bench_arch', 'bench_mst_32', ARRAY[1],
  ARRAY(SELECT format($$loss='categorical_crossentropy', optimizer='%s(lr=%s)', metrics=['accuracy']$$, o, lr)
        FROM unnest(ARRAY['SGD', 'Adam']) o, unnest(ARRAY[0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.03]) lr),
  ARRAY['batch_size=256', 'batch_size=128']);
SQL
  for times in 4 10; do
    [ "$QUICK" = 1 ] && [ "$times" = 10 ] && continue
    run >/dev/null 2>&1 <<SQL
SET client_min_messages = warning;
CREATE TABLE fashion_x$times AS SELECT t.id + k * 60000 AS id, t.class_name, t.pixels
  FROM fashion_train t, pg_catalog.generate_series(0, $times - 1) k;
SELECT hopper.preprocess('fashion_x$times', 'fashion_x${times}_packed_' || s, 'class_name', 'pixels',
                         buffer_size => 256, num_segments => s, normalizing_const => 255, seed => 1)
FROM pg_catalog.unnest(CASE WHEN $times = 10 THEN ARRAY[1, 2] ELSE ARRAY[2] END) s;
DROP TABLE fashion_x$times;
SQL
  done
fi
# Warm shared_buffers with the packed data, as in a steady state of repeated training.
run -c "SELECT count(*), sum(pg_catalog.array_length(independent_var, 1)) FROM fashion_packed_1" \
    -c "SELECT count(*), sum(pg_catalog.array_length(independent_var, 1)) FROM fashion_packed_2" >/dev/null

echo "== running the benchmark ($EPOCHS epochs, $RUNS run(s)); progress on stderr"
PROFILE_FLAG=()
[ "$PROFILE" = 1 ] && PROFILE_FLAG=(--profile)
QUICK_FLAG=()
[ "$QUICK" = 1 ] && QUICK_FLAG=(--quick)
/usr/bin/python3 bench/bench.py --work "$WORK" --build "$BUILD" --out "$OUT" --epochs "$EPOCHS" --runs "$RUNS" \
  --commit "$COMMIT" --only "${BENCH_ONLY:-}" "${PROFILE_FLAG[@]}" "${QUICK_FLAG[@]}"

# Optional: the CNN section (bench/cnn/run.sh) in the same cluster, on the same loaded data.
if [ "${BENCH_CNN:-0}" = 1 ]; then
  echo "== CNN section (bench/cnn/run.sh)"
  BENCH_CNN_REUSE=1 BENCH_DIR=$WORK BENCH_BUILD=$BUILD BENCH_COMMIT=$COMMIT bash bench/cnn/run.sh
fi
