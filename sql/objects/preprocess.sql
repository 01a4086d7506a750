CREATE OR REPLACE FUNCTION hopper.preprocess(
    source_table text,
    output_table text,
    dependent_varname text,
    independent_varname text,
    buffer_size integer DEFAULT NULL,
    num_segments integer DEFAULT NULL,
    normalizing_const double precision DEFAULT 1.0,
    scale text DEFAULT 'auto',
    seed bigint DEFAULT 0,
    response_type text DEFAULT 'auto',
    segment_placement text DEFAULT NULL,
    exclude_columns text DEFAULT NULL,
    columns jsonb DEFAULT NULL,
    num_classes integer DEFAULT NULL,
    buffer_fill text DEFAULT 'even')
RETURNS void
AS 'MODULE_PATHNAME', 'preprocess' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.preprocess(text, text, text, text, integer, integer, double precision, text, bigint, text, text, text, jsonb, integer, text) IS
'packs source_table into minibatch buffers (float32, classes one-hot encoded, rows shuffled with seed, features divided by normalizing_const and scaled by scale: auto (the default: a table''s own columns standardized, a numeric array as it is), none, standardize, minmax) spread over num_segments segments; writes output_table (partitioned by dist_key; on Citus distributed by dist_key, one segment per shard, or per worker node with segment_placement => ''worker'') and output_table_summary. independent_varname is a numeric array column, a list of columns, or * (every column but the dependent one and exclude_columns): numbers, booleans, text, enums, dates and timestamps, with NULLs, are encoded by a feature recipe (per-column options in columns) stored in the summary''s feature_recipe. num_classes (classification) pads the one-hot vectors beyond the data''s classes with classes named <padding 1>, <padding 2>, ... for classes still to come. buffer_fill: even (buffers as equal in size as possible) or full (ceil(rows / buffers) rows in every buffer but the last, as Apache MADlib packs)';
