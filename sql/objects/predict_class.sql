CREATE OR REPLACE FUNCTION hopper.predict_class(model_name text, features real[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'predict_class' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.predict_class(text, real[], integer, text) IS
'the predicted class (as text) of one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was';
CREATE OR REPLACE FUNCTION hopper.predict_class(model_name text, features double precision[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'predict_class' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.predict_class(text, double precision[], integer, text) IS
'the predicted class (as text) of one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was';
CREATE OR REPLACE FUNCTION hopper.predict_class(model_name text, features record, version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'predict_class' LANGUAGE C STABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.predict_class(text, record, integer, text) IS
'the predicted class (as text) of a table''s row (SELECT hopper.predict_class(''name'', t) FROM t) with a registered model version trained on that table''s own columns (by number, by alias, or the latest): the row is encoded by the model''s feature recipe, as hopper.predict encodes it';
