#!/usr/bin/env bash
# bench/tabular/run.sh: real tables as they are, side by side (issue 27 item 5). hopper (preprocess
# with '*' + fit + predict on raw rows) against scikit-learn (ColumnTransformer + MLPClassifier /
# MLPRegressor) and PyTorch (an MLP with nn.Embedding for categories) on public data sets that
# packages ship: penguins and flights-20k (npm vega-datasets), diamonds (Debian r-cran-ggplot2),
# credit_data (Debian r-cran-modeldata). Same split, architecture, optimizer, minibatch and epochs
# for every tool; accuracy or RMSE and the whole path's seconds in one table (bench/tabular/bench.py).
#
#   bash bench/tabular/run.sh                     # 3 seeds per tool and data set (~8 min on 2 cores)
#   BENCH_SEEDS=1 bash bench/tabular/run.sh       # trying it out
#
# Settings: BENCH_SEEDS (3), BENCH_ONLY=penguins,diamonds (data sets), BENCH_EPOCHS (override every
# data set's), BENCH_DIR (/tmp/hopper-bench-tabular: private PostgreSQL tree and cluster), BENCH_PORT
# (54341), BENCH_OUT (bench/results/<date>-<host>-tabular.md), BENCH_SKIP_DEPS=1, BENCH_KEEP=1,
# HOPPER_DATA_DIR (where scripts/datasets.sh keeps the downloaded files).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
WORK=${BENCH_DIR:-/tmp/hopper-bench-tabular}
PORT=${BENCH_PORT:-54341}
OUT=${BENCH_OUT:-$ROOT/bench/results/$(date +%F)-$(hostname -s)-tabular.md}
COMMIT=${BENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
if [ -z "${BENCH_COMMIT:-}" ] && ! git diff --quiet HEAD -- src include Makefile CMakeLists.txt cmake bench ':!bench/results' sql scripts 2>/dev/null; then
  COMMIT="$COMMIT (with uncommitted changes)"
fi

echo "== dependencies (Debian packages)"
if [ "${BENCH_SKIP_DEPS:-0}" != 1 ]; then
  # OpenBLAS: numpy, scikit-learn and Debian's PyTorch use the system libblas.so.3 (Debian's default is
  # the slow reference BLAS). R and its two packages ship diamonds and credit_data; npm (nodejs) the rest.
  bash scripts/install-deps.sh python3-sklearn python3-torch python3-numpy python3-threadpoolctl \
    libopenblas0-pthread r-base-core r-cran-ggplot2 r-cran-modeldata
fi
DATA=$(bash scripts/datasets.sh vega r)

echo "== building hopper and installing it into a private PostgreSQL tree ($WORK/pg)"
make -j2 PG_CONFIG="$PG_CONFIG" >/dev/null
eval "$(test/private-install.sh "$WORK/pg")"   # sets PG_BIN
export PATH="$PG_BIN:$PATH"

echo "== starting a private cluster in $WORK/cluster"
[ -d "$WORK/cluster" ] && PG_BIN=$PG_BIN test/cluster.sh stop "$WORK/cluster"
eval "$(PG_BIN=$PG_BIN HOPPER_TEST_PORT=$PORT test/cluster.sh start "$WORK/cluster")"
export PGHOST PGPORT PGUSER HOPPER_CLUSTER
if [ "${BENCH_KEEP:-0}" != 1 ]; then
  trap 'PG_BIN=$PG_BIN "$ROOT/test/cluster.sh" stop "$WORK/cluster"' EXIT
fi
psql -X -q -d postgres -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_catalog.pg_reload_conf()" >/dev/null
psql -X -q -d postgres -c "CREATE DATABASE hopper_bench_tabular"
export PGDATABASE=hopper_bench_tabular

echo "== loading the data sets as they are (scripts/datasets.sh, files in $DATA)"
psql -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION hopper"
HOPPER_DATA_DIR=$DATA bash scripts/datasets.sh load penguins credit_data diamonds flights
psql -X -q -c "VACUUM ANALYZE"

echo "== running (progress on stderr)"
/usr/bin/python3 bench/tabular/bench.py --seeds "${BENCH_SEEDS:-3}" --only "${BENCH_ONLY:-}" \
  --epochs "${BENCH_EPOCHS:-0}" --out "$OUT" --commit "$COMMIT"
echo "report: $OUT"
