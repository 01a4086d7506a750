-- model_average: the weighted mean of model states (parameters and optimizer slots), exact.

CREATE OR REPLACE FUNCTION hopper.model_average_add(internal, bytea, bigint) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_add(internal, bytea, bigint) IS
'transition function of hopper.model_average and model_average_partial: adds a model state with its weight (NULL states are skipped)';

CREATE OR REPLACE FUNCTION hopper.model_average_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_merge(internal, bytea) IS
'transition function of hopper.model_average_intermediate and model_average_final: merges one serialized averaging state (NULL states are skipped)';

CREATE OR REPLACE FUNCTION hopper.model_average_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_combine(internal, internal) IS
'combine function of the model_average aggregates: adds two averaging states (exact, order-independent)';

CREATE OR REPLACE FUNCTION hopper.model_average_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'model_average_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_serialize(internal) IS
'serialize function of the model_average aggregates, and final function of model_average_partial and model_average_intermediate';

CREATE OR REPLACE FUNCTION hopper.model_average_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'model_average_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_deserialize(bytea, internal) IS
'deserialize function of the model_average aggregates (checks the state: kind, sizes, configuration, checksum)';

CREATE OR REPLACE FUNCTION hopper.model_average_finish(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'model_average_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_average_finish(internal) IS
'final function of hopper.model_average and model_average_final: the averaged model state';

CREATE OR REPLACE AGGREGATE hopper.model_average(model_state bytea, weight bigint) (
    SFUNC = hopper.model_average_add, STYPE = internal, FINALFUNC = hopper.model_average_finish,
    COMBINEFUNC = hopper.model_average_combine, SERIALFUNC = hopper.model_average_serialize,
    DESERIALFUNC = hopper.model_average_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.model_average(bytea, bigint) IS
'weighted mean (weights: rows) of model states of one configuration, parameters and optimizer slots alike, computed exactly (the same bytes in any order); two-level form: rows -> averaged model state';

CREATE OR REPLACE AGGREGATE hopper.model_average_partial(model_state bytea, weight bigint) (
    SFUNC = hopper.model_average_add, STYPE = internal, FINALFUNC = hopper.model_average_serialize,
    COMBINEFUNC = hopper.model_average_combine, SERIALFUNC = hopper.model_average_serialize,
    DESERIALFUNC = hopper.model_average_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.model_average_partial(bytea, bigint) IS
'partial level of hopper.model_average: model states and weights -> serialized averaging state (one per segment; 16 bytes per value)';

CREATE OR REPLACE AGGREGATE hopper.model_average_intermediate(state bytea) (
    SFUNC = hopper.model_average_merge, STYPE = internal, FINALFUNC = hopper.model_average_serialize,
    COMBINEFUNC = hopper.model_average_combine, SERIALFUNC = hopper.model_average_serialize,
    DESERIALFUNC = hopper.model_average_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.model_average_intermediate(bytea) IS
'intermediate level of hopper.model_average: averaging states -> one averaging state (one per node group)';

CREATE OR REPLACE AGGREGATE hopper.model_average_final(state bytea) (
    SFUNC = hopper.model_average_merge, STYPE = internal, FINALFUNC = hopper.model_average_finish,
    COMBINEFUNC = hopper.model_average_combine, SERIALFUNC = hopper.model_average_serialize,
    DESERIALFUNC = hopper.model_average_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.model_average_final(bytea) IS
'final level of hopper.model_average: averaging states -> the averaged model state';
