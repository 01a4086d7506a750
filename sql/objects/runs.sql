CREATE OR REPLACE VIEW hopper.runs WITH (security_invoker = true) AS
SELECT r.run_id, r.method, r.name, r.description, r.source_table, r.validation_table, r.model_output_table,
       r.model_selection_table, r.num_iterations, r.metrics_compute_frequency, r.checkpoint_frequency,
       r.searcher_metric, r.smaller_is_better, r.data,
       CASE WHEN r.state = 'ACTIVE' AND NOT hopper.run_is_live(r.run_id) THEN 'INTERRUPTED' ELSE r.state END AS state,
       r.owner, r.start_time, r.end_time, r.backend_pid, r.backend_start
FROM hopper.run_records r;
COMMENT ON VIEW hopper.runs IS
'one row per call of hopper.fit, fit_multiple or fit_data_parallel, or per adaptive search (fit_automl, hopper.searches): its tables, settings, searcher metric and the facts of the packed data; state is ACTIVE only while a session is running it (INTERRUPTED once it stopped without completing: an error, a cancel, a crash)';
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.runs TO PUBLIC;
