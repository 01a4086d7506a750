ALTER TABLE hopper.model_alias_history ENABLE ROW LEVEL SECURITY;
CREATE POLICY model_alias_history_read ON hopper.model_alias_history FOR SELECT USING (true);
-- A row names the role adding it, now, about a model that role may change, under that model's name:
-- what the triggers write. (A row naming another model, say, or a time to come, would read in the
-- history of that name as a change nobody made.)
CREATE POLICY model_alias_history_insert ON hopper.model_alias_history FOR INSERT
    WITH CHECK (changed_by OPERATOR(pg_catalog.=) CURRENT_USER
                AND change_time OPERATOR(pg_catalog.=) pg_catalog.now()
                AND EXISTS (SELECT 1 FROM hopper.models m
                            WHERE m.model_id OPERATOR(pg_catalog.=) model_alias_history.model_id
                              AND m.name OPERATOR(pg_catalog.=) model_alias_history.model_name
                              AND hopper.may_modify(m.owner)));
