CREATE OR REPLACE FUNCTION hopper.evaluate(model_table text, packed_table text, mst_key integer DEFAULT NULL)
RETURNS SETOF hopper.evaluation
AS 'MODULE_PATHNAME', 'evaluate' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.evaluate(text, text, integer) IS
'loss and metrics of the models in model_table (or the one with mst_key) on a packed table, or, for a model trained on a table''s own columns, on the raw rows of a table of the same shape (packed by the model''s recipe into a temporary table, so VOLATILE)';
