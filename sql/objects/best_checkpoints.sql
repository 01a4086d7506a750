CREATE OR REPLACE VIEW hopper.best_checkpoints AS
SELECT tr.run_id, r.name AS run_name, tr.trial_id, tr.mst_key, x.checkpoint_id, x.uuid, x.iteration, x.steps_completed, x.report_time,
       x.training_metrics, x.validation_metrics, x.searcher_metric, x.searcher_value
FROM hopper.run_records r
JOIN hopper.trials tr ON tr.run_id = r.run_id
CROSS JOIN LATERAL (
    SELECT e.checkpoint_id, e.uuid, e.iteration, e.steps_completed, e.report_time, e.training_metrics,
           e.validation_metrics, e.searcher_metric, e.searcher_value
    FROM hopper.checkpoints_expanded e
    WHERE e.trial_id = tr.trial_id AND e.state = 'COMPLETED' AND e.signed_searcher_value IS NOT NULL
    ORDER BY e.signed_searcher_value, e.checkpoint_id
    LIMIT 1) x;
COMMENT ON VIEW hopper.best_checkpoints IS
'the COMPLETED checkpoint with the best searcher metric of every model configuration of every training run (an index scan per configuration; ties go to the earlier checkpoint)';
GRANT SELECT ON hopper.best_checkpoints TO PUBLIC;
