CREATE OR REPLACE FUNCTION hopper.hierarchical_combine(
    source_table text,
    kind text,
    arguments text[],
    model_state bytea DEFAULT NULL,
    levels integer DEFAULT NULL,
    topology_table text DEFAULT 'hopper.combine_topology',
    link_cost_table text DEFAULT 'hopper.combine_link_costs',
    coordinator_group text DEFAULT NULL,
    cost_factor double precision DEFAULT 10,
    bytes_factor double precision DEFAULT 1.5,
    min_bytes_saved bigint DEFAULT 1048576,
    dist_key_column text DEFAULT 'dist_key')
RETURNS hopper.combine_outcome
AS 'MODULE_PATHNAME', 'hierarchical_combine' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.hierarchical_combine(text, text, text[], bytea, integer, text, text, text, double precision, double precision, bigint, text) IS
'combines the rows of source_table per segment (kind vector_sum: arguments {vector column}; model_average: {model state column, weight column}; metrics: {independent_var, dependent_var} with model_state), then per node group when the insertion rule (or levels => 3) says so, then once; returns the levels run, the decision record, the bytes that crossed group boundaries, timings and the result';
