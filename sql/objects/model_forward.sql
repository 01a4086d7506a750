CREATE OR REPLACE FUNCTION hopper.model_forward(model_state bytea, features double precision[],
                                     normalizing_const double precision DEFAULT 1.0,
                                     feature_center real[] DEFAULT NULL, feature_spread real[] DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'model_forward' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_forward(bytea, double precision[], double precision, real[], real[]) IS
'output of a model for one row of raw features (scaled as (x / normalizing_const - center) / spread): class probabilities or regression values';
