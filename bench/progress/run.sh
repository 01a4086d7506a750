#!/usr/bin/env bash
# bench/progress/run.sh: what hopper.run_progress costs a training run. Every packed buffer trained
# takes the progress lock once (progress.h); this times the whole CALL a user makes with
# hopper.track_progress on and off, alternating (on, off, on, off, ...) so that the machine's drift
# hits both alike, on Fashion-MNIST: fit (one model, one segment) and fit_multiple (4 configurations,
# 2 segments). Reports the medians side by side and the overhead.
#
#   bash bench/progress/run.sh            # builds, private cluster, loads the data (~6 min on 2 cores)
#
# Settings (environment): BENCH_PROGRESS_PAIRS (on/off pairs per case, default 5),
# BENCH_PROGRESS_OUT (default bench/results/<date>-<host>-progress.md), and bench/run.sh's
# BENCH_DIR, BENCH_PORT, BENCH_SKIP_DEPS, BENCH_KEEP.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
source bench/env.sh
PAIRS=${BENCH_PROGRESS_PAIRS:-5}
OUT=${BENCH_PROGRESS_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-progress.md}
source bench/setup.sh
q() { psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }

echo "== packing Fashion-MNIST on 1 and 2 segments"
run >/dev/null 2>&1 <<'SQL'
SET client_min_messages = warning;
SELECT hopper.preprocess('fashion_train', 'progress_packed_1', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => 1, normalizing_const => 255, seed => 1);
SELECT hopper.preprocess('fashion_train', 'progress_packed_2', 'class_name', 'pixels',
                         buffer_size => 256, num_segments => 2, normalizing_const => 255, seed => 1);
SELECT hopper.load_model_arch('progress_arch', '{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"},
                                                 {"units": 10, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('progress_arch', 'progress_mst', ARRAY[1],
    ARRAY[$$optimizer='Adam(lr=0.001)', metrics=['accuracy']$$, $$optimizer='SGD(lr=0.01, momentum=0.9)', metrics=['accuracy']$$],
    ARRAY['batch_size=64', 'batch_size=256']);
VACUUM ANALYZE;
SQL
[ "$(q -c "SHOW shared_preload_libraries")" = hopper ] || { echo "hopper must be preloaded" >&2; exit 1; }

seconds() {  # setting, SQL
  local t0 t1
  q -c "DROP TABLE IF EXISTS progress_out, progress_out_info, progress_out_summary" >/dev/null 2>&1
  t0=$(date +%s.%N)
  q -c "SET client_min_messages = warning" -c "SET hopper.track_progress = $1" -c "$2" >/dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

declare -A CASES=(
  [fit]="CALL hopper.fit('progress_packed_1', 'progress_out', '{\"input_dim\": 784, \"layers\": [{\"units\": 128, \"activation\": \"relu\"}, {\"units\": 10, \"activation\": \"softmax\"}]}', \$\$optimizer='Adam(lr=0.001)', metrics=['accuracy']\$\$, 'batch_size=128', 3)"
  [fit_multiple]="CALL hopper.fit_multiple('progress_packed_2', 'progress_out', 'progress_mst', 2)"
)
ROWS=""
for c in fit fit_multiple; do
  echo "== $c: $PAIRS pairs, progress on then off"
  seconds on "${CASES[$c]}" >/dev/null   # warm-up (caches, the first process's kernels)
  ON=(); OFF=()
  for _ in $(seq 1 "$PAIRS"); do
    ON+=("$(seconds on "${CASES[$c]}")")
    OFF+=("$(seconds off "${CASES[$c]}")")
  done
  MON=$(printf '%s\n' "${ON[@]}" | median); MOFF=$(printf '%s\n' "${OFF[@]}" | median)
  PCT=$(echo "scale=2; 100 * ($MON - $MOFF) / $MOFF" | bc)
  echo "   on: ${ON[*]}"; echo "   off: ${OFF[*]}"
  ROWS+="| $c | $(printf %.3f "$MOFF") | $(printf %.3f "$MON") | $PCT% | $(printf '%.2f ' "${OFF[@]}")| $(printf '%.2f ' "${ON[@]}")|"$'\n'
done

mkdir -p "$(dirname "$OUT")"
{
  echo "# What hopper.run_progress costs ($(date -u +%F), commit $COMMIT)"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load before the run $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Fashion-MNIST 60,000 rows in buffers of 256; fit: 784-128-10, Adam, batch 128, 3 iterations, one segment;"
  echo "fit_multiple: 4 configurations, 2 iterations, 2 segments. Whole CALLs from psql, $PAIRS alternating pairs, medians."
  echo
  echo "| call | median s, progress off | median s, progress on | overhead | runs off | runs on |"
  echo "|---|---:|---:|---:|---|---|"
  printf '%s' "$ROWS"
  echo
  echo "A negative overhead is noise: the difference is below what this machine resolves between two runs."
} > "$OUT"
echo "== report: $OUT"
cat "$OUT"
