CREATE OR REPLACE FUNCTION hopper.delete_checkpoints(checkpoints uuid[])
RETURNS bigint
AS 'MODULE_PATHNAME', 'delete_checkpoints' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.delete_checkpoints(uuid[]) IS
'deletes checkpoints (all or none): stored ones become DELETED and lose their payload, external ones become DELETING; refuses checkpoints registered as model versions; returns how many changed state';
