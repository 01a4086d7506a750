ALTER TABLE hopper.model_alias_history ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_alias_history_read ON hopper.model_alias_history FOR SELECT USING (true);
-- A row names the role adding it, about a model that role may change.
CREATE POLICY model_alias_history_insert ON hopper.model_alias_history FOR INSERT
    WITH CHECK (changed_by = CURRENT_USER
                AND EXISTS (SELECT 1 FROM hopper.models m WHERE m.model_id = model_alias_history.model_id
                            AND hopper.may_modify(m.owner)));
