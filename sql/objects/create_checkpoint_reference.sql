CREATE OR REPLACE FUNCTION hopper.create_checkpoint_reference(uri text, format text, size_bytes bigint DEFAULT NULL,
                                                   checksum text DEFAULT NULL, task_id bigint DEFAULT NULL,
                                                   steps_completed bigint DEFAULT NULL, metadata jsonb DEFAULT '{}',
                                                   resources jsonb DEFAULT '{}', state text DEFAULT 'COMPLETED')
RETURNS uuid
AS 'MODULE_PATHNAME', 'create_checkpoint_reference' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_checkpoint_reference(text, text, bigint, text, bigint, bigint, jsonb, jsonb, text) IS
'records a checkpoint stored outside the database (uri) and returns its uuid';
