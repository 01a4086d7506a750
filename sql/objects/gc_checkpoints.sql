CREATE OR REPLACE FUNCTION hopper.gc_checkpoints(run_id bigint DEFAULT NULL, keep_best_per_run integer DEFAULT 1,
                                      keep_best_overall integer DEFAULT 0, keep_latest_per_run integer DEFAULT 0,
                                      keep_latest_per_configuration integer DEFAULT 1, dry_run boolean DEFAULT false)
RETURNS TABLE (checkpoint_uuid uuid, run_id bigint, mst_key integer, iteration integer, steps_completed bigint,
               searcher_value double precision)
AS 'MODULE_PATHNAME', 'gc_checkpoints' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.gc_checkpoints(bigint, integer, integer, integer, integer, boolean) IS
'garbage-collects the caller''s COMPLETED training checkpoints (of one run, or all): keeps the best N per run and overall by the searcher metric, the latest N per run and per configuration, and every checkpoint registered as a model version or used as a warm-start source by the caller''s own runs; deletes the rest and returns them (dry_run: only returns them); idempotent';
