-- One overload per numeric array type preprocess packs (is_numeric_array_type: a real[], float8[],
-- smallint[] or bigint[] column, integer[] as ARRAY[1, 2, 3] writes it, numeric[] as ARRAY[5.1, 3.5]):
-- with only some, PostgreSQL cannot choose between them ("is not unique"). An
-- untyped literal ('{1,2,3}') still needs a cast, as for any overloaded function. COST: a forward
-- pass costs about a thousand simple operators, so the planner scores large scans in parallel workers.
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features real[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION hopper.predict_value(text, real[], integer, text) IS
'the outputs of a regressor for one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was';
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features double precision[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION hopper.predict_value(text, double precision[], integer, text) IS
'the outputs of a regressor for one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was';
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features integer[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION hopper.predict_value(text, integer[], integer, text) IS
'the outputs of a regressor for one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was (integer features, as ARRAY[1, 2, 3] writes them)';
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features smallint[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION hopper.predict_value(text, smallint[], integer, text) IS
'the outputs of a regressor for one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was (smallint features, as a smallint[] column holds them)';
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features bigint[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION hopper.predict_value(text, bigint[], integer, text) IS
'the outputs of a regressor for one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was (bigint features, as a bigint[] column holds them)';
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features numeric[], version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION hopper.predict_value(text, numeric[], integer, text) IS
'the outputs of a regressor for one row of raw features with a registered model version (by number, by alias, or the latest), scaled as its training data was (decimal features, as ARRAY[5.1, 3.5] writes them)';
CREATE OR REPLACE FUNCTION hopper.predict_value(model_name text, features record, version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS real[]
AS 'MODULE_PATHNAME', 'predict_value' LANGUAGE C STABLE PARALLEL SAFE COST 1000;
COMMENT ON FUNCTION hopper.predict_value(text, record, integer, text) IS
'the outputs of a regressor of a table''s row (SELECT hopper.predict_value(''name'', t) FROM t) with a registered model version trained on that table''s own columns (by number, by alias, or the latest): the row is encoded by the model''s feature recipe, as hopper.predict encodes it';
