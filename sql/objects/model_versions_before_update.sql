CREATE OR REPLACE FUNCTION hopper.model_versions_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NEW.model_id <> OLD.model_id OR NEW.version <> OLD.version OR NEW.checkpoint_id <> OLD.checkpoint_id THEN
        RAISE EXCEPTION 'the model, number and checkpoint of a model version cannot be changed'
            USING ERRCODE = 'generated_always',
            HINT = 'Register the checkpoint as a new version instead.';
    END IF;
    NEW.last_updated_time := now();
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_before_update() IS
'trigger: keeps the model, number and checkpoint of a version fixed and records the update time';
CREATE OR REPLACE TRIGGER model_versions_before_update BEFORE UPDATE ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_before_update();
