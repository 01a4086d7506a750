CREATE OR REPLACE FUNCTION hopper.list_checkpoints(run_id bigint DEFAULT NULL, mst_key integer DEFAULT NULL,
                                        states text[] DEFAULT NULL, order_by text DEFAULT 'report_time',
                                        descending boolean DEFAULT true, page_size integer DEFAULT 100,
                                        page_offset bigint DEFAULT 0)
RETURNS TABLE (checkpoint_uuid uuid, run_id bigint, mst_key integer, iteration integer, state text,
               steps_completed bigint, report_time timestamptz, searcher_metric text, searcher_value double precision,
               training_metrics jsonb, validation_metrics jsonb, size_bytes bigint, total_count bigint)
AS 'MODULE_PATHNAME', 'list_checkpoints' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.list_checkpoints(bigint, integer, text[], text, boolean, integer, bigint) IS
'one page of checkpoints, filtered by run, configuration and states, sorted by steps, report_time, searcher_metric, training.<metric> or validation.<metric>; total_count is the number of matching checkpoints, computed by the same statement (one snapshot) as the page';
