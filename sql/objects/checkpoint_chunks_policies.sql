-- Chunks are written while their checkpoint is ACTIVE and removed only once it is being deleted
-- (or was never completed); a COMPLETED checkpoint's payload cannot change. No UPDATE policy: chunks
-- are immutable.
ALTER TABLE hopper.checkpoint_chunks ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoint_chunks_read ON hopper.checkpoint_chunks FOR SELECT USING (true);
CREATE POLICY checkpoint_chunks_insert ON hopper.checkpoint_chunks FOR INSERT
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_chunks.checkpoint_id
                        AND c.state = 'ACTIVE' AND hopper.may_modify(c.owner)));
CREATE POLICY checkpoint_chunks_delete ON hopper.checkpoint_chunks FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_chunks.checkpoint_id
                   AND c.state IN ('ACTIVE', 'ERROR', 'DELETING', 'DELETED', 'PARTIALLY_DELETED')
                   AND hopper.may_modify(c.owner)
                   AND NOT EXISTS (SELECT 1 FROM hopper.model_versions v WHERE v.checkpoint_id = c.checkpoint_id)));
