-- Hierarchical combine under PostgreSQL's own parallel aggregation: the combine aggregates run as
-- Partial Aggregate -> Gather -> Finalize Aggregate (their combine, serialize and deserialize
-- functions at work) and give the serial result -- bit for bit where the state is exact (model
-- averaging, integer-valued sums), within the stated tolerance otherwise (metrics). Also the plan
-- of data-parallel fit's training statement, the catalog markings and the SQLSTATEs.
BEGIN;
SELECT plan(42);
SET LOCAL client_min_messages = warning;

-- Regular tables: parallel workers cannot read temporary ones.
CREATE TABLE public.tap_hc_vec AS
SELECT g % 5 AS dist_key, ARRAY[g, g % 11, 1]::float8[] AS x FROM generate_series(1, 20000) g;
CREATE TABLE public.tap_hc_points AS
SELECT g AS id, ARRAY[(g % 2) * 4.0 + sin(g), (g % 2) * -4.0 + cos(g)]::float8[] AS x, (g % 2)::text AS label
FROM generate_series(1, 3000) g;
SELECT hopper.preprocess('public.tap_hc_points', 'public.tap_hc_packed', 'label', 'x', buffer_size => 20, num_segments => 3);
CALL hopper.fit('public.tap_hc_packed', 'public.tap_hc_model',
                '{"input_dim": 2, "layers": [{"units": 8, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=10', 1);
-- Many model states to average: copies trained per segment, each repeated with its own weight.
CREATE TABLE public.tap_hc_copies AS
SELECT d.dist_key, hopper.train_segment(m.model_state, d.independent_var, d.dependent_var, 1, d.dist_key) AS model_state,
       sum(array_length(d.dependent_var, 1))::bigint AS rows
FROM public.tap_hc_packed d, public.tap_hc_model m GROUP BY d.dist_key;
CREATE TABLE public.tap_hc_states AS
SELECT c.dist_key, c.model_state, c.rows + k AS rows, k FROM public.tap_hc_copies c, generate_series(1, 200) k;
-- Serialized partial states, for the intermediate and final levels.
CREATE TABLE public.tap_hc_vec_states AS
SELECT g, hopper.vector_sum_partial(x) AS s FROM public.tap_hc_vec v, LATERAL (SELECT (x[1])::int % 400 AS g) l GROUP BY g;
CREATE TABLE public.tap_hc_avg_states AS
SELECT k, hopper.model_average_partial(model_state, rows) AS s FROM public.tap_hc_states GROUP BY k;
ANALYZE public.tap_hc_vec, public.tap_hc_states, public.tap_hc_vec_states, public.tap_hc_avg_states, public.tap_hc_packed;

CREATE FUNCTION pg_temp.plan_text(statement text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    line text;
    out text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || statement LOOP
        out := out || line || E'\n';
    END LOOP;
    RETURN out;
END $$;

CREATE FUNCTION pg_temp.workers_launched(statement text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    p json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF) ' || statement INTO p;
    RETURN (SELECT coalesce(sum((w #>> '{}')::int), 0) FROM jsonb_path_query(p::jsonb, 'strict $.**."Workers Launched"') w);
END $$;

-- Parallel plans on small tables.
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL jit = off;

CREATE TEMP TABLE statements (name text PRIMARY KEY, sql text);
INSERT INTO statements VALUES
    ('vector_sum', 'SELECT hopper.vector_sum(x) FROM public.tap_hc_vec'),
    ('vector_sum_partial', 'SELECT hopper.vector_sum_partial(x) FROM public.tap_hc_vec'),
    ('vector_sum_intermediate', 'SELECT hopper.vector_sum_intermediate(s) FROM public.tap_hc_vec_states'),
    ('vector_sum_final', 'SELECT hopper.vector_sum_final(s) FROM public.tap_hc_vec_states'),
    ('model_average', 'SELECT hopper.model_average(model_state, rows) FROM public.tap_hc_states'),
    ('model_average_partial', 'SELECT hopper.model_average_partial(model_state, rows) FROM public.tap_hc_states'),
    ('model_average_intermediate', 'SELECT hopper.model_average_intermediate(s) FROM public.tap_hc_avg_states'),
    ('model_average_final', 'SELECT hopper.model_average_final(s) FROM public.tap_hc_avg_states'),
    ('metrics', 'SELECT hopper.metrics((SELECT model_state FROM public.tap_hc_model), d.independent_var, d.dependent_var)
                 FROM public.tap_hc_packed d');

-- Every combine aggregate gets a parallel plan with partial aggregation.
SELECT ok(pg_temp.plan_text(sql) ~ 'Finalize Aggregate' AND pg_temp.plan_text(sql) ~ 'Partial Aggregate'
          AND pg_temp.plan_text(sql) ~ 'Gather', name || ': Partial Aggregate -> Gather -> Finalize Aggregate')
FROM statements ORDER BY name;

-- Workers really ran them (their states came back serialized and were combined).
SELECT cmp_ok(pg_temp.workers_launched(sql), '>=', 1, name || ': workers launched') FROM statements
WHERE name IN ('model_average', 'vector_sum_final') ORDER BY name;

-- Their parallel results, then the serial ones.
CREATE TEMP TABLE parallel_results (name text PRIMARY KEY, result text);
DO $$
DECLARE s record; r text;
BEGIN
    FOR s IN SELECT * FROM statements LOOP
        EXECUTE 'SELECT (' || s.sql || ')::text' INTO r;
        INSERT INTO parallel_results VALUES (s.name, r);
    END LOOP;
END $$;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT doesnt_match(pg_temp.plan_text(sql), 'Gather', name || ': serial plan without workers') FROM statements WHERE name = 'vector_sum';
CREATE TEMP TABLE serial_results (name text PRIMARY KEY, result text);
DO $$
DECLARE s record; r text;
BEGIN
    FOR s IN SELECT * FROM statements LOOP
        EXECUTE 'SELECT (' || s.sql || ')::text' INTO r;
        INSERT INTO serial_results VALUES (s.name, r);
    END LOOP;
END $$;

-- Exact states: the same value, whatever the workers did.
SELECT is(p.result, s.result, p.name || ': parallel result = serial result')
FROM parallel_results p JOIN serial_results s USING (name) WHERE p.name <> 'metrics' ORDER BY p.name;
SELECT isnt(result, NULL, 'model_average gave a model') FROM serial_results WHERE name = 'model_average';
-- Metrics are double sums: the row count is exact, the loss within kFloatStateTolerance (1e-9).
SELECT is((p.result::hopper.metrics_total).row_count, (s.result::hopper.metrics_total).row_count, 'metrics: same row count')
FROM parallel_results p JOIN serial_results s USING (name) WHERE name = 'metrics';
SELECT cmp_ok(abs((p.result::hopper.metrics_total).loss - (s.result::hopper.metrics_total).loss), '<=',
              1e-9 * abs((s.result::hopper.metrics_total).loss), 'metrics: same loss within tolerance')
FROM parallel_results p JOIN serial_results s USING (name) WHERE name = 'metrics';
SELECT cmp_ok(abs(((p.result::hopper.metrics_total).metrics ->> 'accuracy')::float8
                  - ((s.result::hopper.metrics_total).metrics ->> 'accuracy')::float8), '<=', 1e-12::float8,
              'metrics: same accuracy')
FROM parallel_results p JOIN serial_results s USING (name) WHERE name = 'metrics';

-- The partial level per segment may itself be split over workers (Partial HashAggregate per
-- partition); the states it gives are the serial ones.
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT ok(pg_temp.plan_text('SELECT d.dist_key, hopper.metrics_partial((SELECT model_state FROM public.tap_hc_model),
                             d.independent_var, d.dependent_var) FROM public.tap_hc_packed d GROUP BY d.dist_key') ~ 'Partial',
          'per-segment partial level: parallel partial aggregation');
CREATE TEMP TABLE segment_states AS
SELECT dist_key, hopper.vector_sum_partial(x) AS s FROM public.tap_hc_vec GROUP BY dist_key;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT is((SELECT (hopper.vector_sum_final(s ORDER BY dist_key))::text FROM segment_states),
          (SELECT hopper.vector_sum(x)::text FROM public.tap_hc_vec), 'per-segment partial states combine to the serial sum');
SET LOCAL max_parallel_workers_per_gather = 2;

-- hierarchical_combine: 2 and 3 levels agree (exactly for exact states).
CREATE TEMP TABLE topo AS SELECT k AS dist_key, 'n' || k AS node, CASE WHEN k < 2 THEN 'a' ELSE 'b' END AS node_group
FROM generate_series(0, 4) k;
CREATE TABLE public.tap_hc_topo AS SELECT * FROM topo;
SELECT is((SELECT model_state FROM hopper.hierarchical_combine('public.tap_hc_states', 'model_average', '{model_state, rows}', levels => 2)),
          (SELECT model_state FROM hopper.hierarchical_combine('public.tap_hc_states', 'model_average', '{model_state, rows}', levels => 3,
                                                               topology_table => 'public.tap_hc_topo')),
          'model averaging: 3 levels = 2 levels, bit for bit');
SELECT is((SELECT result FROM hopper.hierarchical_combine('public.tap_hc_vec', 'vector_sum', '{x}', levels => 2)),
          (SELECT result FROM hopper.hierarchical_combine('public.tap_hc_vec', 'vector_sum', '{x}', levels => 3,
                                                          topology_table => 'public.tap_hc_topo')),
          'vector sum (integer-valued): 3 levels = 2 levels');
SELECT cmp_ok(abs((a.result ->> 'loss')::float8 - (b.result ->> 'loss')::float8), '<=', 1e-9 * (a.result ->> 'loss')::float8,
              'metrics: 3 levels = 2 levels within tolerance')
FROM hopper.hierarchical_combine('public.tap_hc_packed', 'metrics', '{independent_var, dependent_var}',
                                 model_state => (SELECT model_state FROM public.tap_hc_model), levels => 2) a,
     hopper.hierarchical_combine('public.tap_hc_packed', 'metrics', '{independent_var, dependent_var}',
                                 model_state => (SELECT model_state FROM public.tap_hc_model), levels => 3,
                                 topology_table => 'public.tap_hc_topo') b;
SELECT is((SELECT bytes_crossing_groups FROM hopper.hierarchical_combine('public.tap_hc_vec', 'vector_sum', '{x}', levels => 3,
                                                                         topology_table => 'public.tap_hc_topo')) * 5,
          (SELECT bytes_crossing_groups FROM hopper.hierarchical_combine('public.tap_hc_vec', 'vector_sum', '{x}', levels => 2,
                                                                         topology_table => 'public.tap_hc_topo')) * 2,
          'bytes crossing groups: 5 segment states with 2 levels, 2 group states with 3');

-- Data-parallel fit's training statement (src/pg/training/data_parallel.cpp, under hopper's statement
-- settings): every segment trains at once, a whole aggregate per segment under a Parallel Append.
SET LOCAL enable_partitionwise_aggregate = on;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SET LOCAL parallel_setup_cost = 10;
SET LOCAL max_parallel_workers_per_gather = 3;
CREATE TEMP TABLE training AS SELECT pg_temp.plan_text(
    'CREATE TEMP TABLE tap_hc_partials AS SELECT (t.dist_key)::pg_catalog.int4 AS dist_key,'
    ' hopper.model_average_partial(t.model_state, t.weight) AS state FROM (SELECT d.dist_key,'
    ' hopper.train_segment(''\x00''::pg_catalog.bytea, d.independent_var, d.dependent_var, 1, d.dist_key) AS model_state,'
    ' pg_catalog.sum(pg_catalog.array_length(d.dependent_var, 1))::pg_catalog.int8 AS weight'
    ' FROM public.tap_hc_packed AS d GROUP BY d.dist_key) AS t GROUP BY 1') AS plan;
SELECT ok(plan ~ 'Gather' AND plan ~ 'Parallel Append', 'data-parallel training: Gather -> Parallel Append') FROM training;
SELECT is((SELECT count(*)::int FROM regexp_matches(plan, 'GroupAggregate|HashAggregate', 'g')) - 1, 3,
          'data-parallel training: one whole aggregate per segment (3), then the partial level') FROM training;
SELECT doesnt_match(plan, 'Partial (Group|Hash)?Aggregate', 'data-parallel training: no segment is split over workers') FROM training;

-- Catalog: the combine aggregates are parallel safe and combinable with serialize/deserialize.
SELECT is((SELECT count(*)::int FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
           WHERE p.pronamespace = 'hopper'::regnamespace AND p.proname ~ '^(vector_sum|model_average|metrics)(_partial|_intermediate|_final)?$'
             AND p.proparallel = 's' AND a.aggcombinefn <> 0 AND a.aggserialfn <> 0 AND a.aggdeserialfn <> 0),
          12, 'twelve combine aggregates, parallel safe, with combine, serialize and deserialize');
SELECT is((SELECT string_agg(proname || ':' || proparallel::text || ':' || provolatile::text, ',' ORDER BY proname) FROM pg_proc
           WHERE pronamespace = 'hopper'::regnamespace AND proname IN ('plan_combine', 'hierarchical_combine')),
          'hierarchical_combine:u:v,plan_combine:u:s', 'plan_combine is stable, hierarchical_combine volatile; neither parallel safe');
SELECT is((SELECT prokind::text FROM pg_proc WHERE oid = 'hopper.fit_data_parallel'::regproc), 'p', 'fit_data_parallel is a procedure');

-- SQLSTATEs.
SELECT throws_ok($$SELECT hopper.hierarchical_combine('public.tap_hc_vec', 'median', '{x}')$$, '22023', NULL, 'unknown kind');
SELECT throws_ok($$SELECT hopper.hierarchical_combine('public.tap_hc_nope', 'vector_sum', '{x}')$$, '42P01', NULL, 'missing source');
SELECT throws_ok($$SELECT hopper.hierarchical_combine('public.tap_hc_vec', 'vector_sum', '{y}')$$, '42703', NULL, 'missing column');
SELECT throws_ok($$SELECT hopper.hierarchical_combine('public.tap_hc_states', 'vector_sum', '{model_state}')$$, '42804', NULL,
                 'argument of the wrong type');
SELECT throws_ok($$SELECT hopper.vector_sum_final('\x0102'::bytea)$$, '22000', NULL, 'damaged state');
INSERT INTO public.tap_hc_topo VALUES (1, 'n1', 'b');
SELECT throws_ok($$SELECT hopper.plan_combine(1, NULL, 'public.tap_hc_topo', NULL)$$, '22023', NULL, 'a segment in two groups');

SELECT * FROM finish();
ROLLBACK;
