-- Row-level security checks a new row against its owner and the rows it points to (task, run,
-- checkpoint, model); these triggers keep those columns fixed afterwards, so that a role can
-- neither give a row away (it could then no longer be repaired by anyone) nor move its own row
-- under another role's run. Each trigger names the columns it keeps (TG_ARGV); owner changes are
-- 42501 (only a superuser may reassign rows), the others 428C9. A run's data (how its training
-- data was packed) is kept too: another role's model version of its checkpoint predicts by it, so
-- its owner rewriting it changed that version's classes and scaling (a hostile review).
CREATE OR REPLACE FUNCTION hopper.keep_columns() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    col text;
    old_row jsonb := to_jsonb(OLD);
    new_row jsonb := to_jsonb(NEW);
BEGIN
    FOREACH col IN ARRAY TG_ARGV LOOP
        IF new_row -> col IS DISTINCT FROM old_row -> col THEN
            -- A superuser may hand rows to another role (say, when someone leaves).
            CONTINUE WHEN col = 'owner' AND (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER);
            IF col = 'owner' THEN
                RAISE EXCEPTION 'the owner of a row of %.% cannot be changed', TG_TABLE_SCHEMA, TG_TABLE_NAME
                    USING ERRCODE = 'insufficient_privilege',
                    DETAIL = format('It belongs to role %s.', old_row ->> 'owner'),
                    HINT = 'Rows stay with the role that created them.';
            END IF;
            IF col = 'data' THEN
                RAISE EXCEPTION 'column data of %.% cannot be changed', TG_TABLE_SCHEMA, TG_TABLE_NAME
                    USING ERRCODE = 'generated_always',
                    DETAIL = 'It records how the run''s training data was packed (classes, scaling, feature recipe): '
                             'the model versions of its checkpoints, anyone''s, predict by it.';
            END IF;
            RAISE EXCEPTION 'column % of %.% cannot be changed', col, TG_TABLE_SCHEMA, TG_TABLE_NAME
                USING ERRCODE = 'generated_always',
                DETAIL = 'It ties the row to its owner, task, run, checkpoint or model.';
        END IF;
    END LOOP;
    RETURN NEW;
END
$$;
COMMENT ON FUNCTION hopper.keep_columns() IS
'trigger: refuses an UPDATE that changes one of the columns named in the trigger''s arguments (owner: 42501 unless a superuser reassigns it, others: 428C9)';
CREATE OR REPLACE TRIGGER tasks_keep_columns BEFORE UPDATE ON hopper.tasks
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'task_id', 'task_type');
CREATE OR REPLACE TRIGGER run_records_keep_columns BEFORE UPDATE ON hopper.run_records
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'run_id', 'method', 'data');
CREATE OR REPLACE TRIGGER trials_keep_columns BEFORE UPDATE ON hopper.trials
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('trial_id', 'run_id', 'mst_key');
CREATE OR REPLACE TRIGGER trial_metrics_keep_columns BEFORE UPDATE ON hopper.trial_metrics
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('trial_id', 'iteration');
CREATE OR REPLACE TRIGGER checkpoints_keep_columns BEFORE UPDATE ON hopper.checkpoints
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'task_id');
CREATE OR REPLACE TRIGGER checkpoint_training_keep_columns BEFORE UPDATE ON hopper.checkpoint_training
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('checkpoint_id', 'trial_id', 'iteration');
CREATE OR REPLACE TRIGGER models_keep_columns BEFORE UPDATE ON hopper.models
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner');
CREATE OR REPLACE TRIGGER model_versions_keep_columns BEFORE UPDATE ON hopper.model_versions
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'version_id');
CREATE OR REPLACE TRIGGER model_aliases_keep_columns BEFORE UPDATE ON hopper.model_aliases
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('owner', 'model_id');
