-- metrics: loss and compiled metrics of one model over packed buffers (hopper.evaluate's sums).

CREATE OR REPLACE FUNCTION hopper.metrics_add(internal, bytea, real[], real[]) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_add' LANGUAGE C IMMUTABLE PARALLEL SAFE COST 100000;
COMMENT ON FUNCTION hopper.metrics_add(internal, bytea, real[], real[]) IS
'transition function of hopper.metrics and metrics_partial: evaluates the model on one packed buffer and adds its loss and metric sums';

CREATE OR REPLACE FUNCTION hopper.metrics_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_merge(internal, bytea) IS
'transition function of hopper.metrics_intermediate and metrics_final: merges one serialized state (NULL states are skipped)';

CREATE OR REPLACE FUNCTION hopper.metrics_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_combine(internal, internal) IS
'combine function of the metrics aggregates: adds two partial states';

CREATE OR REPLACE FUNCTION hopper.metrics_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'metrics_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_serialize(internal) IS
'serialize function of the metrics aggregates, and final function of metrics_partial and metrics_intermediate';

CREATE OR REPLACE FUNCTION hopper.metrics_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'metrics_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_deserialize(bytea, internal) IS
'deserialize function of the metrics aggregates (checks the state: kind, names, checksum)';

CREATE OR REPLACE FUNCTION hopper.metrics_finish(internal) RETURNS hopper.metrics_total
AS 'MODULE_PATHNAME', 'metrics_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.metrics_finish(internal) IS
'final function of hopper.metrics and metrics_final: row count, mean loss and metrics';

CREATE OR REPLACE AGGREGATE hopper.metrics(model_state bytea, independent_var real[], dependent_var real[]) (
    SFUNC = hopper.metrics_add, STYPE = internal, FINALFUNC = hopper.metrics_finish,
    COMBINEFUNC = hopper.metrics_combine, SERIALFUNC = hopper.metrics_serialize,
    DESERIALFUNC = hopper.metrics_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.metrics(bytea, real[], real[]) IS
'loss and compiled metrics of one model (the same model_state on every row) over packed buffers; two-level form: rows -> result';

CREATE OR REPLACE AGGREGATE hopper.metrics_partial(model_state bytea, independent_var real[], dependent_var real[]) (
    SFUNC = hopper.metrics_add, STYPE = internal, FINALFUNC = hopper.metrics_serialize,
    COMBINEFUNC = hopper.metrics_combine, SERIALFUNC = hopper.metrics_serialize,
    DESERIALFUNC = hopper.metrics_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.metrics_partial(bytea, real[], real[]) IS
'partial level of hopper.metrics: packed buffers -> serialized loss and metric sums (one per segment)';

CREATE OR REPLACE AGGREGATE hopper.metrics_intermediate(state bytea) (
    SFUNC = hopper.metrics_merge, STYPE = internal, FINALFUNC = hopper.metrics_serialize,
    COMBINEFUNC = hopper.metrics_combine, SERIALFUNC = hopper.metrics_serialize,
    DESERIALFUNC = hopper.metrics_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.metrics_intermediate(bytea) IS
'intermediate level of hopper.metrics: states -> one serialized state (one per node group)';

CREATE OR REPLACE AGGREGATE hopper.metrics_final(state bytea) (
    SFUNC = hopper.metrics_merge, STYPE = internal, FINALFUNC = hopper.metrics_finish,
    COMBINEFUNC = hopper.metrics_combine, SERIALFUNC = hopper.metrics_serialize,
    DESERIALFUNC = hopper.metrics_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.metrics_final(bytea) IS
'final level of hopper.metrics: states -> row count, mean loss and metrics';
