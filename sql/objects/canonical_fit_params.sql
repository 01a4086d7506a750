CREATE OR REPLACE FUNCTION hopper.canonical_fit_params(fit_params text) RETURNS jsonb
AS 'MODULE_PATHNAME', 'canonical_fit_params' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.canonical_fit_params(text) IS
'fit parameters (Keras/MADlib text or JSON) as the canonical JSON hopper stores and compares: texts of the same meaning give the same; invalid ones are refused as fit refuses them';
