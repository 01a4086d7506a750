CREATE OR REPLACE PROCEDURE hopper.fit_multiple(
    packed_table text,
    model_output_table text,
    model_selection_table text,
    num_iterations integer DEFAULT 10,
    validation_table text DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL,
    warm_start boolean DEFAULT false,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    checkpoint_frequency integer DEFAULT NULL,
    warm_start_run bigint DEFAULT NULL,
    searcher_metric text DEFAULT NULL)
AS 'MODULE_PATHNAME', 'fit_multiple' LANGUAGE C;
COMMENT ON PROCEDURE hopper.fit_multiple(text, text, text, integer, text, integer, boolean, text, text, integer, bigint, text) IS
'trains every configuration of model_selection_table at once by model hopping over the segments of a packed table (num_iterations iterations, 10 unless given); writes model_output_table (one row per mst_key), _info and _summary; records the run in hopper.runs and writes a checkpoint per configuration every checkpoint_frequency iterations (default: when metrics are computed) and after the last; warm_start_run starts each configuration from its latest checkpoint in that run';
