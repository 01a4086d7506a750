#!/usr/bin/env bash
# Serving one row by model name (issue 28): latency of
#   SELECT hopper.predict_class('m', features) FROM t WHERE id = :id
# against the row fetch alone (SELECT features FROM t WHERE id = :id, which sends the 784 values to
# the client as text, and SELECT cardinality(features) ..., which reads them without), one pgbench client with
# prepared statements, and batch scoring of every row of t through SELECT against hopper.predict
# into a table. The model is a Fashion-MNIST-sized MLP (784-128-10) trained one iteration on
# generated data (the latency does not depend on what it learned).
# One command: bash bench/serve/run.sh   (needs PGHOST/PGPORT of a cluster with hopper installed;
# ROWS (10000) and SECONDS_PER_RUN (20) may be set). Writes bench/serve/results.txt.
set -euo pipefail
ROWS=${ROWS:-10000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-20}
DB=hopper_bench_serve
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/results.txt"
WORK=$(mktemp -d /tmp/hopper-bench-serve.XXXXXX)
PGBENCH=${PG_BIN:+$PG_BIN/}pgbench
trap 'rm -rf "$WORK"; psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT
export PGDATABASE=$DB
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null
psql -X -q -d postgres -c "CREATE DATABASE $DB" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -v rows="$ROWS" <<'SQL' >/dev/null
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE t (id integer PRIMARY KEY, features real[] NOT NULL, label integer NOT NULL);
INSERT INTO t SELECT g, ARRAY(SELECT (random() * 255)::integer::real FROM generate_series(1, 784) WHERE g > 0), g % 10
FROM generate_series(1, :rows) g;
ANALYZE t;
SELECT hopper.preprocess('t', 't_packed', 'label', 'features', normalizing_const => 255, buffer_size => 1000);
CALL hopper.fit('t_packed', 't_model', '{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.001)'$$, 'batch_size=100', 1, name => 'bench_fit');
SELECT hopper.create_model('m');
SELECT hopper.register_model_version('m', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'bench_fit'));
SQL

echo '\set id random(1, '"$ROWS"')
SELECT features FROM t WHERE id = :id;' > "$WORK/fetch.sql"
echo '\set id random(1, '"$ROWS"')
SELECT cardinality(features) FROM t WHERE id = :id;' > "$WORK/read.sql"
echo '\set id random(1, '"$ROWS"')
SELECT hopper.predict_class('"'m'"', features) FROM t WHERE id = :id;' > "$WORK/predict.sql"

# p50 and p99 of the per-transaction latencies pgbench logged (microseconds, third column).
percentiles() {
  cat "$WORK/log_$1".* | awk '{print $3}' | sort -n | awk '{a[NR] = $1; s += $1} END {
    printf "%d transactions, p50 %.0f us, p99 %.0f us, mean %.0f us", NR, a[int(NR * 0.50) + 1], a[int(NR * 0.99) + 1], s / NR}'
}
run_bench() {  # name script
  (cd "$WORK" && "$PGBENCH" -n -M prepared -c 1 -j 1 -T "$SECONDS_PER_RUN" -l --log-prefix="log_$1" -f "$2" >"$1.out" 2>&1)
  percentiles "$1"
}
# A short warm-up of both (the table's pages, the session's plan) before the measured runs.
(cd "$WORK" && "$PGBENCH" -n -M prepared -c 1 -T 2 -f fetch.sql -f predict.sql >/dev/null 2>&1)
fetch=$(run_bench fetch "$WORK/fetch.sql")
read_only=$(run_bench read "$WORK/read.sql")
predict=$(run_bench predict "$WORK/predict.sql")

# Batch: every row through SELECT (into a table, as predict writes one) and through hopper.predict.
batch() {
  psql -X -q -At -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS by_select, by_predict;
SELECT hopper.predict_class('m', features) FROM t WHERE id = 1;  -- the session's model loaded
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE by_select AS SELECT id, hopper.predict_class('m', features) AS label FROM t;
SELECT round(extract(epoch FROM clock_timestamp() - :'t0') * 1000) AS select_ms \gset
SELECT clock_timestamp() AS t0 \gset
SELECT hopper.predict('t_model', 't', 'id', 'features', 'by_predict');
SELECT round(extract(epoch FROM clock_timestamp() - :'t0') * 1000) AS predict_ms \gset
SELECT :select_ms || ' ms through SELECT hopper.predict_class (CREATE TABLE AS), ' || :predict_ms ||
       ' ms through hopper.predict; answers differ in ' ||
       (SELECT count(*) FROM by_select s JOIN by_predict p USING (id) WHERE s.label IS DISTINCT FROM p.estimated_label::text) || ' rows';
SQL
}
batch_line=$(batch | tail -1)

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
{
  echo "hopper serving by name (bench/serve/run.sh), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "CPU: $cpu ($(nproc) cores); PostgreSQL $(psql -X -At -c 'SHOW server_version'); model 784-128-10; $ROWS rows"
  echo "pgbench, 1 client, prepared statements, ${SECONDS_PER_RUN}s each:"
  echo "  row fetch alone (784 reals to the client as text): $fetch"
  echo "  row read alone (cardinality(features), no output): $read_only"
  echo "  row read + hopper.predict_class('m'):              $predict"
  echo "batch of $ROWS rows: $batch_line"
} | tee "$OUT"
