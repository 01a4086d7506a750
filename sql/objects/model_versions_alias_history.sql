CREATE OR REPLACE FUNCTION hopper.model_versions_alias_history() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    -- Only a superuser restores (a placeholder of the setting, which any role may set where hopper's
    -- library is not loaded yet, would otherwise let a change go unrecorded).
    IF current_setting('hopper.restoring', true) = 'on'
       AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
        RETURN OLD;
    END IF;
    -- Before the version goes (its aliases go with it by cascade, when its number can no longer be
    -- read); nothing when the whole model is being deleted (its row is gone already).
    INSERT INTO hopper.model_alias_history (model_id, model_name, alias, from_version, to_version)
    SELECT a.model_id, m.name, a.alias, OLD.version, NULL
    FROM hopper.model_aliases a JOIN hopper.models m ON m.model_id = a.model_id
    WHERE a.version_id = OLD.version_id;
    RETURN OLD;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_alias_history() IS
'trigger: records in hopper.model_alias_history the aliases a deleted version takes with it';
CREATE OR REPLACE TRIGGER model_versions_alias_history BEFORE DELETE ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_alias_history();
