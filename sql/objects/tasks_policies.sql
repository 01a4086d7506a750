ALTER TABLE hopper.tasks ENABLE ROW LEVEL SECURITY;
CREATE POLICY tasks_read ON hopper.tasks FOR SELECT USING (true);
CREATE POLICY tasks_owner ON hopper.tasks USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));
