#!/usr/bin/env bash
# The parameter-server example at full size: softmax regression on Fashion-MNIST (60,000 training,
# 10,000 test images) by 2 worker processes against one SSP parameter table, through the C++ client
# (examples/ps_logreg.cpp). Writes its output to bench/results/ps_logreg_fashion_mnist.txt.
#   bench/ps_logreg_fashion_mnist.sh [extra ps_logreg options, e.g. --workers 4]
# Needs the Debian package dataset-fashion-mnist (scripts/install-deps.sh dataset-fashion-mnist).
# Uses the cluster in PGHOST/PGPORT if set, else starts a throwaway one (hopper must be installed).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${HOPPER_PS_BUILD:-$ROOT/build/core}
OUT=$ROOT/bench/results/ps_logreg_fashion_mnist.txt
if [ ! -x "$BUILD/ps_logreg" ]; then
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" --target ps_logreg -j2 >/dev/null
fi
if [ -z "${PGHOST:-}" ]; then
  CLUSTER=$(mktemp -d /tmp/hopper-ps-logreg.XXXXXX)
  trap '"$ROOT/test/cluster.sh" stop "$CLUSTER"' EXIT
  eval "$("$ROOT/test/cluster.sh" start "$CLUSTER")"
  export PGHOST PGPORT PGUSER
fi
psql -X -q -d postgres -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS hopper"
args=(--workers 2 --consistency ssp --staleness 2 --iterations 2000 --batch 100 --lr 0.05 "$@")
{
  echo "# bench/ps_logreg_fashion_mnist.sh, $(date -u +%Y-%m-%d), $(nproc) cores"
  echo "# ps_logreg ${args[*]}"
  "$BUILD/ps_logreg" "${args[@]}"
  psql -X -q -d postgres -c "SELECT hopper.ps_drop('fashion_logreg', if_exists => true)" >/dev/null
} | tee "$OUT"
acc=$(sed -n 's/^test accuracy: //p' "$OUT")
awk -v a="$acc" 'BEGIN { exit !(a >= 0.80) }' || { echo "test accuracy $acc is below 0.80" >&2; exit 1; }
