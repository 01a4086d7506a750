CREATE OR REPLACE VIEW hopper.checkpoints_expanded AS
SELECT c.checkpoint_id, c.uuid, c.task_id, t.task_type, c.report_time, c.state, c.steps_completed, c.format,
       c.storage, c.external_uri, c.size_bytes, c.checksum, c.resources, c.metadata,
       (SELECT count(*)::integer FROM hopper.model_versions v WHERE v.checkpoint_id = c.checkpoint_id) AS version_count,
       c.owner,
       tr.run_id, r.name AS run_name, ct.trial_id, tr.mst_key, tr.model_id, ct.iteration, tr.model_arch,
       tr.compile_params, tr.fit_params, tr.hparams, m.training_metrics, m.validation_metrics,
       r.searcher_metric, r.smaller_is_better, ct.searcher_value, ct.signed_searcher_value,
       coalesce(r.data, c.metadata -> 'data') AS data
FROM hopper.checkpoints c
LEFT JOIN hopper.tasks t ON t.task_id = c.task_id
LEFT JOIN hopper.checkpoint_training ct ON ct.checkpoint_id = c.checkpoint_id AND ct.trial_id = c.task_id
LEFT JOIN hopper.trials tr ON tr.trial_id = ct.trial_id
LEFT JOIN hopper.run_records r ON r.run_id = tr.run_id
LEFT JOIN hopper.trial_metrics m ON m.trial_id = ct.trial_id AND m.iteration = ct.iteration;
COMMENT ON VIEW hopper.checkpoints_expanded IS
'every checkpoint with its training facts (run, configuration, iteration, hyper-parameters, metrics at that iteration, searcher metric; NULL for checkpoints not written by training) and the facts of its data (for predict)';
GRANT SELECT ON hopper.checkpoints_expanded TO PUBLIC;
