-- The demo's checkpoints and model registry (run by demo/run.sh after the training run 'fashion demo').
-- The same queries are in docs/registry.md and exercised by test/regress/sql/registry.sql.
SELECT max(run_id) AS demo_run FROM hopper.runs WHERE name = 'fashion demo' \gset

-- The run: its tables, searcher metric and state.
SELECT run_id, method, model_output_table, num_iterations, checkpoint_frequency, searcher_metric, state,
       end_time - start_time AS took
FROM hopper.runs WHERE run_id = :demo_run;

-- Every checkpoint of the run: one row per (configuration, saved iteration), with its metrics.
SELECT mst_key, iteration, steps_completed, state,
       round((validation_metrics ->> 'accuracy')::numeric, 4) AS test_accuracy,
       round((validation_metrics ->> 'loss')::numeric, 4) AS test_loss,
       pg_size_pretty(size_bytes) AS size
FROM hopper.checkpoints_expanded
WHERE run_id = :demo_run
ORDER BY mst_key, iteration;

-- The latest and the best checkpoint of every configuration (index scans, one per configuration).
SELECT mst_key, iteration, round((validation_metrics ->> 'accuracy')::numeric, 4) AS test_accuracy
FROM hopper.latest_checkpoints WHERE run_id = :demo_run ORDER BY mst_key;
SELECT mst_key, iteration, searcher_metric, round(searcher_value::numeric, 4) AS value
FROM hopper.best_checkpoints WHERE run_id = :demo_run ORDER BY mst_key;

-- Register the best checkpoint of the whole run as version 1 of a model, and call it champion.
SELECT hopper.create_model('fashion-mlp', 'Fashion-MNIST classifier from the demo', labels => ARRAY['demo']);
SELECT hopper.register_model_version('fashion-mlp',
         (SELECT uuid FROM hopper.checkpoints_expanded
          WHERE run_id = :demo_run AND state = 'COMPLETED' AND signed_searcher_value IS NOT NULL
          ORDER BY signed_searcher_value, checkpoint_id LIMIT 1),
         comment => 'best checkpoint of the demo run') AS version;
SELECT hopper.set_model_alias('fashion-mlp', 'champion', 1);

-- The versions of the model, and the checkpoint (and training facts) behind one.
SELECT version, aliases, mst_key, iteration, round((validation_metrics ->> 'accuracy')::numeric, 4) AS test_accuracy,
       comment, creation_time
FROM hopper.model_versions_expanded WHERE model_name = 'fashion-mlp' ORDER BY version;
SELECT c.uuid, c.run_name, c.mst_key, c.iteration, c.steps_completed, c.hparams -> 'compile' -> 'optimizer' AS optimizer,
       c.checksum
FROM hopper.checkpoints_expanded c
JOIN hopper.model_versions_expanded v ON v.checkpoint_id = c.checkpoint_id
WHERE v.model_name = 'fashion-mlp' AND v.version = 1;

-- Predict with the champion, end to end: the version as a model table, then hopper.predict.
SELECT hopper.materialize_model_version('fashion-mlp', 'fashion_champion', alias => 'champion');
SELECT hopper.predict('fashion_champion', 'fashion_test', 'id', 'pixels', 'champion_predictions');
SELECT round(avg((p.estimated_class_name = t.class_name)::int), 4) AS champion_test_accuracy
FROM fashion_test t JOIN champion_predictions p USING (id);

-- Or score rows in any query with the version's weights.
WITH v AS MATERIALIZED (
    SELECT hopper.model_version_state(model_name, version) AS state,
           normalizing_const, feature_center, feature_spread, class_values
    FROM hopper.model_versions_expanded
    WHERE model_name = 'fashion-mlp' AND 'champion' = ANY (aliases))
SELECT t.id, t.class_name AS truth,
       v.class_values[hopper.argmax(hopper.model_forward(v.state, t.pixels::float8[], v.normalizing_const,
                                                         v.feature_center, v.feature_spread))] AS predicted
FROM fashion_test t CROSS JOIN v
ORDER BY t.id LIMIT 5;

-- Keep the best checkpoint of the run, the latest of each configuration and the registered one.
SELECT count(*) AS checkpoints_removed, pg_size_pretty(sum(c.size_bytes)) AS space_freed
FROM hopper.gc_checkpoints(:demo_run) g JOIN hopper.checkpoints c ON c.uuid = g.checkpoint_uuid;
SELECT state, count(*) FROM hopper.checkpoints_expanded WHERE run_id = :demo_run GROUP BY state ORDER BY state;
