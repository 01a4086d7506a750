ALTER TABLE hopper.checkpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoints_read ON hopper.checkpoints FOR SELECT USING (true);
CREATE POLICY checkpoints_insert ON hopper.checkpoints FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND (task_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = checkpoints.task_id
                                AND hopper.may_modify(t.owner))));
-- Registering someone else's checkpoint rewrites its row unchanged (to lock it); the trigger refuses any change.
CREATE POLICY checkpoints_update ON hopper.checkpoints FOR UPDATE USING (true) WITH CHECK (true);
CREATE POLICY checkpoints_delete ON hopper.checkpoints FOR DELETE USING (hopper.may_modify(owner));
