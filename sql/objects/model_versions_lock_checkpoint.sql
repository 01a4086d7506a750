-- A new model version's checkpoint is locked as hopper's owner. Registering rewrites the
-- checkpoint's row unchanged under its row lock (a new row version): a concurrent deletion, which
-- locks the row before it looks for versions, either waits and then sees this version (READ
-- COMMITTED) or fails to serialize (REPEATABLE READ); a deletion committed first is seen here.
-- SECURITY DEFINER because a role may register another role's checkpoint but may not UPDATE or
-- row-lock it: the checkpoints' UPDATE policy, which SELECT ... FOR UPDATE/SHARE also applies, is
-- the owner's (it was open to every role for this rewrite, and then one SELECT ... FOR UPDATE in an
-- open transaction locked every role's checkpoints). PUBLIC may not EXECUTE it, so no role can
-- attach it to a table of its own (CREATE TRIGGER needs EXECUTE; firing does not), and it refuses
-- to run as anything but this trigger of hopper.model_versions. It fires after
-- model_versions_before_insert (BEFORE triggers fire in name order): the model's refusals come
-- first, as they did when one trigger did both.
CREATE OR REPLACE FUNCTION hopper.model_versions_lock_checkpoint() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    c record;
BEGIN
    IF TG_RELID OPERATOR(pg_catalog.<>) 'hopper.model_versions'::pg_catalog.regclass
       OR TG_WHEN OPERATOR(pg_catalog.<>) 'BEFORE' OR TG_OP OPERATOR(pg_catalog.<>) 'INSERT'
       OR TG_LEVEL OPERATOR(pg_catalog.<>) 'ROW' THEN
        RAISE EXCEPTION 'hopper.model_versions_lock_checkpoint() runs only as the BEFORE INSERT row trigger of hopper.model_versions'
            USING ERRCODE = 'triggered_action_exception',
            DETAIL = pg_catalog.format('It was fired %s %s FOR EACH %s on %s.', TG_WHEN, TG_OP, TG_LEVEL,
                                       TG_RELID::pg_catalog.regclass);
    END IF;
    UPDATE hopper.checkpoints SET state = state
    WHERE checkpoint_id OPERATOR(pg_catalog.=) NEW.checkpoint_id AND state OPERATOR(pg_catalog.=) 'COMPLETED';
    IF NOT FOUND THEN
        SELECT k.uuid, k.state INTO c FROM hopper.checkpoints k
        WHERE k.checkpoint_id OPERATOR(pg_catalog.=) NEW.checkpoint_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'checkpoint with id % does not exist', NEW.checkpoint_id USING ERRCODE = 'undefined_object';
        END IF;
        RAISE EXCEPTION 'checkpoint % is %', c.uuid, c.state USING ERRCODE = 'object_not_in_prerequisite_state',
            DETAIL = 'Only COMPLETED checkpoints can be registered as model versions.';
    END IF;
    RETURN NEW;
END
$$;
REVOKE EXECUTE ON FUNCTION hopper.model_versions_lock_checkpoint() FROM PUBLIC;
COMMENT ON FUNCTION hopper.model_versions_lock_checkpoint() IS
'trigger (SECURITY DEFINER, no role may execute or attach it): takes the row lock of a new model version''s checkpoint by rewriting its row unchanged, refusing checkpoints that are not COMPLETED; runs only as the BEFORE INSERT row trigger of hopper.model_versions';
CREATE OR REPLACE TRIGGER model_versions_lock_checkpoint BEFORE INSERT ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.model_versions_lock_checkpoint();
