-- hopper: train and select machine-learning models inside PostgreSQL.
-- This script is assembled from sql/ext/*.sql in file-name order by the Makefile.
\echo Use "CREATE EXTENSION hopper" to load this file. \quit

COMMENT ON SCHEMA hopper IS 'hopper: train and select machine-learning models inside PostgreSQL';

CREATE FUNCTION hopper.version() RETURNS text
    AS 'MODULE_PATHNAME', 'version' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.version() IS 'version of the hopper extension library';
-- Packing tables into minibatch buffers spread over segments.

CREATE FUNCTION hopper.preprocess(
    source_table text,
    output_table text,
    dependent_varname text,
    independent_varname text,
    buffer_size integer DEFAULT NULL,
    num_segments integer DEFAULT NULL,
    normalizing_const double precision DEFAULT 1.0,
    scale text DEFAULT 'none',
    seed bigint DEFAULT 0,
    response_type text DEFAULT 'auto',
    segment_placement text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'preprocess' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.preprocess(text, text, text, text, integer, integer, double precision, text, bigint, text, text) IS
'packs source_table into minibatch buffers (float32, classes one-hot encoded, rows shuffled with seed, features divided by normalizing_const and optionally scaled: none, standardize, minmax) spread over num_segments segments; writes output_table (partitioned by dist_key; on Citus distributed by dist_key, one segment per shard, or per worker node with segment_placement => ''worker'') and output_table_summary';

CREATE FUNCTION hopper.preprocess_validation(
    source_table text,
    output_table text,
    dependent_varname text,
    independent_varname text,
    training_preprocessed_table text,
    buffer_size integer DEFAULT NULL,
    num_segments integer DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'preprocess_validation' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.preprocess_validation(text, text, text, text, text, integer, integer) IS
'packs a validation table like training_preprocessed_table was packed (same class values, scaling and layout)';
-- Training: the per-segment training aggregate, multi-model evaluation, fit and fit_multiple.

CREATE FUNCTION hopper.train_segment_transition(internal, bytea, real[], real[], integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'train_segment_transition' LANGUAGE C VOLATILE PARALLEL SAFE
-- Training a buffer is expensive; telling the planner so makes it run segments in parallel.
COST 1000000;
COMMENT ON FUNCTION hopper.train_segment_transition(internal, bytea, real[], real[], integer, integer) IS
'transition function of hopper.train_segment: trains the model on one packed buffer';

CREATE FUNCTION hopper.train_segment_final(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'train_segment_final' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.train_segment_final(internal) IS
'final function of hopper.train_segment: returns the trained model state';

-- No combine function: training is sequential SGD, two halves of a segment cannot be trained apart
-- and merged. Segments run in parallel as whole per-partition aggregates instead.
CREATE AGGREGATE hopper.train_segment(model_state bytea, independent_var real[], dependent_var real[],
                                      mst_key integer, dist_key integer) (
    SFUNC = hopper.train_segment_transition,
    STYPE = internal,
    FINALFUNC = hopper.train_segment_final,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hopper.train_segment(bytea, real[], real[], integer, integer) IS
'trains model_state on the packed buffers of one segment, in scan order, and returns the new model state (weights, optimizer state, counters)';

CREATE FUNCTION hopper.evaluate_models_transition(internal, bytea[], real[], real[]) RETURNS internal
AS 'MODULE_PATHNAME', 'evaluate_models_transition' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100000;
COMMENT ON FUNCTION hopper.evaluate_models_transition(internal, bytea[], real[], real[]) IS
'transition function of hopper.evaluate_models: adds one packed buffer''s loss and metric sums for every model';

CREATE FUNCTION hopper.evaluate_models_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'evaluate_models_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_combine(internal, internal) IS
'combine function of hopper.evaluate_models: adds two partial states';

CREATE FUNCTION hopper.evaluate_models_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'evaluate_models_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_serialize(internal) IS
'serialize function of hopper.evaluate_models';

CREATE FUNCTION hopper.evaluate_models_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'evaluate_models_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_deserialize(bytea, internal) IS
'deserialize function of hopper.evaluate_models';

CREATE FUNCTION hopper.evaluate_models_final(internal) RETURNS double precision[]
AS 'MODULE_PATHNAME', 'evaluate_models_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_final(internal) IS
'final function of hopper.evaluate_models: per model, the row count, loss and metrics';

CREATE AGGREGATE hopper.evaluate_models(model_states bytea[], independent_var real[], dependent_var real[]) (
    SFUNC = hopper.evaluate_models_transition,
    STYPE = internal,
    COMBINEFUNC = hopper.evaluate_models_combine,
    SERIALFUNC = hopper.evaluate_models_serialize,
    DESERIALFUNC = hopper.evaluate_models_deserialize,
    FINALFUNC = hopper.evaluate_models_final,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hopper.evaluate_models(bytea[], real[], real[]) IS
'loss and metrics of several models over packed buffers in one scan; returns, for each model in order, its row count, loss and metrics (in the order of its compile parameters)';

CREATE PROCEDURE hopper.fit(
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
    checkpoint_frequency integer DEFAULT NULL,
    warm_start_checkpoint uuid DEFAULT NULL,
    searcher_metric text DEFAULT NULL)
AS 'MODULE_PATHNAME', 'fit' LANGUAGE C;
COMMENT ON PROCEDURE hopper.fit(text, text, jsonb, text, text, integer, text, integer, boolean, text, text, integer, uuid, text) IS
'trains one model on a packed table, visiting its segments in turn (one iteration = one epoch); writes model_output_table, _info and _summary; commits after each iteration when called outside a transaction block; records the run in hopper.runs and writes a checkpoint every checkpoint_frequency iterations (default: when metrics are computed) and after the last; warm_start_checkpoint starts from a checkpoint';

CREATE PROCEDURE hopper.fit_multiple(
    packed_table text,
    model_output_table text,
    model_selection_table text,
    num_iterations integer,
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
'trains every configuration of model_selection_table at once by model hopping over the segments of a packed table; writes model_output_table (one row per mst_key), _info and _summary; records the run in hopper.runs and writes a checkpoint per configuration every checkpoint_frequency iterations (default: when metrics are computed) and after the last; warm_start_run starts each configuration from its latest checkpoint in that run';

CREATE FUNCTION hopper.buffer_cache_stats(OUT hits bigint, OUT misses bigint, OUT not_kept bigint,
                                          OUT kept_bytes bigint, OUT budget_bytes bigint, OUT attached boolean)
AS 'MODULE_PATHNAME', 'buffer_cache_stats' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION hopper.buffer_cache_stats() IS
'how this session''s last fit, fit_multiple or fit_data_parallel used its cache of detoasted packed buffers (hopper.buffer_cache_mb): hits, buffers kept (misses), buffers detoasted but not kept because the budget was full, bytes kept, the budget, and whether the session holds a cache now (only while a run is going on)';
-- Model selection: architecture tables and model selection tables (the input of fit_multiple).

CREATE FUNCTION hopper.load_model_arch(
    model_arch_table text,
    model_arch jsonb,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    model_weights bytea DEFAULT NULL)
RETURNS integer
AS 'MODULE_PATHNAME', 'load_model_arch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.load_model_arch(text, jsonb, text, text, bytea) IS
'adds an architecture (hopper''s native JSON or a Keras Sequential model''s to_json()) to model_arch_table, creating the table if missing, and returns its model_id; model_weights (a hopper model state with the same architecture, e.g. a model_state of a model output table) are the starting weights of transfer learning';

CREATE FUNCTION hopper.delete_model_arch(model_arch_table text, model_id integer)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_arch' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_arch(text, integer) IS
'deletes the architecture model_id from model_arch_table (the table stays, even when empty)';

CREATE FUNCTION hopper.load_model_selection_table(
    model_arch_table text,
    model_selection_table text,
    model_id_list integer[],
    compile_params_list text[],
    fit_params_list text[])
RETURNS void
AS 'MODULE_PATHNAME', 'load_model_selection_table' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.load_model_selection_table(text, text, integer[], text[], text[]) IS
'creates model_selection_table (mst_key, model_id, compile_params, fit_params): every model_id x compile_params x fit_params, in that order, each checked against its architecture; and model_selection_table_summary naming model_arch_table. Duplicates (by meaning) are refused';

CREATE FUNCTION hopper.generate_model_configs(
    model_arch_table text,
    model_selection_table text,
    model_id_list integer[],
    compile_params_grid jsonb,
    fit_params_grid jsonb,
    search_type text DEFAULT 'grid',
    num_configs integer DEFAULT NULL,
    random_state bigint DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'generate_model_configs' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.generate_model_configs(text, text, integer[], jsonb, jsonb, text, integer, bigint) IS
'creates a model selection table by grid search (every combination of the listed values) or random search (num_configs distinct configurations drawn with random_state; values are lists, or distributions {"uniform": [a, b]}, {"log_uniform": [a, b]}, {"int_uniform": [a, b]}); compile_params_grid may hold optimizer_params_list, a list of sub-grids';
-- Using trained models: evaluation, prediction, looking into model states.

CREATE TYPE hopper.evaluation AS (mst_key integer, loss double precision, metrics jsonb, row_count bigint);
COMMENT ON TYPE hopper.evaluation IS 'loss and metrics of one model on one data set';

CREATE FUNCTION hopper.evaluate(model_table text, packed_table text, mst_key integer DEFAULT NULL)
RETURNS SETOF hopper.evaluation
AS 'MODULE_PATHNAME', 'evaluate' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.evaluate(text, text, integer) IS
'loss and metrics of the models in model_table (or the one with mst_key) on a packed table';

CREATE FUNCTION hopper.model_forward(model_state bytea, features double precision[],
                                     normalizing_const double precision DEFAULT 1.0,
                                     feature_center real[] DEFAULT NULL, feature_spread real[] DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'model_forward' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_forward(bytea, double precision[], double precision, real[], real[]) IS
'output of a model for one row of raw features (scaled as (x / normalizing_const - center) / spread): class probabilities or regression values';

CREATE FUNCTION hopper.argmax(x real[]) RETURNS integer
AS 'MODULE_PATHNAME', 'argmax' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.argmax(real[]) IS '1-based position of the largest value (the first one on ties)';

CREATE FUNCTION hopper.predict(model_table text, source_table text, id_column text, independent_varname text,
                               output_table text, pred_type text DEFAULT 'response', mst_key integer DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'predict' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.predict(text, text, text, text, text, text, integer) IS
'scores the raw rows of source_table with a trained model (scaled as the training data was) into output_table: the predicted class or value, and with pred_type prob the class probabilities';

CREATE FUNCTION hopper.model_state_info(model_state bytea) RETURNS jsonb
AS 'MODULE_PATHNAME', 'model_state_info' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_state_info(bytea) IS
'what a model state holds: configuration, layer sizes, parameter count, training counters, checksum';

CREATE FUNCTION hopper.model_weights(model_state bytea) RETURNS real[]
AS 'MODULE_PATHNAME', 'model_weights' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_weights(bytea) IS
'all parameters of a model state, layer by layer: weights (units x inputs, column-major) then biases';
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
AS 'MODULE_PATHNAME', 'combine_vector_sum_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_add(internal, double precision[]) IS
'transition function of hopper.vector_sum and vector_sum_partial: adds one vector (NULL vectors are skipped)';

CREATE FUNCTION hopper.vector_sum_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_vector_sum_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_merge(internal, bytea) IS
'transition function of hopper.vector_sum_intermediate and vector_sum_final: merges one serialized state (NULL states are skipped)';

CREATE FUNCTION hopper.vector_sum_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_vector_sum_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_combine(internal, internal) IS
'combine function of the vector_sum aggregates: merges two partial states';

CREATE FUNCTION hopper.vector_sum_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'combine_vector_sum_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_serialize(internal) IS
'serialize function of the vector_sum aggregates, and final function of vector_sum_partial and vector_sum_intermediate';

CREATE FUNCTION hopper.vector_sum_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_vector_sum_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_deserialize(bytea, internal) IS
'deserialize function of the vector_sum aggregates (checks the state: kind, length, checksum)';

CREATE FUNCTION hopper.vector_sum_finish(internal) RETURNS hopper.vector_total
AS 'MODULE_PATHNAME', 'combine_vector_sum_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
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
AS 'MODULE_PATHNAME', 'combine_model_average_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_add(internal, bytea, bigint) IS
'transition function of hopper.model_average and model_average_partial: adds a model state with its weight (NULL states are skipped)';

CREATE FUNCTION hopper.model_average_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_model_average_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_merge(internal, bytea) IS
'transition function of hopper.model_average_intermediate and model_average_final: merges one serialized averaging state (NULL states are skipped)';

CREATE FUNCTION hopper.model_average_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_model_average_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_combine(internal, internal) IS
'combine function of the model_average aggregates: adds two averaging states (exact, order-independent)';

CREATE FUNCTION hopper.model_average_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'combine_model_average_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_serialize(internal) IS
'serialize function of the model_average aggregates, and final function of model_average_partial and model_average_intermediate';

CREATE FUNCTION hopper.model_average_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_model_average_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_deserialize(bytea, internal) IS
'deserialize function of the model_average aggregates (checks the state: kind, sizes, configuration, checksum)';

CREATE FUNCTION hopper.model_average_finish(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'combine_model_average_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
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
AS 'MODULE_PATHNAME', 'combine_metrics_add' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100000;
COMMENT ON FUNCTION hopper.metrics_add(internal, bytea, real[], real[]) IS
'transition function of hopper.metrics and metrics_partial: evaluates the model on one packed buffer and adds its loss and metric sums';

CREATE FUNCTION hopper.metrics_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_metrics_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_merge(internal, bytea) IS
'transition function of hopper.metrics_intermediate and metrics_final: merges one serialized state (NULL states are skipped)';

CREATE FUNCTION hopper.metrics_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_metrics_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_combine(internal, internal) IS
'combine function of the metrics aggregates: adds two partial states';

CREATE FUNCTION hopper.metrics_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'combine_metrics_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_serialize(internal) IS
'serialize function of the metrics aggregates, and final function of metrics_partial and metrics_intermediate';

CREATE FUNCTION hopper.metrics_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'combine_metrics_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_deserialize(bytea, internal) IS
'deserialize function of the metrics aggregates (checks the state: kind, names, checksum)';

CREATE FUNCTION hopper.metrics_finish(internal) RETURNS hopper.metrics_total
AS 'MODULE_PATHNAME', 'combine_metrics_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
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
-- Checkpoints and the model registry: plain tables and views, queried with plain SQL.
--
-- Generic checkpoints (any task can write one) live in hopper.checkpoints, their payload in
-- hopper.checkpoint_chunks (so SELECT * FROM hopper.checkpoints never reads model weights). What a
-- training run knows about its checkpoints (run, configuration, metrics, searcher metric) lives in
-- hopper.runs, hopper.trials, hopper.trial_metrics and hopper.checkpoint_training, and
-- hopper.checkpoints_expanded joins it all. Models and their numbered versions point at
-- checkpoints with real foreign keys.
--
-- Invariants are kept by the database itself, so that plain INSERT/UPDATE/DELETE cannot break them:
--  * version numbers come from a per-model counter (models.next_version) that a trigger takes and
--    advances while holding the model's row lock; it never goes down, so numbers are never reused;
--  * registering a version bumps checkpoints.version_count under the checkpoint's row lock, and a
--    checkpoint with versions can be neither deleted (CHECK constraint and trigger) nor have its
--    payload removed (row-level security on the chunks);
--  * rows record their owner; row-level security lets everyone read and only the owner (or a member
--    of the owner role) change them. Every function is SECURITY INVOKER.
-- Trigger functions run with search_path pg_catalog, pg_temp and schema-qualify every table.

-- Whether the current user may change a row owned by `owner`: it is the owner, or a member of it.
CREATE FUNCTION hopper.may_modify(owner name) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT owner = CURRENT_USER
        OR EXISTS (SELECT 1 FROM pg_catalog.pg_roles r
                   WHERE r.rolname = owner AND pg_catalog.pg_has_role(r.oid, 'MEMBER'));
END;
COMMENT ON FUNCTION hopper.may_modify(name) IS
'whether the current user may change registry rows owned by owner (it is the owner or a member of that role); used by the row-level security policies';

-- ---- tasks: whatever writes checkpoints --------------------------------------------------------
CREATE TABLE hopper.tasks (
    task_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_type text NOT NULL CHECK (task_type ~ '^[A-Z][A-Z0-9_]{0,62}$'),
    state text NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'COMPLETED', 'ERROR', 'CANCELED')),
    description text,
    metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    owner name NOT NULL DEFAULT CURRENT_USER,
    start_time timestamptz NOT NULL DEFAULT now(),
    end_time timestamptz
);
COMMENT ON TABLE hopper.tasks IS
'what wrote checkpoints: one TRAINING task per model configuration of a training run, or any other kind (IMPORT, ...) created with hopper.create_task';

-- ---- training runs and their configurations ------------------------------------------------------
CREATE TABLE hopper.runs (
    run_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    method text NOT NULL CHECK (method IN ('fit', 'fit_multiple', 'fit_data_parallel')),
    name text,
    description text,
    source_table text NOT NULL,
    validation_table text,
    model_output_table text NOT NULL,
    model_selection_table text,
    num_iterations integer NOT NULL,
    metrics_compute_frequency integer NOT NULL,
    checkpoint_frequency integer NOT NULL,
    searcher_metric text NOT NULL,
    smaller_is_better boolean NOT NULL,
    -- How the training data was packed (what predict needs to score raw rows): response_type,
    -- class_values, dependent_varname, dependent_vartype, independent_varname, normalizing_const,
    -- scale, feature_center, feature_spread, num_rows.
    data jsonb NOT NULL CHECK (jsonb_typeof(data) = 'object'),
    -- INTERRUPTED: the session running it ended (error, cancel, crash) before it completed; its
    -- completed checkpoints are kept, and warm_start_run resumes it.
    state text NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'COMPLETED', 'ERROR', 'CANCELED', 'INTERRUPTED')),
    owner name NOT NULL DEFAULT CURRENT_USER,
    start_time timestamptz NOT NULL DEFAULT now(),
    end_time timestamptz,
    -- The session running it, to tell a live ACTIVE run from one whose session is gone.
    backend_pid integer,
    backend_start timestamptz
);
COMMENT ON TABLE hopper.runs IS
'one row per call of hopper.fit, fit_multiple or fit_data_parallel: its tables, settings, searcher metric and the facts of the packed data; a run whose session ended before it completed is marked INTERRUPTED by hopper.mark_interrupted_runs(), which every new run of the same owner calls';

CREATE TABLE hopper.checkpoints (
    checkpoint_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uuid uuid NOT NULL DEFAULT gen_random_uuid() UNIQUE,
    task_id bigint REFERENCES hopper.tasks,
    report_time timestamptz NOT NULL DEFAULT now(),
    state text NOT NULL DEFAULT 'ACTIVE'
        CHECK (state IN ('ACTIVE', 'COMPLETED', 'ERROR', 'DELETING', 'DELETED', 'PARTIALLY_DELETED')),
    steps_completed bigint CHECK (steps_completed >= 0),
    format text NOT NULL CHECK (format <> ''),
    storage text NOT NULL CHECK (storage IN ('database', 'external')),
    external_uri text,
    size_bytes bigint CHECK (size_bytes >= 0),
    checksum text,
    resources jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(resources) = 'object'),
    metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    -- Model versions that use this checkpoint (maintained by the model_versions triggers).
    version_count integer NOT NULL DEFAULT 0 CHECK (version_count >= 0),
    owner name NOT NULL DEFAULT CURRENT_USER,
    CONSTRAINT checkpoints_external_uri_check CHECK ((storage = 'external') = (external_uri IS NOT NULL)),
    CONSTRAINT checkpoints_registered_check CHECK (version_count = 0 OR state = 'COMPLETED'),
    UNIQUE (checkpoint_id, task_id)
);
COMMENT ON TABLE hopper.checkpoints IS
'generic checkpoints: a model state stored in the database (hopper.checkpoint_chunks) or an external reference, with the task that wrote it, state, steps, size, checksum, resources and metadata';
-- "Latest checkpoint of a configuration" is a backward scan of this index.
CREATE INDEX checkpoints_task_steps_idx ON hopper.checkpoints (task_id, steps_completed, checkpoint_id);
CREATE INDEX checkpoints_report_time_idx ON hopper.checkpoints (report_time);

CREATE TABLE hopper.checkpoint_chunks (
    checkpoint_id bigint NOT NULL REFERENCES hopper.checkpoints ON DELETE CASCADE,
    chunk_no integer NOT NULL CHECK (chunk_no >= 0),
    data bytea NOT NULL,
    PRIMARY KEY (checkpoint_id, chunk_no)
);
-- Model states are float data: compressing them costs time and saves nothing.
ALTER TABLE hopper.checkpoint_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
COMMENT ON TABLE hopper.checkpoint_chunks IS
'payload of the checkpoints stored in the database, in chunks of at most 1 MB; read it with hopper.checkpoint_state';

CREATE TABLE hopper.trials (
    trial_id bigint PRIMARY KEY REFERENCES hopper.tasks (task_id),
    run_id bigint NOT NULL REFERENCES hopper.runs,
    mst_key integer NOT NULL,
    model_id integer,
    model_arch jsonb NOT NULL,
    compile_params text NOT NULL,
    fit_params text NOT NULL,
    model_config jsonb NOT NULL,
    hparams jsonb NOT NULL,
    warm_start_checkpoint_id bigint REFERENCES hopper.checkpoints,
    status text NOT NULL DEFAULT 'training' CHECK (status IN ('training', 'completed', 'diverged')),
    UNIQUE (run_id, mst_key)
);
COMMENT ON TABLE hopper.trials IS
'one row per model configuration (mst_key) of a training run; trial_id is the task that writes its checkpoints';
CREATE INDEX trials_warm_start_idx ON hopper.trials (warm_start_checkpoint_id) WHERE warm_start_checkpoint_id IS NOT NULL;

CREATE TABLE hopper.trial_metrics (
    trial_id bigint NOT NULL REFERENCES hopper.trials,
    iteration integer NOT NULL,
    steps_completed bigint NOT NULL,
    training_metrics jsonb NOT NULL,
    validation_metrics jsonb,
    searcher_value double precision,
    elapsed_seconds double precision,
    report_time timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (trial_id, iteration)
);
COMMENT ON TABLE hopper.trial_metrics IS
'loss and metrics of a configuration at each evaluated iteration, on the training and the validation set, and the value of the run''s searcher metric';

CREATE TABLE hopper.checkpoint_training (
    checkpoint_id bigint PRIMARY KEY,
    trial_id bigint NOT NULL REFERENCES hopper.trials,
    iteration integer NOT NULL,
    searcher_value double precision,
    -- searcher_value when smaller is better, else its negation: "best first" is ascending order.
    signed_searcher_value double precision,
    -- A training checkpoint's task is its trial.
    FOREIGN KEY (checkpoint_id, trial_id) REFERENCES hopper.checkpoints (checkpoint_id, task_id) ON DELETE CASCADE,
    UNIQUE (trial_id, iteration)
);
COMMENT ON TABLE hopper.checkpoint_training IS
'training facts of a checkpoint: the configuration (trial) and iteration that wrote it and its searcher metric value';
-- "Best checkpoint of a configuration" is a forward scan of this index.
CREATE INDEX checkpoint_training_best_idx ON hopper.checkpoint_training (trial_id, signed_searcher_value, checkpoint_id);

-- ---- the model registry ---------------------------------------------------------------------
CREATE TABLE hopper.models (
    model_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL CONSTRAINT models_name_check
        CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$' AND name !~ '^[0-9]+$'),
    description text,
    metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    labels text[] NOT NULL DEFAULT '{}' CHECK (array_position(labels, NULL) IS NULL),
    notes text,
    archived boolean NOT NULL DEFAULT false,
    -- The number the next registered version gets; only ever goes up.
    next_version integer NOT NULL DEFAULT 1 CHECK (next_version >= 1),
    owner name NOT NULL DEFAULT CURRENT_USER,
    creation_time timestamptz NOT NULL DEFAULT now(),
    last_updated_time timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX models_name_key ON hopper.models (lower(name));
COMMENT ON TABLE hopper.models IS
'registered models: a unique name (case-insensitive), description, metadata, labels, notes, archived flag and owner; versions in hopper.model_versions';

CREATE TABLE hopper.model_versions (
    version_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    model_id bigint NOT NULL REFERENCES hopper.models ON DELETE CASCADE,
    version integer NOT NULL CHECK (version >= 1),
    checkpoint_id bigint NOT NULL REFERENCES hopper.checkpoints,
    name text,
    comment text,
    metadata jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
    labels text[] NOT NULL DEFAULT '{}' CHECK (array_position(labels, NULL) IS NULL),
    notes text,
    owner name NOT NULL DEFAULT CURRENT_USER,
    creation_time timestamptz NOT NULL DEFAULT now(),
    last_updated_time timestamptz NOT NULL DEFAULT now(),
    UNIQUE (model_id, version),
    UNIQUE (model_id, version_id)
);
CREATE INDEX model_versions_checkpoint_idx ON hopper.model_versions (checkpoint_id);
COMMENT ON TABLE hopper.model_versions IS
'numbered versions of a model (1, 2, 3, ... per model, never reused), each a checkpoint; version_id is unique across all models';

CREATE TABLE hopper.model_aliases (
    model_id bigint NOT NULL REFERENCES hopper.models ON DELETE CASCADE,
    alias text NOT NULL CONSTRAINT model_aliases_alias_check
        CHECK (alias ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$' AND alias !~ '^[0-9]+$'),
    version_id bigint NOT NULL,
    owner name NOT NULL DEFAULT CURRENT_USER,
    last_updated_time timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (model_id, version_id) REFERENCES hopper.model_versions (model_id, version_id) ON DELETE CASCADE
);
-- Aliases are unique per model without regard to case, like model names.
CREATE UNIQUE INDEX model_aliases_key ON hopper.model_aliases (model_id, lower(alias));
CREATE INDEX model_aliases_version_idx ON hopper.model_aliases (version_id);
COMMENT ON TABLE hopper.model_aliases IS
'named pointers such as champion to one version of a model; removed with the version';

-- ---- triggers that keep the invariants ------------------------------------------------------------
CREATE FUNCTION hopper.model_versions_before_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    assigned integer;
    m record;
    c record;
BEGIN
    -- Takes the model's row lock: concurrent registrations of one model queue here and get
    -- consecutive numbers; an archive committed meanwhile is seen by the re-check of NOT archived.
    UPDATE hopper.models SET next_version = next_version + 1, last_updated_time = now()
    WHERE model_id = NEW.model_id AND NOT archived
    RETURNING next_version - 1 INTO assigned;
    IF NOT FOUND THEN
        SELECT name, archived, owner INTO m FROM hopper.models WHERE model_id = NEW.model_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'model with id % does not exist', NEW.model_id USING ERRCODE = 'undefined_object';
        ELSIF m.archived THEN
            RAISE EXCEPTION 'model "%" is archived', m.name USING ERRCODE = 'object_not_in_prerequisite_state',
                DETAIL = 'An archived model accepts no new versions.',
                HINT = 'Unarchive it with hopper.unarchive_model first.';
        ELSE
            RAISE EXCEPTION 'permission denied for model "%"', m.name USING ERRCODE = 'insufficient_privilege',
                DETAIL = format('It belongs to role %s.', m.owner),
                HINT = format('Ask for membership in role %s.', m.owner);
        END IF;
    END IF;
    IF NEW.version IS NOT NULL AND NEW.version <> assigned THEN
        RAISE EXCEPTION 'version numbers are assigned by hopper' USING ERRCODE = 'generated_always',
            DETAIL = format('The next version of this model is %s; %s was given.', assigned, NEW.version),
            HINT = 'Leave out the version column, or use hopper.register_model_version.';
    END IF;
    NEW.version := assigned;
    NEW.creation_time := now();
    NEW.last_updated_time := now();
    -- Takes the checkpoint's row lock and writes it: a concurrent deletion either waits and then
    -- sees version_count > 0 (READ COMMITTED) or fails to serialize (REPEATABLE READ).
    UPDATE hopper.checkpoints SET version_count = version_count + 1
    WHERE checkpoint_id = NEW.checkpoint_id AND state = 'COMPLETED';
    IF NOT FOUND THEN
        SELECT uuid, state INTO c FROM hopper.checkpoints WHERE checkpoint_id = NEW.checkpoint_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'checkpoint with id % does not exist', NEW.checkpoint_id USING ERRCODE = 'undefined_object';
        END IF;
        RAISE EXCEPTION 'checkpoint % is %', c.uuid, c.state USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'Only COMPLETED checkpoints can be registered as model versions.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_before_insert() IS
'trigger: numbers a new model version from the model''s counter under its row lock (refusing archived models) and marks the checkpoint as used (refusing checkpoints that are not COMPLETED)';
CREATE TRIGGER model_versions_before_insert BEFORE INSERT ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_before_insert();

CREATE FUNCTION hopper.model_versions_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.model_id <> OLD.model_id OR NEW.version <> OLD.version OR NEW.checkpoint_id <> OLD.checkpoint_id THEN
        RAISE EXCEPTION 'the model, number and checkpoint of a model version cannot be changed'
            USING ERRCODE = 'generated_always',
            HINT = 'Register the checkpoint as a new version instead.';
    END IF;
    NEW.last_updated_time := now();
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_before_update() IS
'trigger: keeps the model, number and checkpoint of a version fixed and records the update time';
CREATE TRIGGER model_versions_before_update BEFORE UPDATE ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_before_update();

CREATE FUNCTION hopper.model_versions_after_delete() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    UPDATE hopper.checkpoints SET version_count = version_count - 1 WHERE checkpoint_id = OLD.checkpoint_id;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_after_delete() IS
'trigger: a deleted model version no longer holds its checkpoint';
CREATE TRIGGER model_versions_after_delete AFTER DELETE ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_after_delete();

CREATE FUNCTION hopper.models_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.model_id <> OLD.model_id THEN
        RAISE EXCEPTION 'model_id of a model cannot be changed' USING ERRCODE = 'generated_always';
    END IF;
    IF NEW.next_version <> OLD.next_version AND (pg_trigger_depth() < 2 OR NEW.next_version < OLD.next_version) THEN
        RAISE EXCEPTION 'next_version of a model is maintained by hopper' USING ERRCODE = 'generated_always',
            DETAIL = 'Version numbers are never reused.';
    END IF;
    NEW.last_updated_time := now();
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.models_before_update() IS
'trigger: version numbers only go up, and only when a version is registered; records the update time';
CREATE TRIGGER models_before_update BEFORE UPDATE ON hopper.models
    FOR EACH ROW EXECUTE FUNCTION hopper.models_before_update();

CREATE FUNCTION hopper.checkpoints_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    used_by text;
BEGIN
    IF NEW.checkpoint_id <> OLD.checkpoint_id OR NEW.uuid <> OLD.uuid THEN
        RAISE EXCEPTION 'the id and uuid of a checkpoint cannot be changed' USING ERRCODE = 'generated_always';
    END IF;
    IF OLD.state = 'DELETED' AND NEW.state <> 'DELETED' THEN
        RAISE EXCEPTION 'checkpoint % is deleted', OLD.uuid USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'A deleted checkpoint has no payload and stays deleted.';
    END IF;
    IF NEW.version_count <> OLD.version_count AND pg_trigger_depth() < 2 THEN
        RAISE EXCEPTION 'version_count of a checkpoint is maintained by hopper' USING ERRCODE = 'generated_always',
            HINT = 'Register or delete model versions instead.';
    END IF;
    -- Anyone may register a checkpoint (which changes version_count); everything else is the owner's.
    IF NOT hopper.may_modify(OLD.owner)
       AND (pg_catalog.to_jsonb(NEW) - 'version_count') IS DISTINCT FROM (pg_catalog.to_jsonb(OLD) - 'version_count') THEN
        RAISE EXCEPTION 'permission denied for checkpoint %', OLD.uuid USING ERRCODE = 'insufficient_privilege',
            DETAIL = format('It belongs to role %s.', OLD.owner);
    END IF;
    IF NEW.state IN ('DELETING', 'DELETED', 'PARTIALLY_DELETED') AND NEW.version_count > 0 THEN
        SELECT string_agg(format('%s version %s', m.name, v.version), ', ' ORDER BY m.name, v.version) INTO used_by
        FROM hopper.model_versions v JOIN hopper.models m USING (model_id) WHERE v.checkpoint_id = OLD.checkpoint_id;
        RAISE EXCEPTION 'checkpoint % is registered as a model version', OLD.uuid USING ERRCODE = 'object_in_use',
            DETAIL = format('It is %s.', coalesce(used_by, 'used by a model version')),
            HINT = 'Delete those model versions first.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.checkpoints_before_update() IS
'trigger: a checkpoint used by a model version cannot be deleted, a deleted one stays deleted; only its owner may change it, others only register it';
CREATE TRIGGER checkpoints_before_update BEFORE UPDATE ON hopper.checkpoints
    FOR EACH ROW EXECUTE FUNCTION hopper.checkpoints_before_update();

-- ---- privileges and row-level security ---------------------------------------------------------
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.tasks, hopper.runs, hopper.checkpoints, hopper.checkpoint_chunks,
    hopper.trials, hopper.trial_metrics, hopper.checkpoint_training, hopper.models, hopper.model_versions,
    hopper.model_aliases TO PUBLIC;

ALTER TABLE hopper.tasks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tasks_read ON hopper.tasks FOR SELECT USING (true);
CREATE POLICY tasks_owner ON hopper.tasks USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));

ALTER TABLE hopper.runs ENABLE ROW LEVEL SECURITY;
CREATE POLICY runs_read ON hopper.runs FOR SELECT USING (true);
CREATE POLICY runs_owner ON hopper.runs USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));

ALTER TABLE hopper.trials ENABLE ROW LEVEL SECURITY;
CREATE POLICY trials_read ON hopper.trials FOR SELECT USING (true);
CREATE POLICY trials_owner ON hopper.trials
    USING (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)));

ALTER TABLE hopper.trial_metrics ENABLE ROW LEVEL SECURITY;
CREATE POLICY trial_metrics_read ON hopper.trial_metrics FOR SELECT USING (true);
CREATE POLICY trial_metrics_owner ON hopper.trial_metrics
    USING (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)));

ALTER TABLE hopper.checkpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoints_read ON hopper.checkpoints FOR SELECT USING (true);
CREATE POLICY checkpoints_insert ON hopper.checkpoints FOR INSERT WITH CHECK (hopper.may_modify(owner));
-- Registering someone else's checkpoint updates its version_count; the trigger refuses anything else.
CREATE POLICY checkpoints_update ON hopper.checkpoints FOR UPDATE USING (true) WITH CHECK (true);
CREATE POLICY checkpoints_delete ON hopper.checkpoints FOR DELETE USING (hopper.may_modify(owner));

-- Chunks are written while their checkpoint is ACTIVE and removed only once it is being deleted
-- (or was never completed); a COMPLETED checkpoint's payload cannot change. No UPDATE policy: chunks
-- are immutable.
ALTER TABLE hopper.checkpoint_chunks ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoint_chunks_read ON hopper.checkpoint_chunks FOR SELECT USING (true);
CREATE POLICY checkpoint_chunks_insert ON hopper.checkpoint_chunks FOR INSERT
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_chunks.checkpoint_id
                        AND c.state = 'ACTIVE' AND hopper.may_modify(c.owner)));
CREATE POLICY checkpoint_chunks_delete ON hopper.checkpoint_chunks FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_chunks.checkpoint_id
                   AND c.state IN ('ACTIVE', 'ERROR', 'DELETING', 'DELETED', 'PARTIALLY_DELETED')
                   AND c.version_count = 0 AND hopper.may_modify(c.owner)));

ALTER TABLE hopper.checkpoint_training ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoint_training_read ON hopper.checkpoint_training FOR SELECT USING (true);
CREATE POLICY checkpoint_training_owner ON hopper.checkpoint_training
    USING (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_training.checkpoint_id
                   AND hopper.may_modify(c.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_training.checkpoint_id
                        AND hopper.may_modify(c.owner)));

ALTER TABLE hopper.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY models_read ON hopper.models FOR SELECT USING (true);
CREATE POLICY models_owner ON hopper.models USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));

ALTER TABLE hopper.model_versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_versions_read ON hopper.model_versions FOR SELECT USING (true);
CREATE POLICY model_versions_owner ON hopper.model_versions
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)));

ALTER TABLE hopper.model_aliases ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_aliases_read ON hopper.model_aliases FOR SELECT USING (true);
CREATE POLICY model_aliases_owner ON hopper.model_aliases
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)));

-- pg_dump keeps the registry's rows (extension tables are otherwise dumped without data).
-- (one statement each: every call updates the extension's catalog row)
SELECT pg_catalog.pg_extension_config_dump('hopper.tasks', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.runs', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.checkpoints', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.checkpoint_chunks', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.trials', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.trial_metrics', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.checkpoint_training', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.models', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.model_versions', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.model_aliases', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.tasks', 'task_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.runs', 'run_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.checkpoints', 'checkpoint_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.models', 'model_id'), '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('hopper.model_versions', 'version_id'), '');

-- ---- views ------------------------------------------------------------------------------------
CREATE VIEW hopper.checkpoints_expanded AS
SELECT c.checkpoint_id, c.uuid, c.task_id, t.task_type, c.report_time, c.state, c.steps_completed, c.format,
       c.storage, c.external_uri, c.size_bytes, c.checksum, c.resources, c.metadata, c.version_count, c.owner,
       tr.run_id, r.name AS run_name, ct.trial_id, tr.mst_key, tr.model_id, ct.iteration, tr.model_arch,
       tr.compile_params, tr.fit_params, tr.hparams, m.training_metrics, m.validation_metrics,
       r.searcher_metric, r.smaller_is_better, ct.searcher_value, ct.signed_searcher_value,
       coalesce(r.data, c.metadata -> 'data') AS data
FROM hopper.checkpoints c
LEFT JOIN hopper.tasks t ON t.task_id = c.task_id
LEFT JOIN hopper.checkpoint_training ct ON ct.checkpoint_id = c.checkpoint_id AND ct.trial_id = c.task_id
LEFT JOIN hopper.trials tr ON tr.trial_id = ct.trial_id
LEFT JOIN hopper.runs r ON r.run_id = tr.run_id
LEFT JOIN hopper.trial_metrics m ON m.trial_id = ct.trial_id AND m.iteration = ct.iteration;
COMMENT ON VIEW hopper.checkpoints_expanded IS
'every checkpoint with its training facts (run, configuration, iteration, hyper-parameters, metrics at that iteration, searcher metric; NULL for checkpoints not written by training) and the facts of its data (for predict)';

CREATE VIEW hopper.latest_checkpoints AS
SELECT tr.run_id, r.name AS run_name, tr.trial_id, tr.mst_key, x.checkpoint_id, x.uuid, x.iteration, x.steps_completed, x.report_time,
       x.training_metrics, x.validation_metrics, x.searcher_metric, x.searcher_value
FROM hopper.runs r
JOIN hopper.trials tr ON tr.run_id = r.run_id
CROSS JOIN LATERAL (
    SELECT e.checkpoint_id, e.uuid, e.iteration, e.steps_completed, e.report_time, e.training_metrics,
           e.validation_metrics, e.searcher_metric, e.searcher_value
    FROM hopper.checkpoints_expanded e
    WHERE e.trial_id = tr.trial_id AND e.state = 'COMPLETED'
    ORDER BY e.steps_completed DESC, e.checkpoint_id DESC
    LIMIT 1) x;
COMMENT ON VIEW hopper.latest_checkpoints IS
'the latest COMPLETED checkpoint of every model configuration of every training run (an index scan per configuration)';

CREATE VIEW hopper.best_checkpoints AS
SELECT tr.run_id, r.name AS run_name, tr.trial_id, tr.mst_key, x.checkpoint_id, x.uuid, x.iteration, x.steps_completed, x.report_time,
       x.training_metrics, x.validation_metrics, x.searcher_metric, x.searcher_value
FROM hopper.runs r
JOIN hopper.trials tr ON tr.run_id = r.run_id
CROSS JOIN LATERAL (
    SELECT e.checkpoint_id, e.uuid, e.iteration, e.steps_completed, e.report_time, e.training_metrics,
           e.validation_metrics, e.searcher_metric, e.searcher_value
    FROM hopper.checkpoints_expanded e
    WHERE e.trial_id = tr.trial_id AND e.state = 'COMPLETED' AND e.signed_searcher_value IS NOT NULL
    ORDER BY e.signed_searcher_value, e.checkpoint_id
    LIMIT 1) x;
COMMENT ON VIEW hopper.best_checkpoints IS
'the COMPLETED checkpoint with the best searcher metric of every model configuration of every training run (an index scan per configuration; ties go to the earlier checkpoint)';

CREATE VIEW hopper.model_versions_expanded AS
SELECT v.version_id, v.model_id, md.name AS model_name, v.version, v.name, v.comment, v.metadata, v.labels, v.notes,
       v.owner, v.creation_time, v.last_updated_time,
       ARRAY(SELECT a.alias FROM hopper.model_aliases a WHERE a.version_id = v.version_id ORDER BY a.alias) AS aliases,
       e.checkpoint_id, e.uuid AS checkpoint_uuid, e.state AS checkpoint_state, e.steps_completed, e.run_id, e.mst_key,
       e.iteration, e.training_metrics, e.validation_metrics, e.searcher_metric, e.searcher_value,
       e.signed_searcher_value, e.data ->> 'response_type' AS response_type,
       CASE WHEN jsonb_typeof(e.data -> 'class_values') = 'array'
            THEN ARRAY(SELECT jsonb_array_elements_text(e.data -> 'class_values')) END AS class_values,
       (e.data ->> 'normalizing_const')::double precision AS normalizing_const,
       CASE WHEN jsonb_typeof(e.data -> 'feature_center') = 'array'
            THEN ARRAY(SELECT jsonb_array_elements_text(e.data -> 'feature_center')::real) END AS feature_center,
       CASE WHEN jsonb_typeof(e.data -> 'feature_spread') = 'array'
            THEN ARRAY(SELECT jsonb_array_elements_text(e.data -> 'feature_spread')::real) END AS feature_spread
FROM hopper.model_versions v
JOIN hopper.models md ON md.model_id = v.model_id
JOIN hopper.checkpoints_expanded e ON e.checkpoint_id = v.checkpoint_id;
COMMENT ON VIEW hopper.model_versions_expanded IS
'every model version with its model name, aliases, checkpoint, training facts and what hopper.model_forward needs to score a row (normalizing_const, feature_center, feature_spread, class_values)';

GRANT SELECT ON hopper.checkpoints_expanded, hopper.latest_checkpoints, hopper.best_checkpoints,
    hopper.model_versions_expanded TO PUBLIC;

-- ---- functions: tasks and checkpoints -------------------------------------------------------------
CREATE FUNCTION hopper.create_task(task_type text, description text DEFAULT NULL, metadata jsonb DEFAULT '{}')
RETURNS bigint
AS 'MODULE_PATHNAME', 'create_task' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_task(text, text, jsonb) IS
'records a task that will write checkpoints (task_type such as IMPORT or FINE_TUNE) and returns its task_id';

CREATE FUNCTION hopper.end_task(task_id bigint, state text DEFAULT 'COMPLETED')
RETURNS void
AS 'MODULE_PATHNAME', 'end_task' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.end_task(bigint, text) IS
'marks an ACTIVE task COMPLETED, ERROR or CANCELED and records its end time';

CREATE FUNCTION hopper.create_checkpoint(model_state bytea, task_id bigint DEFAULT NULL,
                                         steps_completed bigint DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                         resources jsonb DEFAULT '{}')
RETURNS uuid
AS 'MODULE_PATHNAME', 'create_checkpoint' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_checkpoint(bytea, bigint, bigint, jsonb, jsonb) IS
'stores a model state as a COMPLETED checkpoint (checked, chunked, with size and sha256) and returns its uuid; steps_completed defaults to the state''s step counter; metadata may carry {"data": {...}} so that the checkpoint can be used by predict';

CREATE FUNCTION hopper.create_checkpoint_reference(uri text, format text, size_bytes bigint DEFAULT NULL,
                                                   checksum text DEFAULT NULL, task_id bigint DEFAULT NULL,
                                                   steps_completed bigint DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                                   resources jsonb DEFAULT '{}', state text DEFAULT 'COMPLETED')
RETURNS uuid
AS 'MODULE_PATHNAME', 'create_checkpoint_reference' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_checkpoint_reference(text, text, bigint, text, bigint, bigint, jsonb, jsonb, text) IS
'records a checkpoint stored outside the database (uri) and returns its uuid';

CREATE FUNCTION hopper.set_checkpoint_state(checkpoint uuid, state text)
RETURNS void
AS 'MODULE_PATHNAME', 'set_checkpoint_state' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.set_checkpoint_state(uuid, text) IS
'moves a checkpoint along its life cycle: ACTIVE to COMPLETED or ERROR, COMPLETED to ERROR, DELETING to DELETED or PARTIALLY_DELETED, PARTIALLY_DELETED to DELETED';

CREATE FUNCTION hopper.checkpoint_state(checkpoint uuid)
RETURNS bytea
AS 'MODULE_PATHNAME', 'checkpoint_state' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION hopper.checkpoint_state(uuid) IS
'the model state stored in a checkpoint, reassembled from its chunks and checked against its size and sha256';

CREATE FUNCTION hopper.materialize_checkpoint(checkpoint uuid, output_table text)
RETURNS void
AS 'MODULE_PATHNAME', 'materialize_checkpoint' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.materialize_checkpoint(uuid, text) IS
'writes a checkpoint as a model table (output_table and output_table_summary, as fit writes them) for hopper.predict and hopper.evaluate';

CREATE FUNCTION hopper.delete_checkpoints(checkpoints uuid[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'delete_checkpoints' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_checkpoints(uuid[]) IS
'deletes checkpoints (all or none): stored ones become DELETED and lose their payload, external ones become DELETING; refuses checkpoints registered as model versions; returns how many changed state';

CREATE FUNCTION hopper.gc_checkpoints(run_id bigint DEFAULT NULL, keep_best_per_run integer DEFAULT 1,
                                      keep_best_overall integer DEFAULT 0, keep_latest_per_run integer DEFAULT 0,
                                      keep_latest_per_configuration integer DEFAULT 1, dry_run boolean DEFAULT false)
RETURNS TABLE (checkpoint_uuid uuid, run_id bigint, mst_key integer, iteration integer, steps_completed bigint,
               searcher_value double precision)
AS 'MODULE_PATHNAME', 'gc_checkpoints' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.gc_checkpoints(bigint, integer, integer, integer, integer, boolean) IS
'garbage-collects the caller''s COMPLETED training checkpoints (of one run, or all): keeps the best N per run and overall by the searcher metric, the latest N per run and per configuration, and every checkpoint registered as a model version or used as a warm-start source; deletes the rest and returns them (dry_run: only returns them); idempotent';

CREATE FUNCTION hopper.list_checkpoints(run_id bigint DEFAULT NULL, mst_key integer DEFAULT NULL,
                                        states text[] DEFAULT NULL, order_by text DEFAULT 'report_time',
                                        descending boolean DEFAULT true, page_size integer DEFAULT 100,
                                        page_offset bigint DEFAULT 0)
RETURNS TABLE (checkpoint_uuid uuid, run_id bigint, mst_key integer, iteration integer, state text,
               steps_completed bigint, report_time timestamptz, searcher_metric text, searcher_value double precision,
               training_metrics jsonb, validation_metrics jsonb, size_bytes bigint, total_count bigint)
AS 'MODULE_PATHNAME', 'list_checkpoints' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.list_checkpoints(bigint, integer, text[], text, boolean, integer, bigint) IS
'one page of checkpoints, filtered by run, configuration and states, sorted by steps, report_time, searcher_metric, training.<metric> or validation.<metric>; total_count is the number of matching checkpoints, computed by the same statement (one snapshot) as the page';

-- ---- functions: models and versions ---------------------------------------------------------------
CREATE FUNCTION hopper.create_model(name text, description text DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                    labels text[] DEFAULT '{}', notes text DEFAULT NULL)
RETURNS bigint
AS 'MODULE_PATHNAME', 'create_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_model(text, text, jsonb, text[], text) IS
'registers a model name (1 to 128 letters, digits, _ - and ., unique without regard to case) owned by the current user; returns its model_id';

CREATE FUNCTION hopper.archive_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'archive_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.archive_model(text) IS
'archives a model: it keeps its versions but accepts no new ones';

CREATE FUNCTION hopper.unarchive_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'unarchive_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.unarchive_model(text) IS
'makes an archived model accept new versions again';

CREATE FUNCTION hopper.delete_model(name text)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model(text) IS
'deletes a model with its versions and aliases (its checkpoints stay, no longer protected)';

CREATE FUNCTION hopper.register_model_version(model_name text, checkpoint uuid, name text DEFAULT NULL,
                                              comment text DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                              labels text[] DEFAULT '{}', notes text DEFAULT NULL)
RETURNS integer
AS 'MODULE_PATHNAME', 'register_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.register_model_version(text, uuid, text, text, jsonb, text[], text) IS
'registers a COMPLETED checkpoint as the next version of a model and returns the version number; concurrent registrations get consecutive numbers, an archived model refuses, and the checkpoint cannot be deleted while the version exists';

CREATE FUNCTION hopper.delete_model_version(model_name text, version integer)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_version(text, integer) IS
'deletes one version of a model (and its aliases); its number is not reused';

CREATE FUNCTION hopper.set_model_alias(model_name text, alias text, version integer)
RETURNS void
AS 'MODULE_PATHNAME', 'set_model_alias' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.set_model_alias(text, text, integer) IS
'points an alias such as champion at a version of a model (moving it if it exists)';

CREATE FUNCTION hopper.delete_model_alias(model_name text, alias text)
RETURNS void
AS 'MODULE_PATHNAME', 'delete_model_alias' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_model_alias(text, text) IS
'removes an alias of a model';

CREATE FUNCTION hopper.model_version_state(model_name text, version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'model_version_state' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.model_version_state(text, integer, text) IS
'the model state of a version (by number, by alias, or the latest when both are NULL)';

CREATE FUNCTION hopper.materialize_model_version(model_name text, output_table text, version integer DEFAULT NULL,
                                                 alias text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'materialize_model_version' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.materialize_model_version(text, text, integer, text) IS
'writes a model version (by number, by alias, or the latest) as a model table for hopper.predict and hopper.evaluate';

CREATE FUNCTION hopper.list_model_versions(model_name text, order_by text DEFAULT 'version',
                                           descending boolean DEFAULT true, page_size integer DEFAULT 100,
                                           page_offset bigint DEFAULT 0)
RETURNS TABLE (version integer, version_id bigint, name text, checkpoint_uuid uuid, aliases text[], labels text[],
               creation_time timestamptz, steps_completed bigint, searcher_metric text,
               searcher_value double precision, validation_metrics jsonb, total_count bigint)
AS 'MODULE_PATHNAME', 'list_model_versions' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.list_model_versions(text, text, boolean, integer, bigint) IS
'one page of the versions of a model, sorted by version, creation_time, steps, searcher_metric or a metric; total_count comes from the same statement (one snapshot) as the page';

CREATE FUNCTION hopper.mark_interrupted_runs() RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
    WITH gone AS (
        UPDATE hopper.runs AS r SET state = 'INTERRUPTED', end_time = pg_catalog.now()
        WHERE r.state = 'ACTIVE'
          AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stat_activity a
                          WHERE a.pid = r.backend_pid AND a.backend_start = r.backend_start)
        RETURNING 1)
    SELECT pg_catalog.count(*) FROM gone
$$;
COMMENT ON FUNCTION hopper.mark_interrupted_runs() IS
'marks the caller''s ACTIVE training runs whose session has ended (an error, a cancel, a server crash) as INTERRUPTED and returns how many; every new training run calls it for its owner';
-- Parameter-server tables: float4 values per int8 key in shared memory, read and updated by
-- numbered workers with BSP, SSP or ASP consistency (docs/parameter_server.md). Needs
-- shared_preload_libraries = 'hopper'. Creating, dropping and Adds take effect at once and are not
-- undone by ROLLBACK. Every function here is VOLATILE and PARALLEL UNSAFE unless noted: they read
-- and change shared state, may wait for other sessions, and bind workers to the calling session.

CREATE FUNCTION hopper.ps_create(name text, num_keys bigint, chunk_size integer DEFAULT 1,
                                 consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                 num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create(text, bigint, integer, text, integer, integer, real) IS
'creates parameter table name with keys 0 .. num_keys-1, every value init_value; chunk c covers keys [c*chunk_size, (c+1)*chunk_size); consistency ''bsp'', ''ssp'' (needs staleness) or ''asp''; workers 0 .. num_workers-1';

CREATE FUNCTION hopper.ps_create(name text, key_ranges int8range[], chunk_size integer DEFAULT 1,
                                 consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                 num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create_ranges' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create(text, int8range[], integer, text, integer, integer, real) IS
'creates parameter table name whose keys are the union of key_ranges (bounded, disjoint); otherwise like ps_create(name, num_keys, ...)';

CREATE FUNCTION hopper.ps_drop(name text, if_exists boolean DEFAULT false) RETURNS boolean
AS 'MODULE_PATHNAME', 'ps_drop' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_drop(text, boolean) IS
'drops parameter table name (owner only) and wakes its waiting workers with an error; returns false (with a notice) if it does not exist and if_exists is true';

CREATE FUNCTION hopper.ps_get(name text, worker integer, keys bigint[]) RETURNS real[]
AS 'MODULE_PATHNAME', 'ps_get' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get(text, integer, bigint[]) IS
'values of keys (sorted, unique) as worker sees them: waits until the consistency allows (BSP: every worker at this worker''s clock; SSP(s): every worker at clock - s; ASP: never)';

CREATE FUNCTION hopper.ps_add(name text, worker integer, keys bigint[], deltas real[]) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add(text, integer, bigint[], real[]) IS
'value += delta for each key (sorted, unique); visible at once under SSP and ASP, when the last worker finishes the iteration under BSP (a BSP Add from a worker ahead of the slowest waits); not undone by ROLLBACK';

CREATE FUNCTION hopper.ps_clock(name text, worker integer) RETURNS bigint
AS 'MODULE_PATHNAME', 'ps_clock' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_clock(text, integer) IS
'ends worker''s current iteration and returns its new clock (never waits); wakes the workers waiting for it';

CREATE FUNCTION hopper.ps_get_chunk(name text, worker integer, chunk_ids bigint[]) RETURNS real[]
AS 'MODULE_PATHNAME', 'ps_get_chunk' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_chunk(text, integer, bigint[]) IS
'values of the keys of chunks chunk_ids (sorted, unique), chunk after chunk in key order; waits like ps_get';

CREATE FUNCTION hopper.ps_add_chunk(name text, worker integer, chunk_ids bigint[], deltas real[]) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_chunk' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_chunk(text, integer, bigint[], real[]) IS
'adds deltas (one per key of the chunks, in ps_get_chunk order) to the keys of chunks chunk_ids; like ps_add';

-- Packed forms: keys and chunk ids as 8-byte, values and deltas as 4-byte little-endian numbers in
-- bytea. They skip the per-element conversion of arrays (the C++ client uses them).
CREATE FUNCTION hopper.ps_get_bytes(name text, worker integer, keys bytea) RETURNS bytea
AS 'MODULE_PATHNAME', 'ps_get_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_bytes(text, integer, bytea) IS
'ps_get with keys packed as 8-byte little-endian integers; returns the values packed as 4-byte little-endian floats';

CREATE FUNCTION hopper.ps_add_bytes(name text, worker integer, keys bytea, deltas bytea) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_bytes(text, integer, bytea, bytea) IS
'ps_add with keys packed as 8-byte and deltas as 4-byte little-endian numbers';

CREATE FUNCTION hopper.ps_get_chunk_bytes(name text, worker integer, chunk_ids bytea) RETURNS bytea
AS 'MODULE_PATHNAME', 'ps_get_chunk_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_chunk_bytes(text, integer, bytea) IS
'ps_get_chunk with chunk ids packed as 8-byte little-endian integers; returns the values packed as 4-byte little-endian floats';

CREATE FUNCTION hopper.ps_add_chunk_bytes(name text, worker integer, chunk_ids bytea, deltas bytea) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_chunk_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_chunk_bytes(text, integer, bytea, bytea) IS
'ps_add_chunk with chunk ids packed as 8-byte and deltas as 4-byte little-endian numbers';

CREATE FUNCTION hopper.ps_tables_internal(
    OUT name text, OUT num_keys bigint, OUT key_lo bigint[], OUT key_hi bigint[], OUT chunk_size integer,
    OUT num_chunks bigint, OUT consistency text, OUT staleness integer, OUT num_workers integer,
    OUT min_clock bigint, OUT max_clock bigint, OUT memory_bytes bigint, OUT owner oid,
    OUT created_at timestamptz, OUT get_calls bigint, OUT get_keys bigint, OUT add_calls bigint,
    OUT add_keys bigint, OUT clocks bigint, OUT waits bigint)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'ps_tables_internal' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 10;
COMMENT ON FUNCTION hopper.ps_tables_internal() IS
'the parameter tables of this database, read from shared memory (used by the view hopper.ps_tables)';

CREATE VIEW hopper.ps_tables AS
SELECT t.name, t.num_keys,
       ARRAY(SELECT pg_catalog.int8range(t.key_lo[i], t.key_hi[i])
             FROM pg_catalog.generate_subscripts(t.key_lo, 1) AS i ORDER BY i) AS key_ranges,
       t.chunk_size, t.num_chunks, t.consistency, t.staleness, t.num_workers, t.min_clock, t.max_clock,
       t.memory_bytes, t.owner::regrole AS owner, t.created_at, t.get_calls, t.get_keys, t.add_calls,
       t.add_keys, t.clocks, t.waits
FROM hopper.ps_tables_internal() AS t;
COMMENT ON VIEW hopper.ps_tables IS
'parameter tables of this database: settings, slowest and fastest worker clock, shared memory used, and call/key counters since creation';

CREATE FUNCTION hopper.ps_workers_internal(OUT table_name text, OUT worker integer, OUT clock bigint,
                                           OUT status text, OUT pid integer)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'ps_workers_internal' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION hopper.ps_workers_internal() IS
'every worker of every parameter table of this database (used by the view hopper.ps_workers)';

CREATE VIEW hopper.ps_workers AS
SELECT w.table_name, w.worker, w.clock, w.status, w.pid FROM hopper.ps_workers_internal() AS w;
COMMENT ON VIEW hopper.ps_workers IS
'each worker''s clock and status: ''not joined'' (no session used it yet), ''active'' (bound to the session with process id pid) or ''gone'' (its session ended; a new session may take it over)';

CREATE FUNCTION hopper.ps_memory(OUT memory_bytes bigint, OUT used_bytes bigint, OUT largest_free_bytes bigint,
                                 OUT max_tables integer, OUT tables integer)
RETURNS record AS 'MODULE_PATHNAME', 'ps_memory' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.ps_memory() IS
'shared memory for parameter tables (hopper.ps_memory_mb): size, bytes in use and largest free block; table slots (hopper.ps_max_tables) and tables in use, over all databases';

-- Checkpoints of parameter tables are generic checkpoints of the registry (40_registry.sql):
-- a row in hopper.checkpoints with format 'hopper_ps_v1', steps_completed = the slowest worker's
-- clock and the table's settings and clocks in metadata->'parameter_table', and the serialized
-- table (include/hopper/ps.h) in hopper.checkpoint_chunks.
CREATE FUNCTION hopper.ps_save(name text, metadata jsonb DEFAULT '{}') RETURNS uuid
AS 'MODULE_PATHNAME', 'ps_save' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_save(text, jsonb) IS
'saves parameter table name (values, BSP pending Adds, each worker''s clock, settings), as one consistent snapshot, as a COMPLETED checkpoint in hopper.checkpoints (format hopper_ps_v1; metadata plus the table''s facts under "parameter_table") and returns its uuid; the rows are written in the calling transaction';

CREATE FUNCTION hopper.ps_restore(checkpoint uuid, name text DEFAULT NULL) RETURNS text
AS 'MODULE_PATHNAME', 'ps_restore' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_restore(uuid, text) IS
'creates a parameter table (named name, or as saved) from a checkpoint written by hopper.ps_save: same settings, values, pending BSP Adds and worker clocks, all workers not joined; returns its name';
