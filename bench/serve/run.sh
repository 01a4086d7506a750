#!/usr/bin/env bash
# Serving by model name (issue 28), with its anchors, in one run:
#  * one row: the latency of
#      SELECT hopper.predict_class('m', features) FROM t WHERE id = :id
#    against the row fetch alone (SELECT features FROM t WHERE id = :id, which sends the 784 values to
#    the client as text, and SELECT cardinality(features) ..., which reads them without), one pgbench
#    client with prepared statements; and against a Flask model service on the same machine serving
#    the same weights (exported with hopper.model_weights) to one keep-alive client, one request a row;
#  * a batch: every row of t through SELECT (CREATE TABLE AS, as the planner chooses: in parallel;
#    and in one backend) against hopper.predict into a table, and against PyTorch's forward pass over
#    the same rows in one thread (the whole path, COPY out of PostgreSQL + forward, and the forward
#    pass alone), run under bench/anchor.py's environment so that OpenBLAS runs this CPU's best
#    kernel (reported).
# The model is a Fashion-MNIST-sized MLP (784-128-10) trained one iteration on generated data (the
# latency does not depend on what it learned).
# One command: bash bench/serve/run.sh   (needs PGHOST/PGPORT of a cluster with hopper installed, and
# Debian's python3-torch, python3-flask, python3-threadpoolctl; ROWS (10000), SECONDS_PER_RUN (20) and
# ROUNDS (5, batch timings: the median) may be set). Writes bench/serve/results.txt.
set -euo pipefail
ROWS=${ROWS:-10000}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-20}
ROUNDS=${ROUNDS:-5}
PYTHON=/usr/bin/python3  # Debian's, with Debian's torch and flask
DB=hopper_bench_serve
HERE=$(cd "$(dirname "$0")" && pwd)
OUT="$HERE/results.txt"
WORK=$(mktemp -d /tmp/hopper-bench-serve.XXXXXX)
PGBENCH=${PG_BIN:+$PG_BIN/}pgbench
SERVER_PID=
trap '[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"; psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true' EXIT
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
# The registered version's weights and scaling, for the anchors.
psql -X -q -At -v ON_ERROR_STOP=1 >"$WORK/model.json" <<'SQL'
SELECT pg_catalog.json_build_object('weights', hopper.model_weights(hopper.model_version_state('m')),
                                    'dims', ARRAY[784, 128, 10], 'normalizing_const', e.normalizing_const)
FROM hopper.model_versions_expanded e WHERE e.model_name = 'm' AND e.version = 1;
SQL

echo '\set id random(1, '"$ROWS"')
SELECT features FROM t WHERE id = :id;' > "$WORK/fetch.sql"
echo '\set id random(1, '"$ROWS"')
SELECT cardinality(features) FROM t WHERE id = :id;' > "$WORK/read.sql"
echo '\set id random(1, '"$ROWS"')
SELECT hopper.predict_class('"'m'"', features) FROM t WHERE id = :id;' > "$WORK/predict.sql"

# One pgbench run of 3 x SECONDS_PER_RUN, each transaction one of the three statements at random, so
# that the other work on the machine hits all three alike (separate runs measured its changes over
# time in the p99s). p50 and p99 of each statement's latencies as pgbench logged them (third column,
# microseconds; the fourth is the script's number).
# A short warm-up of all three (the table's pages, the session's plans) before the measured run.
(cd "$WORK" && "$PGBENCH" -n -M prepared -c 1 -T 2 -f fetch.sql -f read.sql -f predict.sql >/dev/null 2>&1)
(cd "$WORK" && "$PGBENCH" -n -M prepared -c 1 -j 1 -T $((3 * SECONDS_PER_RUN)) -l --log-prefix=log \
   -f fetch.sql -f read.sql -f predict.sql >pgbench.out 2>&1)
percentiles() {  # script number
  cat "$WORK"/log.* | awk -v s="$1" '$4 == s {print $3}' | sort -n | awk '{a[NR] = $1; s += $1} END {
    printf "%d transactions, p50 %.0f us, p99 %.0f us, mean %.0f us", NR, a[int(NR * 0.50) + 1], a[int(NR * 0.99) + 1], s / NR}'
}
fetch=$(percentiles 0)
read_only=$(percentiles 1)
predict=$(percentiles 2)

# The HTTP model service, one keep-alive client.
port=$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $("$PYTHON" "$HERE/../anchor.py" env 1) "$PYTHON" "$HERE/anchor.py" serve "$WORK/model.json" "$port" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do
  "$PYTHON" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])))' "$port" 2>/dev/null && break
  sleep 0.2
done
http=$("$PYTHON" "$HERE/anchor.py" client "$port" "$SECONDS_PER_RUN")
kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
SERVER_PID=

# Batch: every row through SELECT (into a table, as predict writes one; as the planner chooses and in
# one backend) and through hopper.predict, ROUNDS rounds; the median of each.
batch_round() {
  psql -X -q -At -v ON_ERROR_STOP=1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS by_read, by_read_planned, by_select, by_serial, by_predict;
SELECT hopper.predict_class('m', features) FROM t WHERE id = 1 \g /dev/null
SET max_parallel_workers_per_gather = 0;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE by_read AS SELECT id, pg_catalog.cardinality(features) AS label FROM t;
SELECT extract(epoch FROM clock_timestamp() - :'t0') * 1000 AS read_ms \gset
RESET max_parallel_workers_per_gather;
-- The planner gives a cheap expression no worker: parallel costs set to 0 for this one statement,
-- so that the reading is spread as predict_class's is.
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE by_read_planned AS SELECT id, pg_catalog.cardinality(features) AS label FROM t;
SELECT extract(epoch FROM clock_timestamp() - :'t0') * 1000 AS read_planned_ms \gset
RESET parallel_setup_cost; RESET parallel_tuple_cost;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE by_select AS SELECT id, hopper.predict_class('m', features) AS label FROM t;
SELECT extract(epoch FROM clock_timestamp() - :'t0') * 1000 AS select_ms \gset
SET max_parallel_workers_per_gather = 0;
SELECT clock_timestamp() AS t0 \gset
CREATE TABLE by_serial AS SELECT id, hopper.predict_class('m', features) AS label FROM t;
SELECT extract(epoch FROM clock_timestamp() - :'t0') * 1000 AS serial_ms \gset
RESET max_parallel_workers_per_gather;
SELECT clock_timestamp() AS t0 \gset
SELECT hopper.predict('t_model', 't', 'id', 'features', 'by_predict') \g /dev/null
SELECT extract(epoch FROM clock_timestamp() - :'t0') * 1000 AS predict_ms \gset
SELECT :select_ms, :serial_ms, :predict_ms, :read_ms, :read_planned_ms,
       (SELECT count(*) FROM by_select s JOIN by_predict p USING (id) WHERE s.label IS DISTINCT FROM p.estimated_label::text),
       (SELECT count(*) FROM by_serial s JOIN by_predict p USING (id) WHERE s.label IS DISTINCT FROM p.estimated_label::text);
SQL
}
for _ in $(seq "$ROUNDS"); do batch_round | tail -1 >>"$WORK/batch.txt"; done
median() {  # column of batch.txt
  cut -d'|' -f"$1" "$WORK/batch.txt" | sort -g | awk '{a[NR] = $1} END {printf "%.0f", a[int((NR + 1) / 2)]}'
}
select_ms=$(median 1); serial_ms=$(median 2); predict_ms=$(median 3)
read_ms=$(median 4)
read_planned_ms=$(median 5)
differ=$(awk -F'|' '{d += $6 + $7} END {print d}' "$WORK/batch.txt")
workers=$(psql -X -At -c "EXPLAIN CREATE TABLE x AS SELECT id, hopper.predict_class('m', features) FROM t" |
          sed -n 's/.*Workers Planned: *//p')
read_workers=$(psql -X -At -c "SET parallel_setup_cost = 0" -c "SET parallel_tuple_cost = 0" \
                    -c "EXPLAIN CREATE TABLE x AS SELECT id, pg_catalog.cardinality(features) FROM t" |
               sed -n 's/.*Workers Planned: *//p')
psql -X -q -At -c "COPY (SELECT label FROM by_select ORDER BY id) TO STDOUT" >"$WORK/labels.txt"

# PyTorch: one thread, OpenBLAS choosing its kernel itself.
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $("$PYTHON" "$HERE/../anchor.py" env 1) "$PYTHON" "$HERE/anchor.py" torch "$WORK/model.json" "$WORK/labels.txt" >"$WORK/torch.txt"
torch_info=$(head -1 "$WORK/torch.txt")
whole_ms=$(sed -n 's/^whole_ms //p' "$WORK/torch.txt")
forward_ms=$(sed -n 's/^forward_ms //p' "$WORK/torch.txt")
torch_differ=$(sed -n 's/^rows [0-9]* differ //p' "$WORK/torch.txt")

p50() { sed -n 's/.* p50 \([0-9]*\) us.*/\1/p' <<<"$1"; }
p99() { sed -n 's/.* p99 \([0-9]*\) us.*/\1/p' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
family=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
{
  echo "hopper serving by name (bench/serve/run.sh), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "CPU: model name '$model', cpu family $family ($(nproc) cores); PostgreSQL $(psql -X -At -c 'SHOW server_version'); model 784-128-10; $ROWS rows"
  echo "One row. pgbench, 1 client, prepared statements, the three statements interleaved at random in one $((3 * SECONDS_PER_RUN))s run:"
  echo "  row fetch alone (784 reals to the client as text): $fetch"
  echo "  row read alone (cardinality(features), no output): $read_only"
  echo "  row read + hopper.predict_class('m'):              $predict"
  echo "  Flask service, 1 keep-alive client (features in the request, JSON):"
  echo "                                                     $http"
  echo "  predict_class / row read: p50 $(ratio "$(p50 "$predict")" "$(p50 "$read_only")")x, p99 $(ratio "$(p99 "$predict")" "$(p99 "$read_only")")x;" \
       "predict_class / row fetch: p50 $(ratio "$(p50 "$predict")" "$(p50 "$fetch")")x, p99 $(ratio "$(p99 "$predict")" "$(p99 "$fetch")")x;" \
       "Flask / predict_class: p50 $(ratio "$(p50 "$http")" "$(p50 "$predict")")x, p99 $(ratio "$(p99 "$http")" "$(p99 "$predict")")x"
  echo "Batch of $ROWS rows (median of $ROUNDS rounds):"
  echo "  CREATE TABLE AS SELECT hopper.predict_class, as planned (Gather, ${workers:-0} worker(s) + leader): $select_ms ms"
  echo "  the same in one backend (max_parallel_workers_per_gather = 0):                      $serial_ms ms"
  echo "  hopper.predict into a table:                                                        $predict_ms ms"
  echo "  the rows' reading alone in one backend (CREATE TABLE AS SELECT id, cardinality(features)): $read_ms ms"
  echo "  the rows' reading alone in parallel (${read_workers:-0} worker(s) + leader, parallel costs 0): $read_planned_ms ms"
  echo "  answers differing from hopper.predict's: $differ"
  echo "  PyTorch, 1 thread ($torch_info):"
  echo "    whole path (binary COPY out through psql, parse, forward, argmax): $whole_ms ms"
  echo "    forward pass alone (rows in memory: scaling, 2 layers, argmax): $forward_ms ms"
  echo "    classes differing from hopper's: $torch_differ"
  echo "  SELECT as planned / hopper.predict $(ratio "$select_ms" "$predict_ms")x; one backend / hopper.predict $(ratio "$serial_ms" "$predict_ms")x;" \
       "SELECT as planned / PyTorch forward $(ratio "$select_ms" "$forward_ms")x, / PyTorch whole path $(ratio "$select_ms" "$whole_ms")x;" \
       "one backend / PyTorch forward $(ratio "$serial_ms" "$forward_ms")x;" \
       "reading alone in one backend / PyTorch forward $(ratio "$read_ms" "$forward_ms")x (what any scoring in SQL pays before its first product, on one core);" \
       "reading alone in parallel / PyTorch forward $(ratio "$read_planned_ms" "$forward_ms")x (the same on every core the planner gives it)"
  echo "  Floors: Flask p99 / row read alone p99 $(ratio "$(p99 "$http")" "$(p99 "$read_only")")x (the most any statement reading the row can be ahead of the service at p99)"
  echo "The machine was shared with other work (2 cores): compare the ratios of one run, not figures across runs."
} | tee "$OUT"
