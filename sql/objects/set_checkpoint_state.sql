CREATE OR REPLACE FUNCTION hopper.set_checkpoint_state(checkpoint uuid, state text)
RETURNS void
AS 'MODULE_PATHNAME', 'set_checkpoint_state' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION hopper.set_checkpoint_state(uuid, text) IS
'moves a checkpoint along its life cycle: ACTIVE to COMPLETED or ERROR, COMPLETED to ERROR, DELETING to DELETED or PARTIALLY_DELETED, PARTIALLY_DELETED to DELETED';
