#!/usr/bin/env bash
# bench/ps_servers_async.sh: the parameter server's key ranges over several servers and its
# asynchronous client, measured in one run (issue 19):
#   1. throughput (keys/s) of Get and Add from 2 client processes on one table of 1,000,000 keys,
#      held by one server vs split over two servers (PartitionedKVTable fans each call out to both);
#   2. the logistic-regression example (examples/ps_logreg.cpp) on Fashion-MNIST, synchronous Gets vs
#      --async (the next iteration's Get overlapped with the gradient step), alternating, medians of
#      BENCH_PS_RUNS runs: training seconds and test accuracy.
# Both servers run on this machine (two throwaway clusters), so they share its cores: two servers
# here split the work between two server processes, not two machines.
#   bash bench/ps_servers_async.sh          # ~3 minutes on 2 cores
# Settings: BENCH_PS_RUNS (default 3), BENCH_PS_SECONDS (per throughput case, default 3),
# BENCH_PS_OUT (default bench/results/<date>-<host>-ps.md). Needs hopper installed (make install)
# and the Debian package dataset-fashion-mnist.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${HOPPER_PS_BUILD:-$ROOT/build/core}
RUNS=${BENCH_PS_RUNS:-3}
SECONDS_PER_CASE=${BENCH_PS_SECONDS:-3}
OUT=${BENCH_PS_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-ps.md}
COMMIT=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo unknown)
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD" --target hopper_ps_tool ps_logreg -j2 >/dev/null
TOOL=$BUILD/hopper_ps_tool
A=$(mktemp -d /tmp/hopper-ps-a.XXXXXX) B=$(mktemp -d /tmp/hopper-ps-b.XXXXXX)
trap '"$ROOT/test/cluster.sh" stop "$A" >/dev/null 2>&1; "$ROOT/test/cluster.sh" stop "$B" >/dev/null 2>&1' EXIT
HOPPER_TEST_PORT=54361 "$ROOT/test/cluster.sh" start "$A" >/dev/null
HOPPER_TEST_PORT=54362 "$ROOT/test/cluster.sh" start "$B" >/dev/null
SA="host=$A port=54361 user=postgres dbname=postgres"
SB="host=$B port=54362 user=postgres dbname=postgres"
for s in "$SA" "$SB"; do psql -X -q "$s" -c "CREATE EXTENSION hopper"; done
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

echo "== 1. Get/Add throughput, 1 vs 2 servers"
KEYS=1000000
psql -X -q -At "$SA" -c "SELECT hopper.ps_create('one', $KEYS, chunk_size => 1000, consistency => 'asp', num_workers => 2)" >/dev/null
"$TOOL" create-parts "$SA,$SB" two $KEYS 1000 asp 0 2
throughput() {  # conninfos table op keys_per_call -> total keys/s of 2 client processes
  local f1 f2
  f1=$(mktemp) f2=$(mktemp)
  "$TOOL" bench "$1" "$2" 0 "$3" "$4" "$SECONDS_PER_CASE" > "$f1" &
  "$TOOL" bench "$1" "$2" 1 "$3" "$4" "$SECONDS_PER_CASE" > "$f2"
  wait
  echo "$(awk '{print $5}' "$f1") + $(awk '{print $5}' "$f2")" | bc
  rm -f "$f1" "$f2"
}
ROWS=""
for op in get add; do
  for per in 10000 100000; do
    one=$(throughput "$SA" one $op $per)
    two=$(throughput "$SA,$SB" two $op $per)
    echo "   $op $per keys/call: 1 server $one keys/s, 2 servers $two keys/s"
    ROWS+="| $op | $per | $(printf %.0f "$one") | $(printf %.0f "$two") | $(echo "scale=2; $two / $one" | bc)x |"$'\n'
  done
done

echo "== 2. logistic regression, synchronous vs asynchronous Gets"
LOGREG_ROWS=""
for case in "1 bsp 0 50 4000" "1 bsp 0 200 2000" "2 bsp 0 500 1000" "2 ssp 2 500 1000"; do
  read -r workers consistency staleness batch iterations <<<"$case"
  sync=() async=() sync_acc=() async_acc=()
  for _ in $(seq 1 "$RUNS"); do
    for mode in sync async; do
      flag=""; [ $mode = async ] && flag=--async
      out=$("$BUILD/ps_logreg" --conninfo "$SA" --workers "$workers" --consistency "$consistency" --staleness "$staleness" \
            --iterations "$iterations" --batch "$batch" --lr 0.05 $flag)
      secs=$(echo "$out" | sed -n 's/^trained .* in \([0-9.]*\) s.*/\1/p')
      acc=$(echo "$out" | sed -n 's/^test accuracy: //p')
      if [ $mode = sync ]; then sync+=("$secs"); sync_acc+=("$acc"); else async+=("$secs"); async_acc+=("$acc"); fi
    done
  done
  ms=$(printf '%s\n' "${sync[@]}" | median); ma=$(printf '%s\n' "${async[@]}" | median)
  as=$(printf '%s\n' "${sync_acc[@]}" | median); aa=$(printf '%s\n' "${async_acc[@]}" | median)
  echo "   $workers workers, $consistency($staleness), batch $batch: sync ${sync[*]} s, async ${async[*]} s"
  LOGREG_ROWS+="| $workers | $consistency${staleness:+ s=$staleness} | $batch | $iterations | $ms | $ma | $(echo "scale=3; $ms / $ma" | bc)x | $as | $aa |"$'\n'
done

mkdir -p "$(dirname "$OUT")"
{
  echo "# Parameter server: several servers, asynchronous client ($(date -u +%F), commit $COMMIT)"
  echo
  echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load before the run $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Both servers are clusters on this machine: they share its $(nproc) cores with the clients."
  echo
  echo "## Throughput: 2 client processes, ASP table of $KEYS keys (chunks of 1,000), $SECONDS_PER_CASE s per case"
  echo
  echo "| op | keys per call | 1 server, keys/s | 2 servers, keys/s | ratio |"
  echo "|---|---:|---:|---:|---:|"
  printf '%s' "$ROWS"
  echo
  echo "## Logistic regression on Fashion-MNIST (examples/ps_logreg.cpp), medians of $RUNS alternating runs"
  echo
  echo "| workers | consistency | batch | iterations | sync s | async s | speed-up | sync test acc. | async test acc. |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s' "$LOGREG_ROWS"
  echo
  echo "Training seconds from the table's creation to the last worker's end (data loading excluded)."
} > "$OUT"
echo "== report: $OUT"
cat "$OUT"
