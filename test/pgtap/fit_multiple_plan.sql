-- The training statement of fit/fit_multiple runs the segments in parallel: under the settings
-- hopper applies to its statements (src/pg/runtime/scoped_settings.cpp) the plan of
--   CREATE TABLE model_output AS SELECT ... hopper.train_segment(...)
--   FROM packed JOIN model_input ON dist_key GROUP BY dist_key, mst_key, pos
-- is Gather -> Parallel Append -> one aggregate per segment, each over its own partitions. This
-- file builds the working tables the way the run driver (src/pg/training/run.cpp, src/pg/engine/postgres.cpp) does and checks that plan shape, so it
-- fails if the training statement would run its segments one after another.
-- (test/scripts/fit_multiple_plan.sh checks the plans of the statements a real fit_multiple runs.)
BEGIN;
SELECT plan(16);
SET LOCAL client_min_messages = warning;

-- A packed table over 3 segments (regular tables: parallel workers cannot read temporary ones).
CREATE TABLE public.tap_fmp_points AS
SELECT g AS id, ARRAY[g % 7, g % 5]::float8[] AS x, (g % 3)::text AS label FROM generate_series(1, 300) g;
SELECT hopper.preprocess('public.tap_fmp_points', 'public.tap_fmp_packed', 'label', 'x', buffer_size => 20, num_segments => 3);

-- model_input as PostgresEngine::begin_iteration creates it: partitioned by dist_key like the
-- packed table, one unlogged partition per segment, a model placed on each.
CREATE TABLE public.tap_fmp_input (mst_key int4 NOT NULL, pos int4 NOT NULL, dist_key int4, model_state bytea NOT NULL)
    PARTITION BY LIST (dist_key);
DO $$
DECLARE d int;
BEGIN
    FOR d IN SELECT DISTINCT dist_key FROM public.tap_fmp_packed ORDER BY 1 LOOP
        EXECUTE format('CREATE TABLE public.tap_fmp_input_p%s PARTITION OF public.tap_fmp_input FOR VALUES IN (%s)', d, d);
    END LOOP;
END $$;
ALTER TABLE public.tap_fmp_input ALTER COLUMN model_state SET STORAGE EXTERNAL;
INSERT INTO public.tap_fmp_input SELECT k + 1, k, k, '\x00' FROM generate_series(0, 2) k;

-- The plan of a statement as jsonb (the top plan node).
CREATE FUNCTION pg_temp.plan_of(statement text) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
    p json;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON, COSTS OFF) ' || statement INTO p;
    RETURN (p::jsonb) -> 0 -> 'Plan';
END $$;
CREATE FUNCTION pg_temp.node_types(plan jsonb) RETURNS text[] LANGUAGE sql AS $$
    SELECT array_agg(t #>> '{}') FROM jsonb_path_query(plan, 'strict $.**."Node Type"') t
$$;

CREATE TEMP TABLE training_statement AS SELECT
    'CREATE TABLE public.tap_fmp_output AS SELECT mi.mst_key, mi.pos, d.dist_key,'
    ' hopper.train_segment(mi.model_state, d.independent_var, d.dependent_var, mi.mst_key, d.dist_key) AS model_state'
    ' FROM public.tap_fmp_packed AS d JOIN public.tap_fmp_input AS mi ON d.dist_key OPERATOR(pg_catalog.=) mi.dist_key'
    ' GROUP BY d.dist_key, mi.mst_key, mi.pos'::text AS sql;

-- hopper's statement settings (StatementSettings::enter), and set_parallel_workers(2), i.e.
-- hopper.parallel_segments = 2: planned for 2 workers, launched as 1 worker and the leader, which
-- takes a subplan of the Parallel Append itself. (Without it, 3 segments would get
-- 3 workers only through the parallel_workers of the engine's waiting partition, which this simplified
-- statement leaves out; test/scripts/fit_multiple_plan.sh checks the real statements.)
SET LOCAL enable_partitionwise_join = on;
SET LOCAL enable_partitionwise_aggregate = on;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL synchronize_seqscans = off;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL parallel_setup_cost = 10;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL jit = off;
SET LOCAL parallel_leader_participation = on;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL max_parallel_workers = 1;

CREATE TEMP TABLE p AS SELECT pg_temp.plan_of(sql) AS plan FROM training_statement;

SELECT is((SELECT plan ->> 'Node Type' FROM p), 'Gather', 'the training statement is gathered from parallel workers');
SELECT is((SELECT (plan ->> 'Workers Planned')::int FROM p), 2, 'planned for two processes (one worker and the leader run)');
SELECT is((SELECT plan -> 'Plans' -> 0 ->> 'Node Type' FROM p), 'Append', 'under the Gather an Append');
SELECT ok((SELECT (plan -> 'Plans' -> 0 ->> 'Parallel Aware')::boolean FROM p), 'the Append is a Parallel Append');
SELECT is((SELECT jsonb_array_length(plan -> 'Plans' -> 0 -> 'Plans') FROM p), 3, 'one subplan per segment');
SELECT is((SELECT array_agg(DISTINCT (c ->> 'Node Type') || '/' || (c ->> 'Partial Mode'))
             FROM p, jsonb_array_elements(plan -> 'Plans' -> 0 -> 'Plans') c),
          ARRAY['Aggregate/Simple'], 'each subplan is a whole (not partial) per-segment aggregate');
-- Each segment's aggregate reads only its own packed partition and model_input partition.
SELECT is((SELECT array_agg(rels ORDER BY rels)
             FROM (SELECT (SELECT array_agg(r #>> '{}' ORDER BY r #>> '{}')
                             FROM jsonb_path_query(c, 'strict $.**."Relation Name"') r) AS rels
                     FROM p, jsonb_array_elements(plan -> 'Plans' -> 0 -> 'Plans') c) x)::text,
          '{{tap_fmp_input_p0,tap_fmp_packed_p0},{tap_fmp_input_p1,tap_fmp_packed_p1},{tap_fmp_input_p2,tap_fmp_packed_p2}}',
          'every aggregate joins one segment''s buffers with the model placed on that segment');
-- Buffers reach the aggregate in storage order: no hash or merge join may reorder them.
SELECT ok((SELECT NOT (pg_temp.node_types(plan) && ARRAY['Hash Join', 'Merge Join', 'Hash']) FROM p),
          'no hash or merge join in the training statement');

-- The degree of parallelism follows max_parallel_workers_per_gather (what hopper.parallel_segments caps).
-- PostgreSQL costs a Parallel Append's whole subplans spread over the workers only, not over a
-- participating leader: hence one worker per segment (with one worker the plan is serial).
SET LOCAL max_parallel_workers_per_gather = 1;
SET LOCAL parallel_leader_participation = off;
SELECT ok((SELECT NOT ('Gather' = ANY (pg_temp.node_types(plan))) FROM (SELECT pg_temp.plan_of(sql) AS plan FROM training_statement) x),
          'one worker without the leader: the segments would run one after another');
SET LOCAL parallel_leader_participation = on;
SET LOCAL max_parallel_workers_per_gather = 3;
SELECT is((SELECT plan -> 'Plans' -> 0 ->> 'Node Type' FROM (SELECT pg_temp.plan_of(sql) AS plan FROM training_statement) x), 'Append',
          'more workers allowed: still a Parallel Append of the segments');
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT ok((SELECT NOT ('Gather' = ANY (pg_temp.node_types(plan))) FROM (SELECT pg_temp.plan_of(sql) AS plan FROM training_statement) x),
          'parallel_segments = 1 (and fit with one model): a serial plan, no worker is launched');
SET LOCAL max_parallel_workers_per_gather = 2;

-- Why CREATE TABLE AS: PostgreSQL 15 runs INSERT ... SELECT of the same query serially.
SELECT ok((SELECT NOT ('Gather' = ANY (pg_temp.node_types(
              pg_temp.plan_of(replace(sql, 'CREATE TABLE public.tap_fmp_output AS', 'INSERT INTO public.tap_fmp_input')))))
             FROM training_statement),
          'INSERT ... SELECT would be serial');
-- Why the settings: without partitionwise aggregation there is no per-segment aggregate under a Parallel Append.
SET LOCAL enable_partitionwise_aggregate = off;
SELECT ok((SELECT plan ->> 'Node Type' <> 'Gather' OR plan -> 'Plans' -> 0 ->> 'Node Type' <> 'Append'
             FROM (SELECT pg_temp.plan_of(sql) AS plan FROM training_statement) x),
          'without enable_partitionwise_aggregate the segments do not run as parallel aggregates');
SET LOCAL enable_partitionwise_aggregate = on;

-- The evaluation of all models (engine/engine.cpp evaluate_by_segment) runs like training: one
-- whole aggregate per segment under a Parallel Append, so every process evaluates whole segments
-- (a parallel scan shared one segment's few heap pages unevenly between processes).
CREATE TEMP TABLE e AS SELECT pg_temp.plan_of(
    'SELECT d.dist_key, hopper.evaluate_models_sums(ARRAY[''\x00''::bytea], d.independent_var, d.dependent_var)'
    ' FROM public.tap_fmp_packed AS d GROUP BY d.dist_key ORDER BY d.dist_key') AS plan;
SELECT ok((SELECT jsonb_path_exists(plan, 'strict $.** ? (@."Node Type" == "Gather" || @."Node Type" == "Gather Merge")')
                  AND (SELECT array_agg(DISTINCT (c ->> 'Node Type') || '/' || (c ->> 'Partial Mode'))
                         FROM jsonb_path_query(plan, 'strict $.** ? (@."Parallel Aware" == true && @."Node Type" == "Append").Plans[*]') c)
                      = ARRAY['Aggregate/Simple']
             FROM e),
          'evaluation: a Parallel Append of whole per-segment aggregates');

-- The setting that caps the parallelism is there and documented.
SELECT is(current_setting('hopper.parallel_segments'), '0', 'hopper.parallel_segments defaults to one process per segment');
SELECT ok((SELECT short_desc <> '' AND extra_desc <> '' FROM pg_settings WHERE name = 'hopper.parallel_segments'),
          'hopper.parallel_segments is documented');

SELECT * FROM finish();
ROLLBACK;
