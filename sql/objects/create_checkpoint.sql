CREATE OR REPLACE FUNCTION hopper.create_checkpoint(model_state bytea, task_id bigint DEFAULT NULL,
                                         steps_completed bigint DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                         resources jsonb DEFAULT '{}')
RETURNS uuid
AS 'MODULE_PATHNAME', 'create_checkpoint' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_checkpoint(bytea, bigint, bigint, jsonb, jsonb) IS
'stores a model state as a COMPLETED checkpoint (checked, chunked, with size and sha256) and returns its uuid; steps_completed defaults to the state''s step counter; metadata may carry {"data": {...}} so that the checkpoint can be used by predict';
