-- Brackets, rungs, budgets and survivors of every search.
CREATE OR REPLACE VIEW hopper.search_brackets WITH (security_invoker = true) AS
SELECT g.run_id, r.name AS run_name, s.automl_method, g.bracket, g.rung, g.iterations AS budget,
       g.iterations - coalesce(lag(g.iterations) OVER (PARTITION BY g.run_id, g.bracket ORDER BY g.rung), 0)
           AS iterations_in_rung,
       g.num_configs, g.num_promoted, g.state, g.mst_keys,
       d.ranking,
       CASE WHEN g.state = 'COMPLETED' THEN coalesce(d.survivors, '{}') END AS survivors,
       d.ranking[1] AS best_mst_key, d.best_value, r.searcher_metric, g.start_time, g.end_time
FROM hopper.search_rungs g
JOIN hopper.searches s ON s.run_id = g.run_id
JOIN hopper.run_records r ON r.run_id = g.run_id
LEFT JOIN LATERAL (
    SELECT array_agg(t.mst_key ORDER BY x.rank) AS ranking,
           array_agg(t.mst_key ORDER BY x.rank) FILTER (WHERE x.promoted) AS survivors,
           (array_agg(x.searcher_value ORDER BY x.rank))[1] AS best_value
    FROM hopper.trial_rungs x JOIN hopper.trials t ON t.trial_id = x.trial_id
    WHERE x.run_id = g.run_id AND x.bracket = g.bracket AND x.rung = g.rung) d ON true;
COMMENT ON VIEW hopper.search_brackets IS
'every rung of every bracket of every adaptive search: budget (iterations in all at its end, and in the rung), how many configurations train and survive, its state, its trials, their ranking by the searcher metric (best first), the survivors and the best value';
GRANT SELECT ON hopper.search_brackets TO PUBLIC;
