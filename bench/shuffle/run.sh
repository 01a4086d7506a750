#!/usr/bin/env bash
# bench/shuffle/run.sh: test accuracy with and without reshuffling every pass (fit_params shuffle),
# beside PyTorch, which reshuffles every epoch (issue 29 item 7). Fashion-MNIST, MLP 784-128-10, Adam
# lr 0.001, minibatch 256 (one buffer: without shuffle a minibatch is the same 256 rows every
# epoch), the same seeds; hopper on 1 and 4 segments, PyTorch (bench/python_mlp.py, one thread,
# OpenBLAS's own kernel: bench/anchor.py).
#
#   bash bench/shuffle/run.sh                    # 15 epochs, seeds 1-3 (~5 min on 2 cores)
#   BENCH_SHUFFLE_EPOCHS=5 BENCH_SHUFFLE_SEEDS=1 bash bench/shuffle/run.sh
#
# Settings: BENCH_SHUFFLE_EPOCHS (15), BENCH_SHUFFLE_SEEDS (3), BENCH_SHUFFLE_OUT (report; default
# bench/results/<date>-<host>-shuffle.md) and bench/run.sh's BENCH_DIR, BENCH_PORT, BENCH_SKIP_DEPS,
# BENCH_KEEP.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source bench/env.sh
EPOCHS=${BENCH_SHUFFLE_EPOCHS:-15}
SEEDS=${BENCH_SHUFFLE_SEEDS:-3}
OUT=${BENCH_SHUFFLE_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-shuffle.md}
source bench/setup.sh

echo "== packing Fashion-MNIST (buffers of 256 rows) on 1 and 4 segments"
run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
SELECT hopper.preprocess('fashion_train', 'shuffle_packed_' || s, 'class_name', 'pixels', buffer_size => 256,
                         num_segments => s, normalizing_const => 255, seed => 1)
FROM pg_catalog.unnest(ARRAY[1, 4]) s;
SELECT hopper.preprocess_validation('fashion_test', 'shuffle_test_' || s, 'class_name', 'pixels', 'shuffle_packed_' || s)
FROM pg_catalog.unnest(ARRAY[1, 4]) s;
SQL

ARCH='{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}'
rows=()
for seed in $(seq 1 "$SEEDS"); do
  for segments in 1 4; do
    for shuffle in True False; do
      acc=$(run -A -t <<SQL | tail -1
SET client_min_messages = warning;
DROP TABLE IF EXISTS shuffle_model, shuffle_model_info, shuffle_model_summary;
CALL hopper.fit('shuffle_packed_$segments', 'shuffle_model', '$ARCH',
                \$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$,
                'batch_size=256, seed=$seed, shuffle=$shuffle', $EPOCHS,
                validation_table => 'shuffle_test_$segments', metrics_compute_frequency => $EPOCHS);
SELECT round(validation_metrics_final::numeric, 4) FROM shuffle_model_info;
SQL
)
      echo "hopper $segments segment(s) shuffle=$shuffle seed $seed: $acc" >&2
      rows+=("hopper, $segments segment(s), shuffle=$shuffle|$seed|$acc")
    done
  done
  acc=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 \
        /usr/bin/python3 bench/python_mlp.py torch --optimizer adam --epochs "$EPOCHS" --seed "$seed" --data "$DATA" \
        --batch-size 256 | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print("%.4f" % d["test_accuracy"], d["versions"]["blas"])')
  echo "PyTorch seed $seed: $acc" >&2
  rows+=("PyTorch (reshuffles every epoch)|$seed|${acc%% *}")
  BLAS=${acc#* }
done

{
  echo "# Reshuffling every pass, side by side ($(date +%F), $(hostname -s))"
  echo
  echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), cpu family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; hopper commit $COMMIT; PyTorch on $BLAS, one thread"
  echo "- Fashion-MNIST, MLP 784-128-10, Adam lr 0.001, minibatch 256, $EPOCHS epochs, test accuracy after the last"
  echo
  echo "| configuration | seeds | test accuracy per seed | mean |"
  echo "| --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}" | /usr/bin/python3 -c '
import collections, sys
acc = collections.OrderedDict()
for line in sys.stdin:
    name, seed, a = line.strip().split("|")
    acc.setdefault(name, []).append(float(a))
for name, v in acc.items():
    print("| %s | %d | %s | %.4f |" % (name, len(v), " ".join("%.4f" % x for x in v), sum(v) / len(v)))'
} | tee "$OUT"
