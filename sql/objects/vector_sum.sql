-- vector_sum: the plain numeric example (float8 vectors of one length; compensated sums).

CREATE OR REPLACE FUNCTION hopper.vector_sum_add(internal, double precision[]) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_add' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_add(internal, double precision[]) IS
'transition function of hopper.vector_sum and vector_sum_partial: adds one vector (NULL vectors are skipped)';

CREATE OR REPLACE FUNCTION hopper.vector_sum_merge(internal, bytea) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_merge' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_merge(internal, bytea) IS
'transition function of hopper.vector_sum_intermediate and vector_sum_final: merges one serialized state (NULL states are skipped)';

CREATE OR REPLACE FUNCTION hopper.vector_sum_combine(internal, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_combine' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_combine(internal, internal) IS
'combine function of the vector_sum aggregates: merges two partial states';

CREATE OR REPLACE FUNCTION hopper.vector_sum_serialize(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'vector_sum_serialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_serialize(internal) IS
'serialize function of the vector_sum aggregates, and final function of vector_sum_partial and vector_sum_intermediate';

CREATE OR REPLACE FUNCTION hopper.vector_sum_deserialize(bytea, internal) RETURNS internal
AS 'MODULE_PATHNAME', 'vector_sum_deserialize' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_deserialize(bytea, internal) IS
'deserialize function of the vector_sum aggregates (checks the state: kind, length, checksum)';

CREATE OR REPLACE FUNCTION hopper.vector_sum_finish(internal) RETURNS hopper.vector_total
AS 'MODULE_PATHNAME', 'vector_sum_finish' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.vector_sum_finish(internal) IS
'final function of hopper.vector_sum and vector_sum_final: count, sum and mean';

CREATE OR REPLACE AGGREGATE hopper.vector_sum(x double precision[]) (
    SFUNC = hopper.vector_sum_add, STYPE = internal, FINALFUNC = hopper.vector_sum_finish,
    COMBINEFUNC = hopper.vector_sum_combine, SERIALFUNC = hopper.vector_sum_serialize,
    DESERIALFUNC = hopper.vector_sum_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.vector_sum(double precision[]) IS
'count, element-wise sum and mean of float8 vectors of one length (two-level form: rows -> result); NULL vectors are skipped, non-finite elements refused';

CREATE OR REPLACE AGGREGATE hopper.vector_sum_partial(x double precision[]) (
    SFUNC = hopper.vector_sum_add, STYPE = internal, FINALFUNC = hopper.vector_sum_serialize,
    COMBINEFUNC = hopper.vector_sum_combine, SERIALFUNC = hopper.vector_sum_serialize,
    DESERIALFUNC = hopper.vector_sum_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.vector_sum_partial(double precision[]) IS
'partial level of hopper.vector_sum: rows -> serialized state (one per segment)';

CREATE OR REPLACE AGGREGATE hopper.vector_sum_intermediate(state bytea) (
    SFUNC = hopper.vector_sum_merge, STYPE = internal, FINALFUNC = hopper.vector_sum_serialize,
    COMBINEFUNC = hopper.vector_sum_combine, SERIALFUNC = hopper.vector_sum_serialize,
    DESERIALFUNC = hopper.vector_sum_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.vector_sum_intermediate(bytea) IS
'intermediate level of hopper.vector_sum: states -> one serialized state (one per node group)';

CREATE OR REPLACE AGGREGATE hopper.vector_sum_final(state bytea) (
    SFUNC = hopper.vector_sum_merge, STYPE = internal, FINALFUNC = hopper.vector_sum_finish,
    COMBINEFUNC = hopper.vector_sum_combine, SERIALFUNC = hopper.vector_sum_serialize,
    DESERIALFUNC = hopper.vector_sum_deserialize, PARALLEL = SAFE);
COMMENT ON AGGREGATE hopper.vector_sum_final(bytea) IS
'final level of hopper.vector_sum: states -> count, sum and mean';
