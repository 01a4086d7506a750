CREATE OR REPLACE FUNCTION hopper.model_state_info(model_state bytea) RETURNS jsonb
AS 'MODULE_PATHNAME', 'model_state_info' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_state_info(bytea) IS
'what a model state holds: configuration, layer sizes, parameter count, training counters, checksum';
