CREATE OR REPLACE FUNCTION hopper.checkpoints_before_update() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    used_by text;
    registered boolean;
BEGIN
    IF NEW.checkpoint_id <> OLD.checkpoint_id OR NEW.uuid <> OLD.uuid THEN
        RAISE EXCEPTION 'the id and uuid of a checkpoint cannot be changed' USING ERRCODE = 'generated_always';
    END IF;
    IF OLD.state = 'DELETED' AND NEW.state <> 'DELETED' THEN
        RAISE EXCEPTION 'checkpoint % is deleted', OLD.uuid USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'A deleted checkpoint has no payload and stays deleted.';
    END IF;
    -- Changes are the owner's. Registering rewrites another role's row unchanged (as hopper's owner:
    -- model_versions_lock_checkpoint); the policy leaves others no UPDATE but a role with BYPASSRLS.
    IF NOT hopper.may_modify(OLD.owner) AND pg_catalog.to_jsonb(NEW) IS DISTINCT FROM pg_catalog.to_jsonb(OLD) THEN
        RAISE EXCEPTION 'permission denied for checkpoint %', OLD.uuid USING ERRCODE = 'insufficient_privilege',
            DETAIL = format('It belongs to role %s.', OLD.owner);
    END IF;
    -- Read from the versions themselves (this row is locked: a registration in progress has been waited for).
    registered := EXISTS (SELECT 1 FROM hopper.model_versions v WHERE v.checkpoint_id = OLD.checkpoint_id);
    -- What a completed checkpoint is (its payload's place, size and checksum, its steps) never
    -- changes; what it says about itself (metadata, resources) is fixed once a version uses it.
    -- Otherwise its owner could make a checkpoint someone registered look corrupt, or different.
    -- (A superuser may repair them.)
    IF NOT (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER) THEN
        IF OLD.state <> 'ACTIVE' AND (NEW.format, NEW.storage, NEW.external_uri, NEW.size_bytes, NEW.checksum,
                                      NEW.steps_completed)
                                     IS DISTINCT FROM (OLD.format, OLD.storage, OLD.external_uri, OLD.size_bytes,
                                                       OLD.checksum, OLD.steps_completed) THEN
            RAISE EXCEPTION 'checkpoint % is %: its payload, size, checksum and steps cannot be changed', OLD.uuid, OLD.state
                USING ERRCODE = 'object_not_in_prerequisite_state',
                DETAIL = 'Only an ACTIVE checkpoint, whose payload is still being written, can change them.';
        END IF;
        IF registered AND (NEW.metadata, NEW.resources) IS DISTINCT FROM (OLD.metadata, OLD.resources) THEN
            RAISE EXCEPTION 'checkpoint % is registered as a model version: its metadata cannot be changed', OLD.uuid
                USING ERRCODE = 'object_in_use',
                HINT = 'Delete those model versions first.';
        END IF;
    END IF;
    -- A registered checkpoint stays COMPLETED: not deleted, not marked as an error.
    IF NEW.state <> 'COMPLETED' AND registered THEN
        SELECT string_agg(format('%s version %s', m.name, v.version), ', ' ORDER BY m.name, v.version) INTO used_by
        FROM hopper.model_versions v JOIN hopper.models m USING (model_id) WHERE v.checkpoint_id = OLD.checkpoint_id;
        RAISE EXCEPTION 'checkpoint % is registered as a model version', OLD.uuid USING ERRCODE = 'object_in_use',
            DETAIL = format('It is %s.', coalesce(used_by, 'used by a model version')),
            HINT = 'Delete those model versions first.';
    END IF;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.checkpoints_before_update() IS
'trigger: a checkpoint used by a model version (read from hopper.model_versions) stays COMPLETED and its metadata is fixed, a deleted one stays deleted, a completed one keeps its payload, size, checksum and steps (a superuser may repair them); only its owner may change it, others only register it';
CREATE OR REPLACE TRIGGER checkpoints_before_update BEFORE UPDATE ON hopper.checkpoints
    FOR EACH ROW EXECUTE FUNCTION hopper.checkpoints_before_update();
