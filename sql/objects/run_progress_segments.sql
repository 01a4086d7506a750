-- Live progress of training runs (src/pg/runtime/progress.h): shared memory read by a function,
-- and a view that adds the run's name and owner (hopper.runs) and computes rates and the time left.
CREATE OR REPLACE FUNCTION hopper.run_progress_segments(
    OUT run_id bigint, OUT method text, OUT on_worker_node boolean, OUT pid integer, OUT iteration integer,
    OUT num_iterations integer, OUT hop integer, OUT hops_per_iteration integer, OUT models_in_ring integer,
    OUT model_iterations_done bigint, OUT model_iterations_total bigint, OUT best_searcher_value double precision,
    OUT best_mst_key integer, OUT start_time timestamptz, OUT updated timestamptz, OUT dist_key integer,
    OUT mst_key integer, OUT segment_pid integer, OUT buffers_done integer, OUT buffers_total integer,
    OUT rows_done bigint, OUT visit_start timestamptz, OUT hop_start timestamptz, OUT segment_updated timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'run_progress_segments' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
COMMENT ON FUNCTION hopper.run_progress_segments() IS
'the raw shared-memory progress of the training runs going on in this database, one row per run and segment; read the view hopper.run_progress';
