ALTER TABLE hopper.model_versions ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_versions_read ON hopper.model_versions FOR SELECT USING (true);
CREATE POLICY model_versions_insert ON hopper.model_versions FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id
                            AND hopper.may_modify(m.owner)));
CREATE POLICY model_versions_update ON hopper.model_versions FOR UPDATE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)));
CREATE POLICY model_versions_delete ON hopper.model_versions FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_versions.model_id AND hopper.may_modify(m.owner)));
