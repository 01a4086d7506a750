ALTER TABLE hopper.model_aliases ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_aliases_read ON hopper.model_aliases FOR SELECT USING (true);
CREATE POLICY model_aliases_insert ON hopper.model_aliases FOR INSERT
    WITH CHECK (hopper.may_modify(owner)
                AND EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id
                            AND hopper.may_modify(m.owner)));
CREATE POLICY model_aliases_update ON hopper.model_aliases FOR UPDATE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)));
CREATE POLICY model_aliases_delete ON hopper.model_aliases FOR DELETE
    USING (EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_aliases.model_id AND hopper.may_modify(m.owner)));
