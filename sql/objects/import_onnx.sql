CREATE OR REPLACE FUNCTION hopper.import_onnx(model_arch_table text, onnx bytea, name text DEFAULT NULL)
RETURNS integer
AS 'MODULE_PATHNAME', 'import_onnx' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.import_onnx(text, bytea, text) IS
'adds the architecture and weights of an ONNX model (hopper''s layer vocabulary, e.g. torch.onnx.export of a Sequential of Linear, Conv2d, pooling, Flatten, BatchNorm and activations) to model_arch_table as hopper.load_model_arch does, and returns its model_id: a starting point for fit and fit_multiple (warm start, transfer learning); NCHW image inputs become channels-last [height, width, channels] rows';
