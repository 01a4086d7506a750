-- Using trained models: evaluation, prediction, looking into model states.

CREATE TYPE hopper.evaluation AS (mst_key integer, loss double precision, metrics jsonb, row_count bigint);
COMMENT ON TYPE hopper.evaluation IS 'loss and metrics of one model on one data set';

CREATE FUNCTION hopper.evaluate(model_table text, packed_table text, mst_key integer DEFAULT NULL)
RETURNS SETOF hopper.evaluation
AS 'MODULE_PATHNAME', 'evaluate' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.evaluate(text, text, integer) IS
'loss and metrics of the models in model_table (or the one with mst_key) on a packed table';

CREATE FUNCTION hopper.model_forward(model_state bytea, features double precision[],
                                     normalizing_const double precision DEFAULT 1.0,
                                     feature_center real[] DEFAULT NULL, feature_spread real[] DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'model_forward' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_forward(bytea, double precision[], double precision, real[], real[]) IS
'output of a model for one row of raw features (scaled as (x / normalizing_const - center) / spread): class probabilities or regression values';

CREATE FUNCTION hopper.argmax(x real[]) RETURNS integer
AS 'MODULE_PATHNAME', 'argmax' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.argmax(real[]) IS '1-based position of the largest value (the first one on ties)';

CREATE FUNCTION hopper.predict(model_table text, source_table text, id_column text, independent_varname text,
                               output_table text, pred_type text DEFAULT 'response', mst_key integer DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'predict' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.predict(text, text, text, text, text, text, integer) IS
'scores the raw rows of source_table with a trained model (scaled as the training data was) into output_table: the predicted class or value, and with pred_type prob the class probabilities';

CREATE FUNCTION hopper.model_state_info(model_state bytea) RETURNS jsonb
AS 'MODULE_PATHNAME', 'model_state_info' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_state_info(bytea) IS
'what a model state holds: configuration, layer sizes, parameter count, training counters, checksum';

CREATE FUNCTION hopper.model_weights(model_state bytea) RETURNS real[]
AS 'MODULE_PATHNAME', 'model_weights' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.model_weights(bytea) IS
'all parameters of a model state, layer by layer: weights (units x inputs, column-major) then biases';
