CREATE OR REPLACE FUNCTION hopper.evaluate_models_transition(internal, bytea[], real[], real[]) RETURNS internal
AS 'MODULE_PATHNAME', 'evaluate_models_transition' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100000;
COMMENT ON FUNCTION hopper.evaluate_models_transition(internal, bytea[], real[], real[]) IS
'transition function of hopper.evaluate_models: adds one packed buffer''s loss and metric sums for every model';

CREATE OR REPLACE FUNCTION hopper.evaluate_models_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'evaluate_models_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_combine(internal, internal) IS
'combine function of hopper.evaluate_models: adds two partial states';

CREATE OR REPLACE FUNCTION hopper.evaluate_models_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'evaluate_models_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_serialize(internal) IS
'serialize function of hopper.evaluate_models';

CREATE OR REPLACE FUNCTION hopper.evaluate_models_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'evaluate_models_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_deserialize(bytea, internal) IS
'deserialize function of hopper.evaluate_models';

CREATE OR REPLACE FUNCTION hopper.evaluate_models_final(internal) RETURNS double precision[]
AS 'MODULE_PATHNAME', 'evaluate_models_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_final(internal) IS
'final function of hopper.evaluate_models: per model, the row count, loss and metrics';

CREATE OR REPLACE AGGREGATE hopper.evaluate_models(model_states bytea[], independent_var real[], dependent_var real[]) (
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

CREATE OR REPLACE FUNCTION hopper.evaluate_models_sums_final(internal) RETURNS double precision[]
AS 'MODULE_PATHNAME', 'evaluate_models_sums_final' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.evaluate_models_sums_final(internal) IS
'final function of hopper.evaluate_models_sums: per model, its number of metrics, the row count, the loss sum and the metric sums';

-- No serial functions, on purpose: its partial states never cross processes, so PostgreSQL runs each
-- segment (GROUP BY dist_key) as one whole aggregate in one process, and hopper adds the segments'
-- exact sums up (a parallel scan shared a segment's few heap pages between processes unevenly).
CREATE OR REPLACE AGGREGATE hopper.evaluate_models_sums(model_states bytea[], independent_var real[], dependent_var real[]) (
    SFUNC = hopper.evaluate_models_transition,
    STYPE = internal,
    COMBINEFUNC = hopper.evaluate_models_combine,
    FINALFUNC = hopper.evaluate_models_sums_final,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hopper.evaluate_models_sums(bytea[], real[], real[]) IS
'hopper.evaluate_models as exact sums that merge across segments: for each model in order, its number of metrics k, row count, loss sum and k metric sums';
