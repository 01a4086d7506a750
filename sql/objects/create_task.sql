CREATE OR REPLACE FUNCTION hopper.create_task(task_type text, description text DEFAULT NULL, metadata jsonb DEFAULT '{}')
RETURNS bigint
AS 'MODULE_PATHNAME', 'create_task' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.create_task(text, text, jsonb) IS
'records a task that will write checkpoints (task_type such as IMPORT or FINE_TUNE) and returns its task_id';
