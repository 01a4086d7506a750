CREATE OR REPLACE VIEW hopper.latest_checkpoints AS
SELECT tr.run_id, r.name AS run_name, tr.trial_id, tr.mst_key, x.checkpoint_id, x.uuid, x.iteration, x.steps_completed, x.report_time,
       x.training_metrics, x.validation_metrics, x.searcher_metric, x.searcher_value
FROM hopper.run_records r
JOIN hopper.trials tr ON tr.run_id = r.run_id
CROSS JOIN LATERAL (
    SELECT e.checkpoint_id, e.uuid, e.iteration, e.steps_completed, e.report_time, e.training_metrics,
           e.validation_metrics, e.searcher_metric, e.searcher_value
    FROM hopper.checkpoints_expanded e
    WHERE e.trial_id = tr.trial_id AND e.state = 'COMPLETED'
    ORDER BY e.steps_completed DESC, e.checkpoint_id DESC
    LIMIT 1) x;
COMMENT ON VIEW hopper.latest_checkpoints IS
'the latest COMPLETED checkpoint of every model configuration of every training run (an index scan per configuration)';
GRANT SELECT ON hopper.latest_checkpoints TO PUBLIC;
