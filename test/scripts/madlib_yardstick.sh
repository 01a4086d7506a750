#!/usr/bin/env bash
# Apache MADlib's own deep-learning documentation examples and test files, run unchanged against
# hopper_madlib (test/madlib/yardstick.py says how each is judged). Needs a MADlib source tree:
#   git clone https://github.com/apache/madlib && git -C madlib checkout d9a4ee58ad40597ec346c442e80bc8e6c95bffe2
#   HOPPER_MADLIB_SRC=$PWD/madlib bash test/scripts/madlib_yardstick.sh [docs|tests|all] [NAME]
# (NAME: only the test files whose name contains it.)
# Without HOPPER_MADLIB_SRC (or python3) it says so and exits 0. Honours PGHOST/PGPORT/PGUSER and
# PG_BIN of a test cluster with hopper preloaded (test/cluster.sh); works in throwaway databases.
# HOPPER_MADLIB_REPORT=FILE writes the per-example lines there (test/madlib/results.txt is one).
# Exits non-zero when an example's output differs from MADlib's documented one without being listed
# in test/madlib/differences.txt (failures are counted and reported, as the measure they are).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${HOPPER_MADLIB_SRC:-}" ]; then
  echo "SKIP test/scripts/madlib_yardstick.sh: HOPPER_MADLIB_SRC is not set (a checkout of Apache MADlib; see docs/madlib.md)."
  exit 0
fi
if [ ! -d "$HOPPER_MADLIB_SRC/src/ports/postgres/modules/deep_learning" ]; then
  echo "madlib_yardstick: $HOPPER_MADLIB_SRC has no src/ports/postgres/modules/deep_learning" >&2
  exit 1
fi
if ! command -v python3 >/dev/null; then
  echo "SKIP test/scripts/madlib_yardstick.sh: python3 is not installed."
  exit 0
fi
exec python3 test/madlib/yardstick.py "${1:-all}" ${2:+"$2"}
