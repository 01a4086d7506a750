CREATE OR REPLACE FUNCTION hopper.model_aliases_history() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    model_name text;
    from_v integer;
    to_v integer;
    mid bigint := CASE TG_OP WHEN 'DELETE' THEN OLD.model_id ELSE NEW.model_id END;
BEGIN
    -- A restored dump brings its history with it.
    -- Only a superuser restores (a placeholder of the setting, which any role may set where hopper's
    -- library is not loaded yet, would otherwise let a change go unrecorded).
    IF current_setting('hopper.restoring', true) = 'on'
       AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
        RETURN NULL;
    END IF;
    SELECT m.name INTO model_name FROM hopper.models m WHERE m.model_id = mid;
    -- The model is being deleted, and its aliases with it.
    IF NOT FOUND THEN RETURN NULL; END IF;
    IF TG_OP <> 'INSERT' THEN
        SELECT v.version INTO from_v FROM hopper.model_versions v WHERE v.version_id = OLD.version_id;
        -- The alias goes with its version: hopper.model_versions_alias_history recorded that.
        IF NOT FOUND THEN RETURN NULL; END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        SELECT v.version INTO to_v FROM hopper.model_versions v WHERE v.version_id = NEW.version_id;
    END IF;
    -- Set to the version it already names: no move.
    IF TG_OP = 'UPDATE' AND from_v = to_v THEN RETURN NULL; END IF;
    INSERT INTO hopper.model_alias_history (model_id, model_name, alias, from_version, to_version)
    VALUES (mid, model_name, CASE TG_OP WHEN 'DELETE' THEN OLD.alias ELSE NEW.alias END, from_v, to_v);
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION hopper.model_aliases_history() IS
'trigger: records every creation, move and deletion of a model alias in hopper.model_alias_history';
CREATE OR REPLACE TRIGGER model_aliases_history AFTER INSERT OR UPDATE OR DELETE ON hopper.model_aliases
    FOR EACH ROW EXECUTE FUNCTION hopper.model_aliases_history();
