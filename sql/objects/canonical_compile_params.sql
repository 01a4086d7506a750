CREATE OR REPLACE FUNCTION hopper.canonical_compile_params(compile_params text) RETURNS jsonb
AS 'MODULE_PATHNAME', 'canonical_compile_params' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.canonical_compile_params(text) IS
'compile parameters (Keras/MADlib text or JSON) as the canonical JSON hopper stores and compares: texts of the same meaning (spaces, order, aliases) give the same; invalid ones are refused as fit refuses them';
