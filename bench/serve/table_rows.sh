#!/usr/bin/env bash
# Scoring one table row by model name, the row itself as the features (a model trained on the table's
# own columns through preprocess '*'): SELECT hopper.predict_class('m', t) FROM t WHERE id = :id,
# against reading the row alone and against scoring an array of the same width, for tables of 5, 30
# and 70 columns (one in five text, the rest integers). One pgbench client, prepared statements,
# SECONDS_PER_RUN (default 10) per statement.
# One command: bash bench/serve/table_rows.sh   (needs PGHOST/PGPORT of a cluster with hopper installed
# and pgbench). Writes bench/serve/table_rows.txt.
set -euo pipefail
SECONDS_PER_RUN=${SECONDS_PER_RUN:-10}
DB=hopper_bench_table_rows
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/table_rows.txt"
WORK=$(mktemp -d /tmp/hopper-bench-rows.XXXXXX)
PGBENCH=${PG_BIN:+$PG_BIN/}pgbench
trap 'rm -rf "$WORK"; psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT
export PGDATABASE=$DB
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
psql -X -q -c "SET client_min_messages = warning" -c "CREATE EXTENSION hopper" >/dev/null

latency() {  # the average latency (ms) of the statements in file $1
  "$PGBENCH" -n -M prepared -T "$SECONDS_PER_RUN" -f "$1" 2>&1 | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p'
}

rows=()
for columns in 5 30 70; do
  select_list=""
  for i in $(seq 1 "$columns"); do
    if [ $((i % 5)) = 0 ]; then select_list+=", ('c' || (g * $i % 7)) AS c$i"; else select_list+=", (g * $i % 97) AS c$i"; fi
  done
  psql -X -q -v ON_ERROR_STOP=1 >/dev/null <<SQL
SET client_min_messages = warning;
CREATE TABLE t$columns AS SELECT g AS id, (g % 2 = 0)::text AS y $select_list FROM generate_series(1, 2000) g;
ALTER TABLE t$columns ADD PRIMARY KEY (id);
SELECT hopper.preprocess('t$columns', 'p$columns', 'y', '*', exclude_columns => 'id', scale => 'standardize');
CALL hopper.fit('p$columns', 'm$columns', '{"layers": [{"units": 16, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
                NULL, NULL, 1, name => 'rows$columns');
SELECT hopper.create_model('rows$columns');
SELECT hopper.register_model_version('rows$columns', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'rows$columns'));
SQL
  width=$(psql -X -At -c "SELECT independent_dim FROM p${columns}_summary")
  printf '\\set id random(1, 2000)\nSELECT t FROM t%s t WHERE id = :id;\n' "$columns" >"$WORK/read.sql"
  printf '\\set id random(1, 2000)\nSELECT hopper.predict_class(%s, t) FROM t%s t WHERE id = :id;\n' \
    "'rows$columns'" "$columns" >"$WORK/row.sql"
  printf "SELECT hopper.predict_class('rows%s', array_fill(0::real, ARRAY[%s]));\n" "$columns" "$width" >"$WORK/array.sql"
  read_ms=$(latency "$WORK/read.sql")
  row_ms=$(latency "$WORK/row.sql")
  array_ms=$(latency "$WORK/array.sql")
  rows+=("| $columns | $width | $read_ms | $row_ms | $array_ms |")
done

{
  echo "# Scoring one table row by model name ($(date -u +%F), $(git -C "$HERE" rev-parse --short HEAD))"
  echo
  echo "- machine: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), cpu family $(sed -n 's/^cpu family\s*: //p' /proc/cpuinfo | head -1), $(nproc) cores; $(psql -X -At -c 'SELECT version()' | cut -d' ' -f1-2)"
  echo "- one pgbench client, prepared statements, ${SECONDS_PER_RUN} s per statement; average latency in ms"
  echo
  echo "| table columns | features (one-hot included) | the row read alone | predict_class('m', t), the row | predict_class('m', array) |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} | tee "$OUT"
