ALTER TABLE hopper.checkpoint_training ENABLE ROW LEVEL SECURITY;
CREATE POLICY checkpoint_training_read ON hopper.checkpoint_training FOR SELECT USING (true);
CREATE POLICY checkpoint_training_owner ON hopper.checkpoint_training
    USING (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_training.checkpoint_id
                   AND hopper.may_modify(c.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = checkpoint_training.checkpoint_id
                        AND hopper.may_modify(c.owner))
                AND EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = checkpoint_training.trial_id
                            AND hopper.may_modify(t.owner)));
