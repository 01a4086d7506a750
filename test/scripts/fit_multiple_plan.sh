#!/usr/bin/env bash
# The training statements a real fit_multiple runs are parallel, and hopper.parallel_segments sets
# how parallel. auto_explain (at NOTICE level, so to this client) prints the JSON plan of every
# statement hopper runs; the plans of the training statements (CREATE TABLE ... AS SELECT
# ... hopper.train_segment ...) are loaded back into the database and checked:
#   3 models on 3 segments: Gather (3 workers; the leader only gathers) -> Parallel Append -> 3
#   per-segment aggregates; hopper.parallel_segments = 2: 2 workers; = 1: a serial plan, no Gather;
#   5 models on 3 segments (2 wait in every hop): the segments still run under a Parallel Append;
#   3 models on 2 segments: 2 workers, one per segment (with 1 worker and the participating leader
#   the planner costed 2 segments like a serial plan and chose that).
# Needs PGHOST/PGPORT/PGUSER of a test cluster (test/run-all.sh sets them); exits non-zero on failure.
set -euo pipefail
DB=hopper_fm_plan
TMP=$(mktemp -d)
chmod 755 "$TMP"
cleanup() {
  psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$TMP"
}
trap cleanup EXIT
q() { psql -X -q -v ON_ERROR_STOP=1 -d "$DB" "$@"; }

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
  -c "CREATE DATABASE $DB"
q >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION hopper;
CREATE TABLE points AS
SELECT g AS id, ARRAY[g % 7, g % 5]::float8[] AS x, (g % 3)::text AS label FROM generate_series(1, 600) g;
SELECT hopper.preprocess('points', 'packed', 'label', 'x', buffer_size => 20, num_segments => 3);
SELECT hopper.preprocess('points', 'packed2', 'label', 'x', buffer_size => 20, num_segments => 2);
SELECT hopper.load_model_arch('arch', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}');
SELECT hopper.load_model_selection_table('arch', 'mst3', ARRAY[1], ARRAY['lr=0.1', 'lr=0.2', 'lr=0.3'], ARRAY['batch_size=5']);
SELECT hopper.load_model_selection_table('arch', 'mst5', ARRAY[1],
    ARRAY['lr=0.1', 'lr=0.2', 'lr=0.3', 'lr=0.4', 'lr=0.5'], ARRAY['batch_size=5']);
CREATE TABLE plans (run text, n serial, plan jsonb);
CREATE TABLE eval_plans (run text, n serial, plan jsonb);
SQL

# capture NAME MST SETTING [PACKED [TABLE [STATEMENT]]]: one iteration of fit_multiple with
# auto_explain on; keeps the plans of its statements that start like STATEMENT (default: the training
# statements) in TABLE (default: plans). hopper.debug_hops is on: without it plain PostgreSQL trains
# an iteration's hops in one group of processes, issuing no training statement (hop_workers.h), and
# the statements planned here are those of the debug record and of Citus.
capture() {
  local name=$1 mst=$2 setting=$3 packed=${4:-packed} table=${5:-plans}
  local statement=${6:-'CREATE TABLE %hopper.train_segment('}
  q >/dev/null 2>"$TMP/$name.log" <<SQL
\set SHOW_CONTEXT never
LOAD 'auto_explain';
SET auto_explain.log_min_duration = 0;
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_analyze = on;
SET auto_explain.log_timing = off;
SET auto_explain.log_format = json;
SET auto_explain.log_level = notice;
SET client_min_messages = notice;
SET hopper.debug_hops = on;
$setting
CALL hopper.fit_multiple('$packed', 'out_$name', '$mst', 1);
SQL
  cat > "$TMP/$name.sql" <<SQL
\\set log \`cat $TMP/$name.log\`
INSERT INTO $table (run, plan)
SELECT '$name', substr(chunk, strpos(chunk, '{'))::jsonb -> 'Plan'
FROM regexp_split_to_table(:'log', '(^|\n)NOTICE:  ') WITH ORDINALITY AS c(chunk, n)
WHERE chunk LIKE 'duration: %plan:%'
  AND chunk LIKE '%"Query Text": "$statement%'
ORDER BY n;
SQL
  q -f "$TMP/$name.sql"
}

capture m3 mst3 ""
capture m3_cap2 mst3 "SET hopper.parallel_segments = 2;"
capture m3_cap1 mst3 "SET hopper.parallel_segments = 1;"
capture m5 mst5 ""
capture m3_s2 mst3 "" packed2

expected="m3|3|t|t|3|3|t
m3_cap1|3|f|f|0|3|f
m3_cap2|3|t|t|2|3|f
m3_s2|3|t|t|2|2|f
m5|5|t|t|3|3|f"
actual=$(q -A -t <<'SQL'
WITH p AS (
  SELECT run, plan,
         -- the Gather and a Parallel Append under it, wherever they are in the plan
         jsonb_path_query_first(plan, 'strict $.** ? (@."Node Type" == "Gather")') AS gather,
         jsonb_path_query_first(plan, 'strict $.** ? (@."Node Type" == "Append" && @."Parallel Aware" == true)') AS pappend,
         -- the most whole (not partial) aggregates under one Append: one per segment
         (SELECT max((SELECT count(*) FROM jsonb_array_elements(a -> 'Plans') c
                      WHERE c ->> 'Node Type' = 'Aggregate' AND c ->> 'Partial Mode' = 'Simple'))
            FROM jsonb_path_query(plan, 'strict $.** ? (@."Node Type" == "Append")') a) AS aggregates
  FROM plans)
SELECT run,
       count(*) AS training_statements,
       bool_and(gather IS NOT NULL) AS gathered,
       bool_and(pappend IS NOT NULL) AS parallel_append,
       max(coalesce((gather ->> 'Workers Planned')::int, 0)) AS workers,
       max(aggregates) AS per_segment_aggregates,
       -- the workers really ran (at least once)
       bool_or(coalesce((gather ->> 'Workers Launched')::int, 0) > 0) AND run = 'm3' AS launched
FROM p GROUP BY run ORDER BY run;
SQL
)
if [ "$actual" != "$expected" ]; then
  echo "fit_multiple_plan: unexpected training plans" >&2
  echo "expected (run|statements|gathered|parallel_append|workers|per_segment_aggregates|launched in m3):" >&2
  echo "$expected" >&2
  echo "actual:" >&2
  echo "$actual" >&2
  echo "first training plan of each run:" >&2
  q -A -t >&2 <<'SQL' || true
WITH RECURSIVE t(run, node, depth, path) AS (
  SELECT run, plan, 0, '' FROM plans p WHERE n = (SELECT min(n) FROM plans q WHERE q.run = p.run)
  UNION ALL
  SELECT run, c, depth + 1, path || '.' || ord FROM t, jsonb_array_elements(node -> 'Plans') WITH ORDINALITY AS x(c, ord)
  WHERE depth < 4)
SELECT run || ' ' || repeat('  ', depth) || (node ->> 'Node Type') || coalesce(' ' || (node ->> 'Partial Mode'), '')
       || coalesce(' parallel_aware=' || (node ->> 'Parallel Aware'), '') || coalesce(' workers=' || (node ->> 'Workers Planned'), '')
       || coalesce(' ' || (node ->> 'Relation Name'), '')
FROM t ORDER BY run, path;
SQL
  exit 1
fi
# Evaluation runs one whole aggregate per segment, in parallel like training (it ran serially when
# its statement was prepared without CURSOR_OPT_PARALLEL_OK): 3 segments, 3 processes planned.
evaluation='SELECT d.dist_key, hopper.evaluate_models_sums('
capture e3 mst3 "SET hopper.training_metrics = exact;" packed eval_plans "$evaluation"
capture e3_cap1 mst3 "SET hopper.training_metrics = exact; SET hopper.parallel_segments = 1;" packed eval_plans "$evaluation"
expected_eval="e3|1|t|t|2|3|t
e3_cap1|1|f|f|0|1|f"
actual_eval=$(q -A -t <<'SQL'
WITH p AS (
  SELECT run, plan,
         jsonb_path_query_first(plan, 'strict $.** ? (@."Node Type" starts with "Gather")') AS gather,
         jsonb_path_query_first(plan, 'strict $.** ? (@."Node Type" == "Append" && @."Parallel Aware" == true)') AS pappend,
         (SELECT count(*) FROM jsonb_path_query(plan, 'strict $.** ? (@."Node Type" == "Aggregate" && @."Partial Mode" == "Simple")')) AS aggregates
  FROM eval_plans)
SELECT run, count(*), bool_and(gather IS NOT NULL), bool_and(pappend IS NOT NULL),
       max(coalesce((gather ->> 'Workers Planned')::int, 0)), max(aggregates),
       bool_or(coalesce((gather ->> 'Workers Launched')::int, 0) > 0)
FROM p GROUP BY run ORDER BY run;
SQL
)
if [ "$actual_eval" != "$expected_eval" ]; then
  echo "fit_multiple_plan: unexpected evaluation plans" >&2
  echo "expected (run|statements|gathered|parallel_append|workers|per_segment_aggregates|launched):" >&2
  echo "$expected_eval" >&2
  echo "actual:" >&2
  echo "$actual_eval" >&2
  exit 1
fi
echo "fit_multiple_plan: ok"
