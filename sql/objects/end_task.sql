CREATE OR REPLACE FUNCTION hopper.end_task(task_id bigint, state text DEFAULT 'COMPLETED')
RETURNS void
AS 'MODULE_PATHNAME', 'end_task' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.end_task(bigint, text) IS
'marks an ACTIVE task COMPLETED, ERROR or CANCELED and records its end time';
