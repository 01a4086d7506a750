ALTER TABLE hopper.trial_metrics ENABLE ROW LEVEL SECURITY;
CREATE POLICY trial_metrics_read ON hopper.trial_metrics FOR SELECT USING (true);
CREATE POLICY trial_metrics_owner ON hopper.trial_metrics
    USING (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.tasks t WHERE t.task_id = trial_id AND hopper.may_modify(t.owner)));
