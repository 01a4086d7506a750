CREATE OR REPLACE FUNCTION hopper.recipe_features(recipe text, numbers double precision[], texts text[])
RETURNS real[]
AS 'MODULE_PATHNAME', 'recipe_features' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.recipe_features(text, double precision[], text[]) IS
'the features of a raw row by a feature recipe (a packed table''s or model''s feature_recipe): numbers are its numeric, boolean and date columns (dates as days since 1970-01-01) in recipe order, texts its categorical ones; preprocess and predict encode rows through it';
-- The recipe as the summaries and model tables keep it (jsonb), so that the README's one-liner
-- SELECT hopper.recipe_features(s.feature_recipe, ...) FROM ..._summary s needs no cast.
CREATE OR REPLACE FUNCTION hopper.recipe_features(recipe jsonb, numbers double precision[], texts text[])
RETURNS real[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT hopper.recipe_features(recipe::pg_catalog.text, numbers, texts);
END;
COMMENT ON FUNCTION hopper.recipe_features(jsonb, double precision[], text[]) IS
'hopper.recipe_features(text, double precision[], text[]) with the recipe as summaries keep it (jsonb)';
-- A recipe with array columns (arrays of numbers beside other columns): their values end to end in
-- recipe order, and each one's length (NULL for a NULL array).
CREATE OR REPLACE FUNCTION hopper.recipe_features(recipe text, numbers double precision[], texts text[],
                                                  arrays real[], array_lengths integer[])
RETURNS real[]
AS 'MODULE_PATHNAME', 'recipe_features' LANGUAGE C IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.recipe_features(text, double precision[], text[], real[], integer[]) IS
'the features of a raw row by a feature recipe that has array columns: numbers and texts as in the three-argument form, arrays the row''s array columns end to end in recipe order (as real[]), array_lengths their lengths (NULL for a NULL array)';
CREATE OR REPLACE FUNCTION hopper.recipe_features(recipe jsonb, numbers double precision[], texts text[],
                                                  arrays real[], array_lengths integer[])
RETURNS real[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
    SELECT hopper.recipe_features(recipe::pg_catalog.text, numbers, texts, arrays, array_lengths);
END;
COMMENT ON FUNCTION hopper.recipe_features(jsonb, double precision[], text[], real[], integer[]) IS
'hopper.recipe_features(text, double precision[], text[], real[], integer[]) with the recipe as summaries keep it (jsonb)';
