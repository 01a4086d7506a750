#!/usr/bin/env bash
# bench/bf16/run.sh: mixed precision (fit_params precision='bfloat16', issue 29 item 8) side by side
# with float32, and with PyTorch's own CPU mixed precision (torch.autocast to bfloat16) and float32.
# Fashion-MNIST, MLP 784-H-10 with H = 128 (bench/run.sh's) and 1024 (larger products), Adam lr 0.001,
# minibatch 256, BENCH_BF16_EPOCHS epochs (5); hopper's whole CALL hopper.fit with its defaults on one
# segment and the test set as validation table, PyTorch's loop of bench/python_mlp.py (metrics every
# epoch) on one thread with OpenBLAS's own kernel (bench/anchor.py). Reports s/epoch (hopper: the
# CALL's wall time / epochs) and test accuracy, and the ratios, from one run.
#
#   bash bench/bf16/run.sh        (~5 min on 2 cores; needs a CPU with AVX512_BF16, else hopper refuses)
#
# Settings: BENCH_BF16_EPOCHS (5), BENCH_BF16_OUT (report; default bench/results/<date>-<host>-bf16.md),
# and bench/run.sh's BENCH_DIR, BENCH_PORT, BENCH_SKIP_DEPS, BENCH_KEEP.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source bench/env.sh
EPOCHS=${BENCH_BF16_EPOCHS:-5}
OUT=${BENCH_BF16_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-bf16.md}
grep -qw avx512_bf16 /proc/cpuinfo || { echo "bench/bf16: this CPU has no AVX512_BF16 (hopper refuses bfloat16 here)" >&2; exit 1; }
source bench/setup.sh

echo "== packing Fashion-MNIST on 1 segment"
run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
SELECT hopper.preprocess('fashion_train', 'bf16_packed', 'class_name', 'pixels', buffer_size => 256,
                         num_segments => 1, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess_validation('fashion_test', 'bf16_test', 'class_name', 'pixels', 'bf16_packed');
VACUUM ANALYZE;
SQL

rows=()
for hidden in 128 1024; do
  for precision in float32 bfloat16; do
    r=$(run -A -t <<SQL | tail -1
SET client_min_messages = warning;
DROP TABLE IF EXISTS bf16_model, bf16_model_info, bf16_model_summary;
SELECT clock_timestamp() AS t0 \gset
CALL hopper.fit('bf16_packed', 'bf16_model',
                '{"input_dim": 784, "layers": [{"units": $hidden, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}',
                \$\$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$,
                \$\$batch_size=256, precision='$precision'\$\$, $EPOCHS, validation_table => 'bf16_test');
SELECT round((extract(epoch FROM clock_timestamp() - :'t0') / $EPOCHS)::numeric, 3) || ' ' ||
       round(validation_metrics_final::numeric, 4) FROM bf16_model_info;
SQL
)
    echo "hopper $hidden $precision: $r" >&2
    rows+=("hopper fit|$hidden|$precision|${r% *}|${r#* }")
  done
  for precision in float32 bfloat16; do
    flag=$([ "$precision" = bfloat16 ] && echo --bf16 || true)
    r=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(/usr/bin/python3 bench/anchor.py env 1) \
        /usr/bin/python3 bench/python_mlp.py torch --optimizer adam --hidden "$hidden" --epochs "$EPOCHS" --data "$DATA" $flag |
        /usr/bin/python3 -c 'import json, sys; d = json.load(sys.stdin)
print("%.3f %.4f %s" % (sum(d["epoch_seconds"]) / len(d["epoch_seconds"]), d["test_accuracy"], d["versions"]["blas"]))')
    echo "PyTorch $hidden $precision: $r" >&2
    read -r sec acc blas <<<"$r"
    BLAS=$blas
    rows+=("PyTorch$([ "$precision" = bfloat16 ] && echo ' (autocast)' || true)|$hidden|$precision|$sec|$acc")
  done
done

{
  echo "# Mixed precision: bfloat16 against float32 ($(date +%F), $(hostname -s))"
  echo
  echo "- machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), cpu family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores, flags: $(grep -m1 -ow -e avx512_bf16 -e amx_bf16 /proc/cpuinfo | sort -u | tr '\n' ' '); hopper commit $COMMIT; PyTorch on $BLAS, one thread"
  echo "- Fashion-MNIST, MLP 784-H-10, Adam lr 0.001, minibatch 256, $EPOCHS epochs; hopper: CALL hopper.fit with a validation table and its defaults, one segment, wall time / epochs; PyTorch: bench/python_mlp.py's loop with metrics every epoch"
  echo
  echo "| system | hidden units | precision | s/epoch | test accuracy |"
  echo "| --- | --- | --- | --- | --- |"
  printf '%s\n' "${rows[@]}" | awk -F'|' '{printf "| %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5}'
  echo
  printf '%s\n' "${rows[@]}" | /usr/bin/python3 -c '
import sys
r = {}
for line in sys.stdin:
    system, h, p, sec, acc = line.strip().split("|")
    r[(system.split(" ")[0], h, p)] = (float(sec), float(acc))
for h in ("128", "1024"):
    hf, hb = r[("hopper", h, "float32")], r[("hopper", h, "bfloat16")]
    tf, tb = r[("PyTorch", h, "float32")], r[("PyTorch", h, "bfloat16")]
    print("- H = %s: hopper bfloat16 %.2fx faster than its float32 (accuracy %+.2f points); %.2fx PyTorch float32, %.2fx PyTorch autocast bfloat16 (accuracy %+.2f points against it)" %
          (h, hf[0] / hb[0], 100 * (hb[1] - hf[1]), tf[0] / hb[0], tb[0] / hb[0], 100 * (hb[1] - tb[1])))'
} | tee "$OUT"
