-- Hierarchical combine: the three-level aggregates over real tables, the insertion rule's decision
-- on fixed topologies, hierarchical_combine, data-parallel fit, and every error branch.
SET client_min_messages = warning;

-- Integer-valued vectors over 4 segments: float sums of them are exact in any order.
CREATE TABLE hc_vec AS
SELECT g % 4 AS dist_key, ARRAY[g, g % 7, -2 * g]::float8[] AS x FROM generate_series(1, 400) g;
INSERT INTO hc_vec VALUES (1, NULL);  -- NULL vectors are skipped

-- Two-level form, partial -> final, and partial -> intermediate -> final agree.
SELECT (hopper.vector_sum(x)).* FROM hc_vec;
SELECT (hopper.vector_sum_final(s ORDER BY k)).*
FROM (SELECT dist_key AS k, hopper.vector_sum_partial(x) AS s FROM hc_vec GROUP BY dist_key) p;
SELECT (hopper.vector_sum_final(s ORDER BY grp)).*
FROM (SELECT k % 2 AS grp, hopper.vector_sum_intermediate(s ORDER BY k) AS s
      FROM (SELECT dist_key AS k, hopper.vector_sum_partial(x) AS s FROM hc_vec GROUP BY dist_key) p GROUP BY k % 2) i;
-- No rows, or only NULL rows: NULL, at every level.
SELECT hopper.vector_sum(x) IS NULL AS none, hopper.vector_sum_partial(x) IS NULL AS no_state FROM hc_vec WHERE false;
SELECT hopper.vector_sum_final(NULL::bytea) IS NULL AS none, hopper.vector_sum_intermediate(NULL::bytea) IS NULL AS no_state;
SELECT (hopper.vector_sum(x)).count FROM hc_vec WHERE x IS NULL;
-- A state is small and self-checking: 16-byte header, count, length, sums and compensations, CRC.
SELECT octet_length(hopper.vector_sum_partial(x)) AS state_bytes FROM hc_vec WHERE dist_key = 0;

-- Model averaging over real model states: copies of one model trained per segment.
CREATE TABLE hc_blobs AS
SELECT g AS id,
       ARRAY[(g % 3) * 2.0 + sin(g) * 0.6, ((g / 3) % 2) * 2.0 + cos(g * 1.7) * 0.6]::float8[] AS x,
       CASE (g % 3) + 3 * ((g / 3) % 2) WHEN 0 THEN 'a' WHEN 1 THEN 'b' WHEN 2 THEN 'c'
                                        WHEN 3 THEN 'd' WHEN 4 THEN 'e' ELSE 'f' END AS label
FROM generate_series(1, 1200) g;
SELECT hopper.preprocess('hc_blobs', 'hc_packed', 'label', 'x', buffer_size => 50, num_segments => 4,
                         scale => 'standardize', seed => 3);
CALL hopper.fit('hc_packed', 'hc_start',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=25', 1);
CREATE TABLE hc_copies AS
SELECT d.dist_key, hopper.train_segment(m.model_state, d.independent_var, d.dependent_var, 1, d.dist_key) AS model_state,
       sum(array_length(d.dependent_var, 1))::bigint AS rows
FROM hc_packed d, hc_start m GROUP BY d.dist_key;
SELECT count(*) AS copies, count(DISTINCT model_state) AS distinct_copies, sum(rows) AS rows FROM hc_copies;
-- Exact: two-level, three-level (two groupings) and a different order give the same bytes.
CREATE TABLE hc_avg AS
SELECT (SELECT hopper.model_average(model_state, rows) FROM hc_copies) AS two_level,
       (SELECT hopper.model_average_final(s ORDER BY g)
        FROM (SELECT p.dist_key % 2 AS g, hopper.model_average_intermediate(p.s ORDER BY p.dist_key) AS s
              FROM (SELECT dist_key, hopper.model_average_partial(model_state, rows) AS s FROM hc_copies GROUP BY dist_key) p
              GROUP BY p.dist_key % 2) i) AS three_level,
       (SELECT hopper.model_average_final(s ORDER BY g DESC)
        FROM (SELECT dist_key / 3 AS g, hopper.model_average_partial(model_state, rows ORDER BY dist_key DESC) AS s
              FROM hc_copies GROUP BY dist_key / 3) i) AS other_grouping;
SELECT two_level = three_level AS identical, two_level = other_grouping AS identical_again,
       (hopper.model_state_info(two_level) ->> 'num_params')::int AS params,
       hopper.model_state_info(two_level) - 'checksum' - 'config' AS info
FROM hc_avg;
-- The average is the rows-weighted mean of the copies' weights (here: equal rows).
SELECT max(abs(a.w - c.w)) < 1e-6 AS weighted_mean
FROM (SELECT i, w FROM hc_avg, unnest(hopper.model_weights(two_level)) WITH ORDINALITY AS u(w, i)) a
JOIN (SELECT i, avg(w) AS w FROM hc_copies, unnest(hopper.model_weights(model_state)) WITH ORDINALITY AS u(w, i) GROUP BY i) c
USING (i);
-- Averaging copies of one state gives its weights and optimizer slots back, bit for bit (the counters
-- count every copy's last visit).
SELECT hopper.model_weights(a) = hopper.model_weights(s) AS same_weights,
       hopper.model_state_info(a) ->> 'visits' AS visits, hopper.model_state_info(s) ->> 'visits' AS visits_before
FROM (SELECT hopper.model_average(model_state, 10) AS a, (SELECT model_state FROM hc_start) AS s
      FROM hc_start, generate_series(1, 3)) v;
-- An averaging state holds 16 bytes per value (150 parameters + 2 x 150 Adam slots).
SELECT octet_length(hopper.model_average_partial(model_state, rows)) AS state_bytes,
       octet_length(model_state) AS model_bytes FROM hc_copies WHERE dist_key = 0 GROUP BY model_state;

-- Metrics: the same figures as hopper.evaluate, at every level.
SELECT (hopper.metrics(m.model_state, d.independent_var, d.dependent_var)).row_count,
       abs((hopper.metrics(m.model_state, d.independent_var, d.dependent_var)).loss - e.loss) < 1e-9 AS same_loss,
       abs(((hopper.metrics(m.model_state, d.independent_var, d.dependent_var)).metrics ->> 'accuracy')::float8
           - (e.metrics ->> 'accuracy')::float8) < 1e-12 AS same_accuracy
FROM hc_packed d, hc_start m, hopper.evaluate('hc_start', 'hc_packed') e GROUP BY e.loss, e.metrics;
SELECT f.row_count, abs(f.loss - e.loss) < 1e-9 AS same_loss,
       (f.metrics ->> 'accuracy')::float8 = (e.metrics ->> 'accuracy')::float8 AS same_accuracy
FROM (SELECT (hopper.metrics_final(s ORDER BY g)).*
      FROM (SELECT dist_key % 2 AS g, hopper.metrics_intermediate(s ORDER BY dist_key) AS s
            FROM (SELECT d.dist_key, hopper.metrics_partial(m.model_state, d.independent_var, d.dependent_var) AS s
                  FROM hc_packed d, hc_start m GROUP BY d.dist_key) p GROUP BY dist_key % 2) i) f,
     hopper.evaluate('hc_start', 'hc_packed') e;

-- The insertion rule on fixed topologies (user tables, passed by name).
CREATE TABLE hc_topo_one (dist_key int, node text, node_group text);
INSERT INTO hc_topo_one SELECT k, 'n' || (k / 2), 'rack' FROM generate_series(0, 7) k;
CREATE TABLE hc_topo (dist_key int, node text, node_group text);  -- 2 groups x 2 nodes x 2 segments
INSERT INTO hc_topo SELECT k, CASE WHEN k < 4 THEN 'east' ELSE 'west' END || (k / 2) % 2,
                           CASE WHEN k < 4 THEN 'east' ELSE 'west' END FROM generate_series(0, 7) k;
CREATE TABLE hc_links_50 (group_a text, group_b text, cost float8);
INSERT INTO hc_links_50 VALUES ('east', 'west', 50), ('east', 'east', 1), ('west', 'west', 1);
CREATE TABLE hc_links_5 (group_a text, group_b text, cost float8);
INSERT INTO hc_links_5 VALUES ('west', 'east', 5);
CREATE TABLE hc_decisions AS
SELECT 'one group' AS topology, hopper.plan_combine(4000000, NULL, 'hc_topo_one', NULL) AS d
UNION ALL SELECT '2x2, 50x gap', hopper.plan_combine(4000000, NULL, 'hc_topo', 'hc_links_50')
UNION ALL SELECT '2x2, 5x gap', hopper.plan_combine(4000000, NULL, 'hc_topo', 'hc_links_5')
UNION ALL SELECT '2x2, state too small', hopper.plan_combine(60, NULL, 'hc_topo', 'hc_links_50')
UNION ALL SELECT '2x2, costs unmeasured', hopper.plan_combine(4000000, NULL, 'hc_topo', NULL)
UNION ALL SELECT 'empty (default)', hopper.plan_combine(4000000, ARRAY[0, 1, 2, 3], NULL, NULL)
UNION ALL SELECT '3 of 8 segments', hopper.plan_combine(4000000, ARRAY[0, 1, 4], 'hc_topo', 'hc_links_50')
UNION ALL SELECT 'coordinator in east', hopper.plan_combine(4000000, NULL, 'hc_topo', 'hc_links_50', 'east');
SELECT topology, d -> 'levels' AS levels, d ->> 'reason' AS reason FROM hc_decisions;
SELECT topology, d -> 'producers' AS producers, d -> 'groups' AS groups, d -> 'nodes' AS nodes,
       d -> 'producers_per_group' AS per_group, d -> 'bytes_crossing_groups' AS bytes_crossing
FROM hc_decisions;
SELECT topology, d -> 'link_costs' AS link_costs, d -> 'estimated_cost' AS estimated_cost FROM hc_decisions;
SELECT c ->> 'check' AS "check", c ->> 'value' AS value, c ->> 'required' AS required, c -> 'passed' AS passed
FROM hc_decisions, jsonb_array_elements(d -> 'checks') c WHERE topology = '2x2, 5x gap';
SELECT d -> 'thresholds' AS thresholds, d -> 'state_bytes' AS state_bytes, d -> 'default_topology' AS default_topology
FROM hc_decisions WHERE topology = 'empty (default)';
-- Thresholds are parameters.
SELECT hopper.plan_combine(4000000, NULL, 'hc_topo', 'hc_links_5', cost_factor => 4) -> 'levels' AS levels_at_4x,
       hopper.plan_combine(4000000, NULL, 'hc_topo', 'hc_links_50', bytes_factor => 5) -> 'levels' AS levels_at_5x_bytes,
       hopper.plan_combine(60, NULL, 'hc_topo', 'hc_links_50', min_bytes_saved => 0) -> 'levels' AS levels_tiny_state;

-- hierarchical_combine: the decision uses the measured state size; 2 and 3 levels give one result.
CREATE TABLE hc_vec8 AS
SELECT g % 8 AS dist_key, ARRAY[g, 1, g % 3]::float8[] AS x FROM generate_series(1, 800) g;
SELECT levels, producers, bytes_crossing_groups, result, decision ->> 'reason' AS reason
FROM hopper.hierarchical_combine('hc_vec8', 'vector_sum', '{x}', topology_table => NULL, link_cost_table => NULL);
SELECT levels, producers, bytes_crossing_groups, result, decision ->> 'reason' AS reason
FROM hopper.hierarchical_combine('hc_vec8', 'vector_sum', '{x}', topology_table => 'hc_topo',
                                 link_cost_table => 'hc_links_50', min_bytes_saved => 0);
SELECT levels, bytes_crossing_groups, result = (SELECT to_jsonb(hopper.vector_sum(x)) FROM hc_vec8) AS same_as_two_level
FROM hopper.hierarchical_combine('hc_vec8', 'vector_sum', '{x}', levels => 3, topology_table => 'hc_topo',
                                 link_cost_table => 'hc_links_50', coordinator_group => 'west');
-- The default topology table (empty: one group) and the default link cost table.
SELECT levels, producers, decision -> 'default_topology' AS default_topology
FROM hopper.hierarchical_combine('hc_vec8', 'vector_sum', '{x}');
INSERT INTO hopper.combine_topology SELECT * FROM hc_topo;
INSERT INTO hopper.combine_link_costs SELECT * FROM hc_links_50;
SELECT levels, producers, decision -> 'default_topology' AS default_topology, decision ->> 'reason' AS reason
FROM hopper.hierarchical_combine('hc_vec8', 'vector_sum', '{x}', min_bytes_saved => 100);
DELETE FROM hopper.combine_topology;
DELETE FROM hopper.combine_link_costs;
-- Model averaging and metrics through hierarchical_combine: the same results in 2 and 3 levels.
SELECT a.levels AS levels_a, b.levels AS levels_b, a.model_state = b.model_state AS identical_models,
       a.model_state = (SELECT two_level FROM hc_avg) AS same_as_aggregate, a.result - 'bytes' AS summary
FROM hopper.hierarchical_combine('hc_copies', 'model_average', '{model_state, rows}', levels => 2) a,
     hopper.hierarchical_combine('hc_copies', 'model_average', '{model_state, rows}', levels => 3,
                                 topology_table => 'hc_topo') b;
SELECT a.levels AS levels_a, b.levels AS levels_b, a.result -> 'row_count' AS row_count,
       abs((a.result ->> 'loss')::float8 - (b.result ->> 'loss')::float8) < 1e-12 AS same_loss,
       a.result -> 'metrics' = b.result -> 'metrics' AS same_metrics, a.model_state IS NULL AS no_model
FROM hopper.hierarchical_combine('hc_packed', 'metrics', '{independent_var, dependent_var}',
                                 model_state => (SELECT model_state FROM hc_start), levels => 2) a,
     hopper.hierarchical_combine('hc_packed', 'metrics', '{independent_var, dependent_var}',
                                 model_state => (SELECT model_state FROM hc_start), levels => 3,
                                 topology_table => 'hc_topo') b;
-- Another dist_key column, of another integer type.
CREATE TABLE hc_vec_seg AS SELECT (dist_key + 4)::smallint AS seg, x FROM hc_vec8;
SELECT producers, result -> 'count' AS count FROM hopper.hierarchical_combine('hc_vec_seg', 'vector_sum', '{x}', dist_key_column => 'seg');

-- Data-parallel fit: each iteration trains a copy per segment and averages them. Exact training
-- metrics (a pass over the training table after each evaluated iteration): with the training table
-- as validation table, both give the same numbers.
SET hopper.training_metrics = exact;
CALL hopper.fit_data_parallel('hc_packed', 'hc_dp',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=25', 6,
    validation_table => 'hc_packed', metrics_compute_frequency => 3, name => 'dp run');
SELECT training_metrics_final > 0.97 AS learned, training_loss[1] > training_loss[2] AS loss_fell, metrics_iters,
       metrics_type, status, steps, samples_seen, num_params, validation_loss_final = training_loss_final AS same_table
FROM hc_dp_info;
SELECT training_metrics FROM hc_dp_summary;
RESET hopper.training_metrics;
SELECT source_table, method, num_iterations, num_models, num_segments, hops_per_iteration, name, metrics_iters,
       hop_seconds >= 0 AS timed
FROM hc_dp_summary;
SELECT mst_key, fit_params, model_config -> 'compile' -> 'optimizer' ->> 'name' AS optimizer FROM hc_dp;
-- Reproducible, and exact averaging makes the 3-level run give the same model as the 2-level run.
CALL hopper.fit_data_parallel('hc_packed', 'hc_dp3',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=25', 6,
    validation_table => 'hc_packed', metrics_compute_frequency => 3, topology_table => 'hc_topo', combine_levels => 3);
SELECT a.model_state = b.model_state AS identical FROM hc_dp a, hc_dp3 b;
-- Warm start continues from the stored model.
CALL hopper.fit_data_parallel('hc_packed', 'hc_dp',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$optimizer='Adam(lr=0.02)', metrics=['accuracy']$$, 'batch_size=25', 2, warm_start => true);
SELECT steps, samples_seen, warm_start FROM hc_dp_info, hc_dp_summary;
-- A learning rate that diverges is reported, and training stops.
SET client_min_messages = warning;
CALL hopper.fit_data_parallel('hc_packed', 'hc_dp_diverged',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
    $$optimizer='SGD(lr=1e30)'$$, 'batch_size=25', 2);
SELECT status FROM hc_dp_diverged_info;
-- With fit's defaults (compile_params, fit_params, num_iterations): the call a user makes after fit's
-- was refused ("procedure ... does not exist", a Citus sweep).
CALL hopper.fit_data_parallel('hc_packed', 'hc_dp_defaults',
    '{"input_dim": 2, "layers": [{"units": 16, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}');
SELECT s.num_iterations, i.compile_params, i.fit_params, i.metrics_type FROM hc_dp_defaults_summary s, hc_dp_defaults_info i;
RESET client_min_messages;
SET client_min_messages = warning;

-- Errors: the aggregates (serially, so whether an error came from a parallel worker does not vary).
SET max_parallel_workers_per_gather = 0;
SELECT hopper.vector_sum(x) FROM (VALUES ('{1,2}'::float8[]), ('{1,2,3}')) v(x);
SELECT hopper.vector_sum(x) FROM (VALUES ('{1,NaN}'::float8[])) v(x);
SELECT hopper.vector_sum(x) FROM (VALUES ('{1,NULL}'::float8[])) v(x);
SELECT hopper.vector_sum_final(s) FROM (VALUES ('\x00'::bytea)) v(s);
SELECT hopper.vector_sum_final(s) FROM (SELECT set_byte(hopper.vector_sum_partial(x), 30, 7) AS s FROM hc_vec) v;
SELECT hopper.vector_sum_final(s)
FROM (SELECT hopper.vector_sum_partial(x) AS s FROM hc_vec UNION ALL SELECT hopper.vector_sum_partial('{1}'::float8[])) v;
SELECT hopper.model_average_final(hopper.vector_sum_partial(x)) FROM hc_vec;
SELECT hopper.vector_sum_final(hopper.model_average_partial(model_state, rows)) FROM hc_copies;
SELECT hopper.model_average(model_state, NULL) FROM hc_copies;
SELECT hopper.model_average(model_state, -1) FROM hc_copies;
SELECT hopper.model_average(model_state, 0) FROM hc_copies;
SELECT hopper.model_average(s, 1) FROM (SELECT model_state FROM hc_start UNION ALL SELECT model_state FROM hc_dp_diverged) v(s);
SELECT hopper.model_average('\xdeadbeef'::bytea, 1);
SELECT hopper.model_average_final(s)
FROM (SELECT hopper.model_average_partial(model_state, 1) FROM hc_start
      UNION ALL SELECT hopper.model_average_partial(model_state, 1) FROM hc_dp_diverged) v(s);
SELECT hopper.metrics(NULL, independent_var, dependent_var) FROM hc_packed;
SELECT hopper.metrics(m.model_state, d.independent_var, NULL) FROM hc_packed d, hc_start m;
SELECT hopper.metrics(m.model_state, d.independent_var, d.dependent_var) FROM hc_packed d, hc_copies m;
SELECT hopper.metrics(m.model_state, '{{1,2,3}}', '{{1,0,0,0,0,0}}') FROM hc_start m;
SELECT hopper.metrics(m.model_state, '{{1,2},{3,4}}', '{{1,0,0,0,0,0}}') FROM hc_start m;
SELECT hopper.metrics(m.model_state, '{{1,NaN}}', '{{1,0,0,0,0,0}}') FROM hc_start m;
SELECT hopper.metrics('\x01'::bytea, '{{1,2}}', '{{1,0,0,0,0,0}}');
CREATE TABLE hc_other_model AS SELECT model_state FROM hc_dp_diverged;  -- SGD, no metrics
SELECT hopper.metrics_final(s)
FROM (SELECT hopper.metrics_partial(m.model_state, d.independent_var, d.dependent_var) FROM hc_packed d, hc_start m
      UNION ALL
      SELECT hopper.metrics_partial(m.model_state, d.independent_var, d.dependent_var) FROM hc_packed d, hc_other_model m) v(s);

RESET max_parallel_workers_per_gather;
-- Errors: plan_combine and topologies.
SELECT hopper.plan_combine(NULL);
SELECT hopper.plan_combine(-1);
SELECT hopper.plan_combine(1, min_bytes_saved => -1);
SELECT hopper.plan_combine(1, NULL, 'hc_topo', NULL, cost_factor => 0.5);
SELECT hopper.plan_combine(1, NULL, 'hc_topo', NULL, bytes_factor => 'NaN');
SELECT hopper.plan_combine(1, NULL, 'hc_topo', NULL, 'north');
SELECT hopper.plan_combine(1, ARRAY[0, 1, 42], 'hc_topo', NULL);
SELECT hopper.plan_combine(1, ARRAY[0, NULL], 'hc_topo', NULL);
SELECT hopper.plan_combine(1, NULL, 'hc_no_such_topology', NULL);
SELECT hopper.plan_combine(1, NULL, 'hc_topo', 'hc_no_such_links');
SELECT hopper.plan_combine(1, NULL, 'hc_vec', NULL);
SELECT hopper.plan_combine(1, NULL, 'hc_topo', 'hc_topo');
CREATE TABLE hc_bad_topo AS SELECT * FROM hc_topo;
INSERT INTO hc_bad_topo VALUES (3, 'west1', 'west');
SELECT hopper.plan_combine(1, NULL, 'hc_bad_topo', NULL);
DELETE FROM hc_bad_topo WHERE node = 'west1' AND dist_key = 3;
INSERT INTO hc_bad_topo VALUES (3, 'east0', 'east');
SELECT hopper.plan_combine(1, NULL, 'hc_bad_topo', NULL);
DELETE FROM hc_bad_topo WHERE node = 'east0' AND dist_key = 3;
INSERT INTO hc_bad_topo VALUES (9, 'east0', 'west');
SELECT hopper.plan_combine(1, NULL, 'hc_bad_topo', NULL);
UPDATE hc_bad_topo SET node = '', node_group = 'east' WHERE dist_key = 9;
SELECT hopper.plan_combine(1, NULL, 'hc_bad_topo', NULL);
UPDATE hc_bad_topo SET node = 'east0', node_group = '' WHERE dist_key = 9;
SELECT hopper.plan_combine(1, NULL, 'hc_bad_topo', NULL);
UPDATE hc_bad_topo SET node = NULL WHERE dist_key = 9;
SELECT hopper.plan_combine(1, NULL, 'hc_bad_topo', NULL);
CREATE TABLE hc_bad_topo_big (dist_key bigint, node text, node_group text);
INSERT INTO hc_bad_topo_big VALUES (5000000000, 'n', 'g');
SELECT hopper.plan_combine(1, NULL, 'hc_bad_topo_big', NULL);
CREATE TABLE hc_bad_links (group_a text, group_b text, cost float8);
INSERT INTO hc_bad_links VALUES ('east', 'north', 3);
SELECT hopper.plan_combine(1, NULL, 'hc_topo', 'hc_bad_links');
UPDATE hc_bad_links SET group_b = 'west', cost = 0;
SELECT hopper.plan_combine(1, NULL, 'hc_topo', 'hc_bad_links');
UPDATE hc_bad_links SET cost = 'Infinity';
SELECT hopper.plan_combine(1, NULL, 'hc_topo', 'hc_bad_links');
UPDATE hc_bad_links SET cost = 5;
INSERT INTO hc_bad_links VALUES ('west', 'east', 6);
SELECT hopper.plan_combine(1, NULL, 'hc_topo', 'hc_bad_links');
SELECT hopper.plan_combine(1, NULL, NULL, 'hc_bad_links');
UPDATE hc_bad_links SET cost = NULL;
SELECT hopper.plan_combine(1, NULL, 'hc_topo', 'hc_bad_links');

-- Errors: hierarchical_combine.
SELECT hopper.hierarchical_combine(NULL, 'vector_sum', '{x}');
SELECT hopper.hierarchical_combine('hc_vec', NULL, '{x}');
SELECT hopper.hierarchical_combine('hc_vec', 'median', '{x}');
SELECT hopper.hierarchical_combine('hc_vec', 'vector_sum', NULL);
SELECT hopper.hierarchical_combine('hc_vec', 'vector_sum', '{x, x}');
SELECT hopper.hierarchical_combine('hc_vec', 'model_average', '{x}');
SELECT hopper.hierarchical_combine('hc_packed', 'metrics', '{independent_var, dependent_var}');
SELECT hopper.hierarchical_combine('hc_vec', 'vector_sum', '{x}', model_state => '\x00');
SELECT hopper.hierarchical_combine('hc_vec', 'vector_sum', '{x}', levels => 4);
SELECT hopper.hierarchical_combine('hc_no_such_table', 'vector_sum', '{x}');
SELECT hopper.hierarchical_combine('hc_vec', 'vector_sum', '{y}');
SELECT hopper.hierarchical_combine('hc_vec', 'vector_sum', '{NULL}');
SELECT hopper.hierarchical_combine('hc_vec', 'vector_sum', '{x}', dist_key_column => 'nope');
SELECT hopper.hierarchical_combine('hc_blobs', 'vector_sum', '{x}', dist_key_column => 'label');
SELECT hopper.hierarchical_combine('hc_blobs', 'vector_sum', '{label}', dist_key_column => 'id');
SELECT hopper.hierarchical_combine('hc_copies', 'model_average', '{model_state, model_state}');
SELECT hopper.hierarchical_combine('hc_copies', 'metrics', '{model_state, rows}', model_state => '\x00');
-- Errors inside the partial level: the statement is named in the context.
SELECT hopper.hierarchical_combine('hc_packed', 'metrics', '{independent_var, dependent_var}', model_state => '\x00');
SELECT hopper.hierarchical_combine('hc_vec8', 'vector_sum', '{x}', topology_table => 'hc_topo_one',
                                   coordinator_group => 'east');
CREATE TABLE hc_vec_nullkey AS SELECT NULL::int AS dist_key, '{1}'::float8[] AS x;
SELECT hopper.hierarchical_combine('hc_vec_nullkey', 'vector_sum', '{x}');
CREATE TABLE hc_vec_far AS SELECT 42 AS dist_key, '{1}'::float8[] AS x;
SELECT hopper.hierarchical_combine('hc_vec_far', 'vector_sum', '{x}', topology_table => 'hc_topo');
SELECT hopper.hierarchical_combine('hc_vec_far', 'vector_sum', '{x}', topology_table => 'hc_bad_topo_big');

-- Errors: fit_data_parallel. Nothing is left behind.
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 0);
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1,
                              metrics_compute_frequency => 0);
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1,
                              combine_levels => 5);
CALL hopper.fit_data_parallel('hc_packed', 'hc_dp', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1);
CALL hopper.fit_data_parallel('hc_no_such_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1);
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 3, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1);
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', NULL, '', '', 1);
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "swish"}]}', '', '', 1);
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1,
                              topology_table => 'hc_bad_topo_big');
CREATE TABLE hc_other AS SELECT g AS id, ARRAY[g % 5, g % 3]::float8[] AS x, (g % 2)::text AS label FROM generate_series(1, 100) g;
SELECT hopper.preprocess('hc_other', 'hc_other_packed', 'label', 'x', buffer_size => 50, num_segments => 2);
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1,
                              validation_table => 'hc_other_packed');
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 6, "activation": "softmax"}]}', '', '', 1,
                              warm_start => true);
SET hopper.max_model_state_mb = 1;
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 100000, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
                              $$optimizer='Adam()'$$, '', 1);
RESET hopper.max_model_state_mb;
-- 43 million parameters with Adam: the model state fits in 1 GB, its averaging state (16 bytes per value) does not.
CALL hopper.fit_data_parallel('hc_packed', 'hc_e1', '{"input_dim": 2, "layers": [{"units": 1000000, "activation": "relu"}, {"units": 40, "activation": "relu"}, {"units": 6, "activation": "softmax"}]}',
                              $$optimizer='Adam()'$$, '', 1);
SELECT count(*) AS leftovers FROM pg_class WHERE relname LIKE 'hc\_e1%' OR relname LIKE '\_\_hopper%';
