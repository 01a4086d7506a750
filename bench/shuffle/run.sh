#!/usr/bin/env bash
# bench/shuffle/run.sh: test accuracy with and without reshuffling every pass (fit_params shuffle),
# beside PyTorch, which reshuffles every epoch (issue 29 item 7). Fashion-MNIST, MLP 784-128-10, Adam
# lr 0.001, minibatch 256 (one buffer: without shuffle a minibatch is the same 256 rows every
# epoch), the same seeds; hopper on 1 and 4 segments, PyTorch (bench/python_mlp.py, one thread,
# OpenBLAS's own kernel: bench/anchor.py).
#
# Then, per configuration (the issue's comparison): seven configurations of bench/automl's search space
# (SGD or Adam, learning rate, 64/128/256 hidden units, minibatch 64/128/256) trained for 27 epochs
# each by hopper (fit with its defaults, 2 segments, as the model-selection race runs) and by
# PyTorch, the same seed: test accuracy side by side, the mean difference, and how often each is ahead.
#
#   bash bench/shuffle/run.sh                    # 15 epochs, seeds 1-3, then 7 x 27 epochs (~20 min on 2 cores)
#   BENCH_SHUFFLE_EPOCHS=5 BENCH_SHUFFLE_SEEDS=1 BENCH_SHUFFLE_CONFIG_EPOCHS=3 bash bench/shuffle/run.sh
#
# Settings: BENCH_SHUFFLE_EPOCHS (15), BENCH_SHUFFLE_SEEDS (3), BENCH_SHUFFLE_CONFIG_EPOCHS (27; 0 skips
# the configurations), BENCH_SHUFFLE_OUT (report; default
# bench/results/<date>-<host>-shuffle.md) and bench/run.sh's BENCH_DIR, BENCH_PORT, BENCH_SKIP_DEPS,
# BENCH_KEEP.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source bench/env.sh
EPOCHS=${BENCH_SHUFFLE_EPOCHS:-15}
SEEDS=${BENCH_SHUFFLE_SEEDS:-3}
CONFIG_EPOCHS=${BENCH_SHUFFLE_CONFIG_EPOCHS:-27}
OUT=${BENCH_SHUFFLE_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-shuffle.md}
source bench/setup.sh

echo "== packing Fashion-MNIST (buffers of 256 rows) on 1, 2 and 4 segments"
run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
SELECT hopper.preprocess('fashion_train', 'shuffle_packed_' || s, 'class_name', 'pixels', buffer_size => 256,
                         num_segments => s, normalizing_const => 255, seed => 1)
FROM pg_catalog.unnest(ARRAY[1, 2, 4]) s;
SELECT hopper.preprocess_validation('fashion_test', 'shuffle_test_' || s, 'class_name', 'pixels', 'shuffle_packed_' || s)
FROM pg_catalog.unnest(ARRAY[1, 2, 4]) s;
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
  acc=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(/usr/bin/python3 bench/anchor.py env 1) \
        /usr/bin/python3 bench/python_mlp.py torch --optimizer adam --epochs "$EPOCHS" --seed "$seed" --data "$DATA" \
        --batch-size 256 | /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin); print("%.4f" % d["test_accuracy"], d["versions"]["blas"])')
  echo "PyTorch seed $seed: $acc" >&2
  rows+=("PyTorch (reshuffles every epoch)|$seed|${acc%% *}")
  BLAS=${acc#* }
done

# Seven configurations (optimizer, learning rate, hidden units, minibatch) spread over bench/automl's
# space, SGD without momentum as that space has it; one seed.
CONFIGS=("sgd 0.1 128 64" "sgd 0.03 256 128" "sgd 0.3 64 256" "adam 0.001 128 256" "adam 0.0003 256 64"
         "adam 0.003 64 128" "adam 0.0001 256 256")
config_rows=()
if [ "$CONFIG_EPOCHS" -gt 0 ]; then
  for c in "${CONFIGS[@]}"; do
    read -r opt lr units batch <<<"$c"
    if [ "$opt" = sgd ]; then optimizer="SGD(lr=$lr)"; else optimizer="Adam(lr=$lr)"; fi
    h=$(run -A -t <<SQL | tail -1
SET client_min_messages = warning;
DROP TABLE IF EXISTS shuffle_model, shuffle_model_info, shuffle_model_summary;
CALL hopper.fit('shuffle_packed_2', 'shuffle_model',
                '{"input_dim": 784, "layers": [{"units": $units, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}',
                \$\$loss='categorical_crossentropy', optimizer='$optimizer', metrics=['accuracy']\$\$,
                'batch_size=$batch, seed=1', $CONFIG_EPOCHS,
                validation_table => 'shuffle_test_2', metrics_compute_frequency => $CONFIG_EPOCHS);
SELECT round(validation_metrics_final::numeric, 4) FROM shuffle_model_info;
SQL
)
    t=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(/usr/bin/python3 bench/anchor.py env 1) \
        /usr/bin/python3 bench/python_mlp.py torch --optimizer "$opt" --lr "$lr" --momentum 0 --hidden "$units" \
        --batch-size "$batch" --epochs "$CONFIG_EPOCHS" --seed 1 --data "$DATA" |
        /usr/bin/python3 -c 'import json, sys; print("%.4f" % json.load(sys.stdin)["test_accuracy"])')
    echo "config $c: hopper $h, PyTorch $t" >&2
    config_rows+=("$opt lr $lr, $units hidden units, minibatch $batch|$h|$t")
  done
fi

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
  if [ "${#config_rows[@]}" -gt 0 ]; then
    echo
    echo "## Per configuration: $CONFIG_EPOCHS epochs, seed 1, hopper fit on 2 segments with its defaults (reshuffling) vs PyTorch"
    echo
    echo "| configuration | hopper | PyTorch | hopper - PyTorch (points) |"
    echo "| --- | --- | --- | --- |"
    printf '%s\n' "${config_rows[@]}" | /usr/bin/python3 -c '
import sys
d = []
for line in sys.stdin:
    name, h, t = line.strip().split("|")
    d.append(100 * (float(h) - float(t)))
    print("| %s | %s | %s | %+.2f |" % (name, h, t, d[-1]))
print()
print("Mean difference %+.2f points; hopper ahead in %d of %d, PyTorch ahead in %d." %
      (sum(d) / len(d), sum(x > 0 for x in d), len(d), sum(x < 0 for x in d)))'
  fi
} | tee "$OUT"
