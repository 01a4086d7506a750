CREATE OR REPLACE FUNCTION hopper.predict(model_table text, source_table text, id_column text, independent_varname text,
                               output_table text, pred_type text DEFAULT 'response', mst_key integer DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'predict' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.predict(text, text, text, text, text, text, integer) IS
'scores the raw rows of source_table with a trained model (scaled as the training data was) into output_table: the predicted class or value, and with pred_type prob the class probabilities';
