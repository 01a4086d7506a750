CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features real[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.predict_value(text, real[], integer, text) IS
'the outputs of a regressor for one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was';
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features double precision[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.predict_value(text, double precision[], integer, text) IS
'the outputs of a regressor for one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was';
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features record, version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.predict_value(text, record, integer, text) IS
'the outputs of a regressor of a table''s row (SELECT hopper.predict_value(''name'', t) FROM t) with a registered model version trained on that table''s own columns (by number, by alias, or the latest): the row is encoded by the model''s feature recipe, as hopper.predict encodes it';
