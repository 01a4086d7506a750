CREATE OR REPLACE VIEW hopper.model_versions_expanded AS
SELECT v.version_id, v.model_id, md.name AS model_name, v.version, v.name, v.comment, v.metadata, v.labels, v.notes,
       v.owner, v.creation_time, v.last_updated_time,
       ARRAY(SELECT a.alias FROM hopper.model_aliases a WHERE a.version_id = v.version_id ORDER BY a.alias) AS aliases,
       e.checkpoint_id, e.uuid AS checkpoint_uuid, e.state AS checkpoint_state, e.steps_completed, e.run_id, e.mst_key,
       e.iteration, e.training_metrics, e.validation_metrics, e.searcher_metric, e.searcher_value,
       e.signed_searcher_value, e.data ->> 'response_type' AS response_type,
       CASE WHEN jsonb_typeof(e.data -> 'class_values') = 'array'
            THEN ARRAY(SELECT jsonb_array_elements_text(e.data -> 'class_values')) END AS class_values,
       hopper.json_float8(e.data -> 'normalizing_const') AS normalizing_const,
       CASE WHEN jsonb_typeof(e.data -> 'feature_center') = 'array'
            THEN ARRAY(SELECT hopper.json_float4(jsonb_array_elements(e.data -> 'feature_center'))) END AS feature_center,
       CASE WHEN jsonb_typeof(e.data -> 'feature_spread') = 'array'
            THEN ARRAY(SELECT hopper.json_float4(jsonb_array_elements(e.data -> 'feature_spread'))) END AS feature_spread,
       CASE WHEN jsonb_typeof(e.data -> 'feature_recipe') = 'object' THEN e.data -> 'feature_recipe' END AS feature_recipe
FROM hopper.model_versions v
JOIN hopper.models md ON md.model_id = v.model_id
JOIN hopper.checkpoints_expanded e ON e.checkpoint_id = v.checkpoint_id;
COMMENT ON VIEW hopper.model_versions_expanded IS
'every model version with its model name, aliases, checkpoint, training facts and what hopper.model_forward needs to score a row (normalizing_const, feature_center, feature_spread, class_values), and for a model trained on a table''s own columns its feature recipe';
GRANT SELECT ON hopper.model_versions_expanded TO PUBLIC;
