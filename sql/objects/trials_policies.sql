ALTER TABLE hopper.trials ENABLE ROW LEVEL SECURITY;
CREATE POLICY trials_read ON hopper.trials FOR SELECT USING (true);
CREATE POLICY trials_owner ON hopper.trials
    USING (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner))
                AND EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = trials.run_id AND hopper.may_modify(r.owner)));
