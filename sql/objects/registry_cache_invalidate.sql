CREATE OR REPLACE FUNCTION hopper.registry_cache_invalidate() RETURNS trigger
AS 'MODULE_PATHNAME', 'registry_cache_invalidate' LANGUAGE C;
COMMENT ON FUNCTION hopper.registry_cache_invalidate() IS
'trigger: tells every session, when the change commits, to drop what hopper.predict_class, predict_proba and predict_value resolved from the registry';
-- Statement triggers: one invalidation per statement, whatever the number of rows.
CREATE OR REPLACE TRIGGER models_cache_invalidate AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON hopper.models
    FOR EACH STATEMENT EXECUTE FUNCTION hopper.registry_cache_invalidate();
CREATE OR REPLACE TRIGGER model_versions_cache_invalidate AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON hopper.model_versions
    FOR EACH STATEMENT EXECUTE FUNCTION hopper.registry_cache_invalidate();
CREATE OR REPLACE TRIGGER model_aliases_cache_invalidate AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON hopper.model_aliases
    FOR EACH STATEMENT EXECUTE FUNCTION hopper.registry_cache_invalidate();
CREATE OR REPLACE TRIGGER checkpoints_cache_invalidate AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON hopper.checkpoints
    FOR EACH STATEMENT EXECUTE FUNCTION hopper.registry_cache_invalidate();
CREATE OR REPLACE TRIGGER run_records_cache_invalidate AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON hopper.run_records
    FOR EACH STATEMENT EXECUTE FUNCTION hopper.registry_cache_invalidate();
