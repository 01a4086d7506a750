CREATE OR REPLACE FUNCTION hopper.checkpoint_state(checkpoint uuid)
RETURNS bytea
AS 'MODULE_PATHNAME', 'checkpoint_state' LANGUAGE C STABLE STRICT;
COMMENT ON FUNCTION hopper.checkpoint_state(uuid) IS
'the model state stored in a checkpoint, reassembled from its chunks and checked against its size and sha256';
