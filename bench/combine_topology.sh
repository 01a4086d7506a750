#!/usr/bin/env bash
# Hierarchical combine on a simulated topology: 8 segments on 4 nodes in 2 groups (racks), links
# between the groups 50x dearer than within them. The states are model averaging states of the
# Fashion-MNIST MLP (784-128-10, Adam: 101,770 parameters x 3 values, 16 bytes per value in an
# averaging state), one per segment, as data-parallel fit produces them.
#
# Prints the insertion rule's decision, the bytes that cross group boundaries with 2 levels (every
# segment's state goes to the coordinator) and with 3 levels (one state per group) -- measured from
# the states the queries really produced -- and the time of both on this machine (median of
# REPEAT runs). Writes its output to bench/results/combine_topology.txt.
#   bench/combine_topology.sh            REPEAT=7 bench/combine_topology.sh
# Uses the cluster in PGHOST/PGPORT if set, else starts a throwaway one (hopper must be installed).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/bench/results/combine_topology.txt
REPEAT=${REPEAT:-5}
if [ -z "${PGHOST:-}" ]; then
  CLUSTER=$(mktemp -d /tmp/hopper-combine-bench.XXXXXX)
  trap '"$ROOT/test/cluster.sh" stop "$CLUSTER"' EXIT
  eval "$("$ROOT/test/cluster.sh" start "$CLUSTER")"
  export PGHOST PGPORT PGUSER
fi
DB=hopper_bench_combine
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
run() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

# 8 segments of random 784-feature rows, a model trained on them for one iteration, and its 8
# copies trained one per segment (the partial level's input in data-parallel fit).
run <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE bench_rows AS
SELECT g AS id, ARRAY(SELECT random() FROM generate_series(1, 784) WHERE g > 0)::real[] AS pixels, (g % 10)::text AS label
FROM generate_series(1, 512) g;
SELECT hopper.preprocess('bench_rows', 'bench_packed', 'label', 'pixels', buffer_size => 64, num_segments => 8, seed => 1);
CALL hopper.fit('bench_packed', 'bench_model',
  '{"input_dim": 784, "layers": [{"units": 128, "activation": "relu"}, {"units": 10, "activation": "softmax"}]}',
  $$loss='categorical_crossentropy', optimizer='Adam(lr=0.001)', metrics=['accuracy']$$, 'batch_size=32', 1);
CREATE TABLE bench_copies AS
SELECT d.dist_key, hopper.train_segment(m.model_state, d.independent_var, d.dependent_var, 1, d.dist_key) AS model_state,
       sum(array_length(d.dependent_var, 1))::bigint AS rows
FROM bench_packed d, bench_model m GROUP BY d.dist_key;
-- 2 groups (racks) x 2 nodes x 2 segments; links between the racks cost 50x those within.
CREATE TABLE bench_topology AS
SELECT dist_key, 'rack-' || (CASE WHEN r < 4 THEN 'a' ELSE 'b' END) || '-node' || (r / 2) % 2 AS node,
       'rack-' || CASE WHEN r < 4 THEN 'a' ELSE 'b' END AS node_group
FROM (SELECT dist_key, (row_number() OVER (ORDER BY dist_key) - 1)::int AS r FROM bench_copies) s;
CREATE TABLE bench_links (group_a text, group_b text, cost float8);
INSERT INTO bench_links VALUES ('rack-a', 'rack-b', 50), ('rack-a', 'rack-a', 1), ('rack-b', 'rack-b', 1);
CREATE TABLE bench_runs (levels int, rep int, bytes_crossing bigint, partial_seconds float8, combine_seconds float8,
                         wall_seconds float8, model_state bytea, decision jsonb);
SQL

for rep in $(seq 1 "$REPEAT"); do
  for levels in 2 3; do
    run -c "SET client_min_messages = warning" -c "
      INSERT INTO bench_runs
      SELECT $levels, $rep, o.bytes_crossing_groups, o.partial_seconds, o.combine_seconds,
             extract(epoch FROM clock_timestamp() - t.start), o.model_state, o.decision
      FROM (SELECT clock_timestamp() AS start) t,
           LATERAL hopper.hierarchical_combine('bench_copies', 'model_average', '{model_state, rows}', levels => $levels,
                                               topology_table => 'bench_topology', link_cost_table => 'bench_links') o"
  done
done

{
  echo "# bench/combine_topology.sh, $(date -u +%Y-%m-%d), $(nproc) cores, $REPEAT repetitions"
  run -P pager=off <<'SQL'
\pset footer off
\echo 'topology: 8 segments, 4 nodes, 2 groups; links between groups cost 50x links within'
SELECT node_group, string_agg(DISTINCT node, ', ') AS nodes, count(*) AS segments FROM bench_topology GROUP BY 1 ORDER BY 1;
\echo 'the insertion rule (hopper.plan_combine) for the measured state size:'
SELECT decision ->> 'levels' AS levels, decision ->> 'reason' AS reason, decision ->> 'state_bytes' AS state_bytes
FROM bench_runs WHERE rep = 1 AND levels = 2;
SELECT c ->> 'check' AS "check", c ->> 'value' AS value, c ->> 'required' AS required, c ->> 'passed' AS passed
FROM bench_runs, jsonb_array_elements(decision -> 'checks') c WHERE rep = 1 AND levels = 2;
\echo 'measured (median over repetitions; partial = the per-segment level, the same in both):'
SELECT levels, CASE levels WHEN 2 THEN 8 ELSE 2 END AS states_crossing, min(bytes_crossing) AS bytes_crossing_groups,
       round((min(bytes_crossing) / 1048576.0)::numeric, 1) AS mib,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY partial_seconds)::numeric * 1000, 1) AS partial_ms,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY combine_seconds)::numeric * 1000, 1) AS combine_ms,
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY wall_seconds)::numeric * 1000, 1) AS total_ms
FROM bench_runs GROUP BY levels ORDER BY levels;
SELECT round((SELECT min(bytes_crossing) FROM bench_runs WHERE levels = 2)::numeric
             / (SELECT min(bytes_crossing) FROM bench_runs WHERE levels = 3), 2) AS bytes_cut_factor,
       (SELECT count(DISTINCT model_state) FROM bench_runs) = 1 AS same_model_every_run;
\echo 'estimated cost of the transfers (relative cost per byte x bytes, within and between groups):'
SELECT decision -> 'estimated_cost' ->> 'two_level' AS two_level, decision -> 'estimated_cost' ->> 'three_level' AS three_level,
       round(((decision -> 'estimated_cost' ->> 'two_level')::float8 / (decision -> 'estimated_cost' ->> 'three_level')::float8)::numeric, 2) AS ratio
FROM bench_runs WHERE rep = 1 AND levels = 2;
SQL
} | tee "$OUT"

cut=$(run -A -t -c "SELECT (SELECT min(bytes_crossing) FROM bench_runs WHERE levels = 2)::numeric / (SELECT min(bytes_crossing) FROM bench_runs WHERE levels = 3)")
awk -v c="$cut" 'BEGIN { exit !(c >= 3.99 && c <= 4.01) }' || { echo "bytes cut $cut is not 4x" >&2; exit 1; }
psql -X -q -d postgres -c "DROP DATABASE $DB"
