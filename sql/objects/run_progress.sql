CREATE OR REPLACE VIEW hopper.run_progress WITH (security_invoker = true) AS
WITH p AS (
    SELECT s.*, pg_catalog.clock_timestamp() AS now,
           -- a segment's share of its current visit; a visit that began before this hop counts as not begun
           CASE WHEN s.visit_start >= s.hop_start THEN s.buffers_done::double precision / NULLIF(s.buffers_total, 0)
                ELSE 0 END AS visit_fraction
    FROM hopper.run_progress_segments() s
), f AS (
    SELECT p.*,
           (p.model_iterations_done + p.models_in_ring * (GREATEST(p.hop - 1, 0)
                + COALESCE(pg_catalog.avg(p.visit_fraction) OVER (PARTITION BY p.run_id, p.pid), 0))
                / NULLIF(p.hops_per_iteration, 0))
           / NULLIF(p.model_iterations_total, 0)::double precision AS fraction
    FROM p
)
SELECT f.run_id, r.name AS run_name, f.method, r.owner, f.pid, f.on_worker_node,
       f.iteration, f.num_iterations, f.hop, f.hops_per_iteration, f.models_in_ring,
       f.dist_key AS segment, f.mst_key, f.segment_pid, f.buffers_done, f.buffers_total, f.rows_done,
       round((f.rows_done / NULLIF(EXTRACT(epoch FROM f.segment_updated - f.visit_start), 0))::numeric, 1) AS rows_per_second,
       round(EXTRACT(epoch FROM f.now - f.start_time), 3) AS elapsed_seconds,
       round(LEAST(GREATEST(f.fraction, 0), 1)::numeric, 4) AS fraction_done,
       CASE WHEN f.fraction > 0
            THEN round(EXTRACT(epoch FROM f.now - f.start_time) * (1 - LEAST(f.fraction, 1)::numeric) / f.fraction::numeric, 1)
       END AS estimated_seconds_left,
       f.best_searcher_value, f.best_mst_key, r.searcher_metric, f.updated AS updated_at
FROM f LEFT JOIN hopper.runs r ON r.run_id = f.run_id AND NOT f.on_worker_node;
COMMENT ON VIEW hopper.run_progress IS
'the training runs going on in this database (fit, fit_multiple, fit_data_parallel, fit_automl), live from shared memory: iteration i of N, hop h of H, per segment the configuration it trains (mst_key), buffers and rows done in its current visit, rows/s, elapsed and estimated seconds left, the best searcher value so far, the backend pids; needs hopper in shared_preload_libraries; on Citus the coordinator shows the run and each worker node (on_worker_node) the segments it trains';
GRANT SELECT ON hopper.run_progress TO PUBLIC;
