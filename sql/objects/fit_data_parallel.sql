CREATE OR REPLACE PROCEDURE hopper.fit_data_parallel(
    packed_table text,
    model_output_table text,
    model_arch jsonb,
    compile_params text DEFAULT NULL,
    fit_params text DEFAULT NULL,
    num_iterations integer DEFAULT 10,
    validation_table text DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT 1,
    warm_start boolean DEFAULT false,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    topology_table text DEFAULT 'hopper.combine_topology',
    link_cost_table text DEFAULT 'hopper.combine_link_costs',
    combine_levels integer DEFAULT NULL,
    checkpoint_frequency integer DEFAULT NULL,
    searcher_metric text DEFAULT NULL)
AS 'MODULE_PATHNAME', 'fit_data_parallel' LANGUAGE C;
COMMENT ON PROCEDURE hopper.fit_data_parallel(text, text, jsonb, text, text, integer, text, integer, boolean, text, text, text, text, integer, integer, text) IS
'trains one model data-parallel: each iteration every segment trains a copy of the current model on its own data (all segments at once), and the copies are averaged weighted by rows through the hierarchical combine; compile_params, fit_params and num_iterations default as fits do; writes model_output_table, _info and _summary like fit, and records the run and its checkpoints in the registry; commits after each iteration when called outside a transaction block';
