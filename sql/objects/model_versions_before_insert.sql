CREATE OR REPLACE FUNCTION hopper.model_versions_before_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    assigned integer;
    m record;
BEGIN
    -- Restoring a dump (a superuser with hopper.restoring on): the row is taken as it was dumped --
    -- its number, and its model's counter, were dumped with them. (Its checkpoint, restored before
    -- it and COMPLETED as every registered one is, is still checked by model_versions_lock_checkpoint.)
    IF current_setting('hopper.restoring', true) = 'on'
       AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
        RETURN NEW;
    END IF;
    -- Takes the model's row lock: concurrent registrations of one model queue here and get
    -- consecutive numbers; an archive committed meanwhile is seen by the re-check of NOT archived.
    UPDATE hopper.models SET next_version = next_version + 1, last_updated_time = now()
    WHERE model_id = NEW.model_id AND NOT archived
    RETURNING next_version - 1 INTO assigned;
    IF NOT FOUND THEN
        SELECT name, archived, owner INTO m FROM hopper.models WHERE model_id = NEW.model_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'model with id % does not exist', NEW.model_id USING ERRCODE = 'undefined_object';
        ELSIF m.archived THEN
            RAISE EXCEPTION 'model "%" is archived', m.name USING ERRCODE = 'object_not_in_prerequisite_state',
                DETAIL = 'An archived model accepts no new versions.',
                HINT = 'Unarchive it with hopper.unarchive_model first.';
        ELSE
            RAISE EXCEPTION 'permission denied for model "%"', m.name USING ERRCODE = 'insufficient_privilege',
                DETAIL = format('It belongs to role %s.', m.owner),
                HINT = format('Ask for membership in role %s.', m.owner);
        END IF;
    END IF;
    IF NEW.version IS NOT NULL AND NEW.version <> assigned THEN
        RAISE EXCEPTION 'version numbers are assigned by hopper' USING ERRCODE = 'generated_always',
            DETAIL = format('The next version of this model is %s; %s was given.', assigned, NEW.version),
            HINT = 'Leave out the version column, or use hopper.register_model_version. To restore a dump, run pg_restore with PGOPTIONS=''-c hopper.restoring=on'' as a superuser.';
    END IF;
    NEW.version := assigned;
    NEW.creation_time := now();
    NEW.last_updated_time := now();
    -- The checkpoint's row lock is taken next, as hopper's owner, by model_versions_lock_checkpoint.
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_before_insert() IS
'trigger: numbers a new model version from the model''s counter under its row lock (refusing archived models); model_versions_lock_checkpoint, which fires after it, takes the checkpoint''s row lock';
CREATE OR REPLACE TRIGGER model_versions_before_insert BEFORE INSERT ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_before_insert();
