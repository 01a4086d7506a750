CREATE OR REPLACE FUNCTION hopper.list_model_versions(model_name text, order_by text DEFAULT 'version',
                                           descending boolean DEFAULT true, page_size integer DEFAULT 100,
                                           page_offset bigint DEFAULT 0)
RETURNS TABLE (version integer, version_id bigint, name text, checkpoint_uuid uuid, aliases text[], labels text[],
               creation_time timestamptz, steps_completed bigint, searcher_metric text,
               searcher_value double precision, validation_metrics jsonb, total_count bigint)
AS 'MODULE_PATHNAME', 'list_model_versions' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.list_model_versions(text, text, boolean, integer, bigint) IS
'one page of the versions of a model, sorted by version, creation_time, steps, searcher_metric or a metric; total_count comes from the same statement (one snapshot) as the page';
