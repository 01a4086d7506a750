ALTER TABLE hopper.run_records ENABLE ROW LEVEL SECURITY;
CREATE POLICY runs_read ON hopper.run_records FOR SELECT USING (true);
CREATE POLICY runs_owner ON hopper.run_records USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));
