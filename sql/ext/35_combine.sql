-- Hierarchical combine: partial -> intermediate -> final aggregation of mergeable states (vector
-- sums, model averaging, metrics), the topology that says where segments sit, the insertion rule
-- (hopper.plan_combine), the 2- or 3-level query (hopper.hierarchical_combine) and data-parallel
-- training by model averaging (hopper.fit_data_parallel).
--
-- For each kind K: hopper.K_partial(rows) -> bytea state (per segment), hopper.K_intermediate(bytea)
-- -> bytea state (per node group), hopper.K_final(bytea) -> result, and the two-level form
-- hopper.K(rows) -> result. All share K's support functions, declare combine and
-- serialize/deserialize functions and are PARALLEL SAFE. Support functions are IMMUTABLE: their
-- results depend on their arguments only.

CREATE TYPE hopper.vector_total AS (count bigint, sum double precision[], mean double precision[]);
COMMENT ON TYPE hopper.vector_total IS 'result of hopper.vector_sum: number of vectors, their element-wise sum and mean';

CREATE TYPE hopper.metrics_total AS (row_count bigint, loss double precision, metrics jsonb);
COMMENT ON TYPE hopper.metrics_total IS 'result of hopper.metrics: rows evaluated, mean loss, mean of each compiled metric';

CREATE TYPE hopper.combine_outcome AS (
    levels integer,                  -- levels that ran: 2 (partial -> final) or 3 (partial -> intermediate -> final)
    decision jsonb,                  -- the insertion rule's record (hopper.plan_combine) for the measured state size
    producers integer,               -- segments that produced a partial state
    bytes_crossing_groups bigint,    -- measured: bytes of the states sent across group boundaries
    partial_seconds double precision,
    combine_seconds double precision,
    result jsonb,                    -- the final result (model_average: a summary of the averaged model)
    model_state bytea);              -- model_average: the averaged model state
COMMENT ON TYPE hopper.combine_outcome IS 'what hopper.hierarchical_combine ran, why, what crossed group boundaries, and the result';

-- ---------------------------------------------------------------------------------------------
-- vector_sum: the plain numeric example (float8 vectors of one length; compensated sums).

CREATE FUNCTION hopper.vector_sum_add(internal, double precision[]) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_add(internal, double precision[]) IS
'transition function of hopper.vector_sum and vector_sum_partial: adds one vector (NULL vectors are skipped)';

CREATE FUNCTION hopper.vector_sum_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_merge(internal, bytea) IS
'transition function of hopper.vector_sum_intermediate and vector_sum_final: merges one serialized state (NULL states are skipped)';

CREATE FUNCTION hopper.vector_sum_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_combine(internal, internal) IS
'combine function of the vector_sum aggregates: merges two partial states';

CREATE FUNCTION hopper.vector_sum_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'vector_sum_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_serialize(internal) IS
'serialize function of the vector_sum aggregates, and final function of vector_sum_partial and vector_sum_intermediate';

CREATE FUNCTION hopper.vector_sum_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_deserialize(bytea, internal) IS
'deserialize function of the vector_sum aggregates (checks the state: kind, length, checksum)';

CREATE FUNCTION hopper.vector_sum_finish(internal) RETURNS hopper.vector_total
AS 'MODULE_PATHNAME', 'vector_sum_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_finish(internal) IS
'final function of hopper.vector_sum and vector_sum_final: count, sum and mean';

CREATE AGGREGATE hopper.vector_sum(x double precision[]) (
    SFUNC = hopper.vector_sum_add, STYPE = internal, FINALFUNC = hopper.vector_sum_finish,
    COMBINEFUNC = hopper.vector_sum_combine, SERIALFUNC = hopper.vector_sum_serialize,
    DESERIALFUNC = hopper.vector_sum_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.vector_sum(double precision[]) IS
'count, element-wise sum and mean of float8 vectors of one length (two-level form: rows -> result); NULL vectors are skipped, non-finite elements refused';

CREATE AGGREGATE hopper.vector_sum_partial(x double precision[]) (
    SFUNC = hopper.vector_sum_add, STYPE = internal, FINALFUNC = hopper.vector_sum_serialize,
    COMBINEFUNC = hopper.vector_sum_combine, SERIALFUNC = hopper.vector_sum_serialize,
    DESERIALFUNC = hopper.vector_sum_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.vector_sum_partial(double precision[]) IS
'partial level of hopper.vector_sum: rows -> serialized state (one per segment)';

CREATE AGGREGATE hopper.vector_sum_intermediate(state bytea) (
    SFUNC = hopper.vector_sum_merge, STYPE = internal, FINALFUNC = hopper.vector_sum_serialize,
    COMBINEFUNC = hopper.vector_sum_combine, SERIALFUNC = hopper.vector_sum_serialize,
    DESERIALFUNC = hopper.vector_sum_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.vector_sum_intermediate(bytea) IS
'intermediate level of hopper.vector_sum: states -> one serialized state (one per node group)';

CREATE AGGREGATE hopper.vector_sum_final(state bytea) (
    SFUNC = hopper.vector_sum_merge, STYPE = internal, FINALFUNC = hopper.vector_sum_finish,
    COMBINEFUNC = hopper.vector_sum_combine, SERIALFUNC = hopper.vector_sum_serialize,
    DESERIALFUNC = hopper.vector_sum_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.vector_sum_final(bytea) IS
'final level of hopper.vector_sum: states -> count, sum and mean';

-- ---------------------------------------------------------------------------------------------
-- model_average: the weighted mean of model states (parameters and optimizer slots), exact.

CREATE FUNCTION hopper.model_average_add(internal, bytea, bigint) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_add(internal, bytea, bigint) IS
'transition function of hopper.model_average and model_average_partial: adds a model state with its weight (NULL states are skipped)';

CREATE FUNCTION hopper.model_average_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_merge(internal, bytea) IS
'transition function of hopper.model_average_intermediate and model_average_final: merges one serialized averaging state (NULL states are skipped)';

CREATE FUNCTION hopper.model_average_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_combine(internal, internal) IS
'combine function of the model_average aggregates: adds two averaging states (exact, order-independent)';

CREATE FUNCTION hopper.model_average_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'model_average_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_serialize(internal) IS
'serialize function of the model_average aggregates, and final function of model_average_partial and model_average_intermediate';

CREATE FUNCTION hopper.model_average_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_deserialize(bytea, internal) IS
'deserialize function of the model_average aggregates (checks the state: kind, sizes, configuration, checksum)';

CREATE FUNCTION hopper.model_average_finish(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'model_average_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_finish(internal) IS
'final function of hopper.model_average and model_average_final: the averaged model state';

CREATE AGGREGATE hopper.model_average(model_state bytea, weight bigint) (
    SFUNC = hopper.model_average_add, STYPE = internal, FINALFUNC = hopper.model_average_finish,
    COMBINEFUNC = hopper.model_average_combine, SERIALFUNC = hopper.model_average_serialize,
    DESERIALFUNC = hopper.model_average_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.model_average(bytea, bigint) IS
'weighted mean (weights: rows) of model states of one configuration, parameters and optimizer slots alike, computed exactly (the same bytes in any order); two-level form: rows -> averaged model state';

CREATE AGGREGATE hopper.model_average_partial(model_state bytea, weight bigint) (
    SFUNC = hopper.model_average_add, STYPE = internal, FINALFUNC = hopper.model_average_serialize,
    COMBINEFUNC = hopper.model_average_combine, SERIALFUNC = hopper.model_average_serialize,
    DESERIALFUNC = hopper.model_average_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.model_average_partial(bytea, bigint) IS
'partial level of hopper.model_average: model states and weights -> serialized averaging state (one per segment; 16 bytes per value)';

CREATE AGGREGATE hopper.model_average_intermediate(state bytea) (
    SFUNC = hopper.model_average_merge, STYPE = internal, FINALFUNC = hopper.model_average_serialize,
    COMBINEFUNC = hopper.model_average_combine, SERIALFUNC = hopper.model_average_serialize,
    DESERIALFUNC = hopper.model_average_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.model_average_intermediate(bytea) IS
'intermediate level of hopper.model_average: averaging states -> one averaging state (one per node group)';

CREATE AGGREGATE hopper.model_average_final(state bytea) (
    SFUNC = hopper.model_average_merge, STYPE = internal, FINALFUNC = hopper.model_average_finish,
    COMBINEFUNC = hopper.model_average_combine, SERIALFUNC = hopper.model_average_serialize,
    DESERIALFUNC = hopper.model_average_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.model_average_final(bytea) IS
'final level of hopper.model_average: averaging states -> the averaged model state';

-- ---------------------------------------------------------------------------------------------
-- metrics: loss and compiled metrics of one model over packed buffers (hopper.evaluate's sums).

CREATE FUNCTION hopper.metrics_add(internal, bytea, real[], real[]) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_add' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100000;
COMMENT ON FUNCTION hopper.metrics_add(internal, bytea, real[], real[]) IS
'transition function of hopper.metrics and metrics_partial: evaluates the model on one packed buffer and adds its loss and metric sums';

CREATE FUNCTION hopper.metrics_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_merge(internal, bytea) IS
'transition function of hopper.metrics_intermediate and metrics_final: merges one serialized state (NULL states are skipped)';

CREATE FUNCTION hopper.metrics_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_combine(internal, internal) IS
'combine function of the metrics aggregates: adds two partial states';

CREATE FUNCTION hopper.metrics_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'metrics_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_serialize(internal) IS
'serialize function of the metrics aggregates, and final function of metrics_partial and metrics_intermediate';

CREATE FUNCTION hopper.metrics_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_deserialize(bytea, internal) IS
'deserialize function of the metrics aggregates (checks the state: kind, names, checksum)';

CREATE FUNCTION hopper.metrics_finish(internal) RETURNS hopper.metrics_total
AS 'MODULE_PATHNAME', 'metrics_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_finish(internal) IS
'final function of hopper.metrics and metrics_final: row count, mean loss and metrics';

CREATE AGGREGATE hopper.metrics(model_state bytea, independent_var real[], dependent_var real[]) (
    SFUNC = hopper.metrics_add, STYPE = internal, FINALFUNC = hopper.metrics_finish,
    COMBINEFUNC = hopper.metrics_combine, SERIALFUNC = hopper.metrics_serialize,
    DESERIALFUNC = hopper.metrics_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.metrics(bytea, real[], real[]) IS
'loss and compiled metrics of one model (the same model_state on every row) over packed buffers; two-level form: rows -> result';

CREATE AGGREGATE hopper.metrics_partial(model_state bytea, independent_var real[], dependent_var real[]) (
    SFUNC = hopper.metrics_add, STYPE = internal, FINALFUNC = hopper.metrics_serialize,
    COMBINEFUNC = hopper.metrics_combine, SERIALFUNC = hopper.metrics_serialize,
    DESERIALFUNC = hopper.metrics_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.metrics_partial(bytea, real[], real[]) IS
'partial level of hopper.metrics: packed buffers -> serialized loss and metric sums (one per segment)';

CREATE AGGREGATE hopper.metrics_intermediate(state bytea) (
    SFUNC = hopper.metrics_merge, STYPE = internal, FINALFUNC = hopper.metrics_serialize,
    COMBINEFUNC = hopper.metrics_combine, SERIALFUNC = hopper.metrics_serialize,
    DESERIALFUNC = hopper.metrics_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.metrics_intermediate(bytea) IS
'intermediate level of hopper.metrics: states -> one serialized state (one per node group)';

CREATE AGGREGATE hopper.metrics_final(state bytea) (
    SFUNC = hopper.metrics_merge, STYPE = internal, FINALFUNC = hopper.metrics_finish,
    COMBINEFUNC = hopper.metrics_combine, SERIALFUNC = hopper.metrics_serialize,
    DESERIALFUNC = hopper.metrics_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.metrics_final(bytea) IS
'final level of hopper.metrics: states -> row count, mean loss and metrics';

-- ---------------------------------------------------------------------------------------------
-- Topology: where segments sit, and measured link costs. Empty: one group (never 3 levels).

CREATE TABLE hopper.combine_topology (
    dist_key integer NOT NULL,
    node text NOT NULL,
    node_group text NOT NULL);
COMMENT ON TABLE hopper.combine_topology IS
'where segments sit: each dist_key on one node, each node in one group (a rack, a region); empty: every segment in one group';
CREATE TABLE hopper.combine_link_costs (
    group_a text NOT NULL,
    group_b text NOT NULL,
    cost double precision NOT NULL);
COMMENT ON TABLE hopper.combine_link_costs IS
'measured relative cost per byte of the links between two groups (or, group_a = group_b, within one), symmetric';
-- Rows users add are kept by pg_dump.
SELECT pg_catalog.pg_extension_config_dump('hopper.combine_topology', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.combine_link_costs', '');
GRANT SELECT ON hopper.combine_topology, hopper.combine_link_costs TO PUBLIC;

CREATE FUNCTION hopper.plan_combine(
    state_bytes bigint,
    dist_keys integer[] DEFAULT NULL,
    topology_table text DEFAULT 'hopper.combine_topology',
    link_cost_table text DEFAULT 'hopper.combine_link_costs',
    coordinator_group text DEFAULT NULL,
    cost_factor double precision DEFAULT 10,
    bytes_factor double precision DEFAULT 1.5,
    min_bytes_saved bigint DEFAULT 1048576)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'plan_combine' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.plan_combine(bigint, integer[], text, text, text, double precision, double precision, bigint) IS
'whether an intermediate combine level (one merge per node group) pays for states of state_bytes produced by dist_keys (NULL: every segment of the topology), with the figures behind the decision: groups, producers per group, bytes crossing group boundaries with 2 and 3 levels, link cost ratio, each check and its threshold';

CREATE FUNCTION hopper.hierarchical_combine(
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

CREATE PROCEDURE hopper.fit_data_parallel(
    packed_table text,
    model_output_table text,
    model_arch jsonb,
    compile_params text,
    fit_params text,
    num_iterations integer,
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
'trains one model data-parallel: each iteration every segment trains a copy of the current model on its own data (all segments at once), and the copies are averaged weighted by rows through the hierarchical combine; writes model_output_table, _info and _summary like fit, and records the run and its checkpoints in the registry; commits after each iteration when called outside a transaction block';
