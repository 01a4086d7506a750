CREATE OR REPLACE VIEW hopper.learning_curves WITH (security_invoker = true) AS
SELECT tr.run_id, r.name AS run_name, r.method, tr.trial_id, tr.mst_key, m.iteration, m.steps_completed,
       m.elapsed_seconds, m.report_time, s.split, kv.key AS metric,
       hopper.json_float8(kv.value) AS value
FROM hopper.trial_metrics m
JOIN hopper.trials tr ON tr.trial_id = m.trial_id
JOIN hopper.run_records r ON r.run_id = tr.run_id
CROSS JOIN LATERAL (VALUES ('training', m.training_metrics), ('validation', m.validation_metrics)) AS s(split, metrics)
CROSS JOIN LATERAL pg_catalog.jsonb_each(CASE WHEN pg_catalog.jsonb_typeof(s.metrics) = 'object' THEN s.metrics END) AS kv;
COMMENT ON VIEW hopper.learning_curves IS
'learning curves in long form, one row per run, configuration (trial, mst_key), evaluated iteration, split (training or validation), metric (loss, accuracy, ...) and value (NULL where it was not a finite number): what BI tools and notebooks plot directly';
GRANT SELECT ON hopper.learning_curves TO PUBLIC;
