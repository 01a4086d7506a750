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

CREATE FUNCTION hopper.evaluate_models_sums_final(internal) RETURNS double precision[]
AS 'MODULE_PATHNAME', 'evaluate_models_sums_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_sums_final(internal) IS
'final function of hopper.evaluate_models_sums: per model, its number of metrics, the row count, the loss sum and the metric sums';

-- No serial functions, on purpose: its partial states never cross processes, so PostgreSQL runs each
-- segment (GROUP BY dist_key) as one whole aggregate in one process, and hopper adds the segments'
-- exact sums up (a parallel scan shared a segment's few heap pages between processes unevenly).
CREATE AGGREGATE hopper.evaluate_models_sums(model_states bytea[], independent_var real[], dependent_var real[]) (
    SFUNC = hopper.evaluate_models_transition,
    STYPE = internal,
    COMBINEFUNC = hopper.evaluate_models_combine,
    FINALFUNC = hopper.evaluate_models_sums_final,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hopper.evaluate_models_sums(bytea[], real[], real[]) IS
'hopper.evaluate_models as exact sums that merge across segments: for each model in order, its number of metrics k, row count, loss sum and k metric sums';

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
