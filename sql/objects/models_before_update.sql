-- Trigger depth proves nothing about the caller (a user's own trigger runs this one at depth 2): it
-- only keeps plain UPDATEs off next_version. Row-level security is what keeps other roles off a
-- model, so the most its owner can do is skip its own numbers; lowering it is refused at any depth.
CREATE OR REPLACE FUNCTION hopper.models_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.model_id <> OLD.model_id THEN
        RAISE EXCEPTION 'model_id of a model cannot be changed' USING ERRCODE = 'generated_always';
    END IF;
    IF NEW.next_version <> OLD.next_version AND (pg_trigger_depth() < 2 OR NEW.next_version < OLD.next_version) THEN
        RAISE EXCEPTION 'next_version of a model is maintained by hopper' USING ERRCODE = 'generated_always',
            DETAIL = 'Version numbers are never reused.';
    END IF;
    NEW.last_updated_time := now();
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.models_before_update() IS
'trigger: version numbers only go up, and only when a version is registered; records the update time';
CREATE OR REPLACE TRIGGER models_before_update BEFORE UPDATE ON hopper.models
    FOR EACH ROW EXECUTE FUNCTION hopper.models_before_update();
