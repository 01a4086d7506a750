CREATE OR REPLACE FUNCTION hopper.model_weights(model_state bytea) RETURNS real[]
AS 'MODULE_PATHNAME', 'model_weights' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_weights(bytea) IS
'all parameters of a model state, layer by layer: weights (units x inputs, column-major) then biases';
