ALTER TABLE hopper.models ENABLE ROW LEVEL SECURITY;
CREATE POLICY models_read ON hopper.models FOR SELECT USING (true);
CREATE POLICY models_owner ON hopper.models USING (hopper.may_modify(owner)) WITH CHECK (hopper.may_modify(owner));
