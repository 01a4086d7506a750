CREATE OR REPLACE FUNCTION hopper.model_versions_before_insert() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    assigned integer;
    m record;
    c record;
BEGIN
    -- Restoring a dump (a superuser with hopper.restoring on): the row is taken as it was dumped --
    -- its number, and its model's counter, were dumped with them.
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
    -- Rewrites the checkpoint's row (unchanged) under its row lock: a concurrent deletion, which
    -- locks the row before it looks for versions, either waits and then sees this one (READ
    -- COMMITTED) or fails to serialize (REPEATABLE READ); a deletion committed first is seen here.
    UPDATE hopper.checkpoints SET state = state
    WHERE checkpoint_id = NEW.checkpoint_id AND state = 'COMPLETED';
    IF NOT FOUND THEN
        SELECT uuid, state INTO c FROM hopper.checkpoints WHERE checkpoint_id = NEW.checkpoint_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'checkpoint with id % does not exist', NEW.checkpoint_id USING ERRCODE = 'undefined_object';
        END IF;
        RAISE EXCEPTION 'checkpoint % is %', c.uuid, c.state USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'Only COMPLETED checkpoints can be registered as model versions.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.model_versions_before_insert() IS
'trigger: numbers a new model version from the model''s counter under its row lock (refusing archived models) and takes the checkpoint''s row lock (refusing checkpoints that are not COMPLETED)';
CREATE OR REPLACE TRIGGER model_versions_before_insert BEFORE INSERT ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_before_insert();
