CREATE OR REPLACE FUNCTION hopper.export_onnx(model_name text, version integer DEFAULT NULL, alias text DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'export_onnx' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.export_onnx(text, integer, text) IS
'a registered model version (by number, by alias, or the latest) as an ONNX model (opset 13): input "input" is the raw feature row (images channels-last), scaled inside the graph as its training data was; output "output" the model''s outputs; class names in metadata_props (class_values)';
CREATE OR REPLACE FUNCTION hopper.export_onnx(checkpoint uuid)
RETURNS bytea
AS 'MODULE_PATHNAME', 'export_onnx' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION hopper.export_onnx(uuid) IS
'the model state of a checkpoint as an ONNX model (opset 13), with the input scaling and class names of the data it was trained on when the checkpoint records them';
