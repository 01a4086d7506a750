ALTER TABLE hopper.checkpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoints_read ON hopper.checkpoints FOR SELECT USING (true);
CREATE POLICY checkpoints_insert ON hopper.checkpoints FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND (task_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = checkpoints.task_id
                                AND hopper.may_modify(t.owner))));
-- The owner's alone, and so are row locks (SELECT ... FOR UPDATE/SHARE applies this policy): open to
-- every role, one SELECT ... FOR UPDATE in an open transaction locked every role's checkpoints.
-- Registering another role's checkpoint locks its row as hopper's owner (model_versions_lock_checkpoint).
CREATE POLICY checkpoints_update ON hopper.checkpoints FOR UPDATE
    USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));
CREATE POLICY checkpoints_delete ON hopper.checkpoints FOR DELETE USING (hopper.may_modify(owner));
