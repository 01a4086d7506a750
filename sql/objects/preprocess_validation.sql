CREATE OR REPLACE FUNCTION hopper.preprocess_validation(
    source_table text,
    output_table text,
    dependent_varname text,
    independent_varname text,
    training_preprocessed_table text,
    buffer_size integer DEFAULT NULL,
    num_segments integer DEFAULT NULL,
    buffer_fill text DEFAULT 'even')
RETURNS void
AS 'MODULE_PATHNAME', 'preprocess_validation' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.preprocess_validation(text, text, text, text, text, integer, integer, text) IS
'packs a validation table like training_preprocessed_table was packed (same class values, scaling and layout); buffer_fill as in hopper.preprocess';
