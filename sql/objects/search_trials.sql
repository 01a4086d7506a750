-- Each trial of every search: its bracket, status (stopped: at which rung), and its latest state.
CREATE OR REPLACE VIEW hopper.search_trials WITH (security_invoker = true) AS
SELECT t.run_id, r.name AS run_name, t.trial_id, t.mst_key, b.bracket, t.status, x.rung AS last_rung,
       CASE WHEN t.status = 'stopped' THEN x.rung END AS stopped_at_rung, x.iteration AS iterations,
       x.searcher_value, x.rank, c.uuid AS checkpoint_uuid, t.model_id, t.compile_params, t.fit_params, t.hparams
FROM hopper.trials t
JOIN hopper.searches s ON s.run_id = t.run_id
JOIN hopper.run_records r ON r.run_id = t.run_id
JOIN hopper.search_rungs b ON b.run_id = t.run_id AND b.rung = 0 AND t.mst_key = ANY (b.mst_keys)
LEFT JOIN LATERAL (
    SELECT y.rung, y.iteration, y.searcher_value, y.rank, y.checkpoint_id FROM hopper.trial_rungs y
    WHERE y.trial_id = t.trial_id ORDER BY y.rung DESC LIMIT 1) x ON true
LEFT JOIN hopper.checkpoints c ON c.checkpoint_id = x.checkpoint_id;
COMMENT ON VIEW hopper.search_trials IS
'every configuration (trial) of every adaptive search: its bracket, status (stopped_at_rung for one stopped early), the last rung it completed with its iterations, searcher value and rank there, and the checkpoint of its state then (ready for hopper.register_model_version)';
GRANT SELECT ON hopper.search_trials TO PUBLIC;
