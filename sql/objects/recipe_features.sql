CREATE OR REPLACE FUNCTION hopper.recipe_features(recipe text, numbers double precision[], texts text[])
RETURNS real[]
AS 'MODULE_PATHNAME', 'recipe_features' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.recipe_features(text, double precision[], text[]) IS
'the features of a raw row by a feature recipe (a packed table''s or model''s feature_recipe): numbers are its numeric, boolean and date columns (dates as days since 1970-01-01) in recipe order, texts its categorical ones; preprocess and predict encode rows through it';
