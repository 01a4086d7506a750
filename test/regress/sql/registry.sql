-- Checkpoints and the model registry: what fit and fit_multiple record, the views and the everyday
-- queries of docs/registry.md, registration and its invariants, garbage collection, listing,
-- generic checkpoints, privileges, and every error branch.
SET client_min_messages = warning;

-- Errors as one line: SQLSTATE, message, detail and hint, with what varies between runs masked
-- (uuids, checksums, ids).
CREATE FUNCTION pg_temp.try(sql text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    st text; msg text; det text; hnt text;
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL, hnt = PG_EXCEPTION_HINT;
    msg := st || ': ' || msg || coalesce(' | DETAIL: ' || nullif(det, ''), '') || coalesce(' | HINT: ' || nullif(hnt, ''), '');
    msg := regexp_replace(msg, '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}', '<uuid>', 'g');
    msg := regexp_replace(msg, 'sha256:[0-9a-f]{64}', 'sha256:<hex>', 'g');
    msg := regexp_replace(msg, 'task [0-9]+', 'task <id>', 'g');
    RETURN regexp_replace(msg, 'Failing row contains \(.*\)', 'Failing row contains (...)');
END $$;

-- Two well separated classes, packed over two segments, with a validation set.
CREATE TABLE reg_points AS
SELECT g AS id, ARRAY[(g % 2) * 4.0 + sin(g), (g % 2) * -4.0 + cos(g)]::float8[] AS x,
       CASE g % 2 WHEN 0 THEN 'even' ELSE 'odd' END AS label
FROM generate_series(1, 200) g;
SELECT hopper.preprocess('reg_points', 'reg_packed', 'label', 'x', buffer_size => 20, num_segments => 2,
                         scale => 'standardize', seed => 1);
CREATE TABLE reg_valid AS SELECT * FROM reg_points WHERE id % 3 = 0;
SELECT hopper.preprocess_validation('reg_valid', 'reg_valid_packed', 'label', 'x', 'reg_packed');

-- ---- fit records its run and writes a checkpoint every checkpoint_frequency iterations ----
CALL hopper.fit('reg_packed', 'reg_m', '{"input_dim": 2, "layers": [{"units": 4, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, 'batch_size=10', 4,
                validation_table => 'reg_valid_packed', name => 'reg_fit', checkpoint_frequency => 2);
SELECT run_id AS fit_run FROM hopper.runs WHERE name = 'reg_fit' \gset
SELECT method, source_table, validation_table, model_output_table, num_iterations, metrics_compute_frequency,
       checkpoint_frequency, searcher_metric, smaller_is_better, state, end_time >= start_time AS ended,
       owner = current_user AS mine, data ->> 'response_type' AS response_type, data -> 'class_values' AS class_values,
       data ->> 'dependent_varname' AS dependent, data ->> 'scale' AS scale,
       jsonb_array_length(data -> 'feature_center') AS centers
FROM hopper.runs WHERE run_id = :fit_run;
SELECT t.mst_key, t.model_id, t.status, t.hparams -> 'compile' -> 'optimizer' ->> 'name' AS optimizer,
       t.hparams -> 'fit' ->> 'batch_size' AS batch_size, t.model_arch -> 'layers' -> 0 ->> 'units' AS hidden,
       k.task_type, k.state, k.description LIKE 'fit run %, mst_key 1' AS described
FROM hopper.trials t JOIN hopper.tasks k ON k.task_id = t.trial_id WHERE t.run_id = :fit_run;
-- Metrics of every evaluated iteration, agreeing with the _info table.
SELECT m.iteration, m.steps_completed, jsonb_object_keys(m.validation_metrics) AS metric,
       abs(m.searcher_value - i.validation_loss[m.iteration]) < 1e-12 AS searcher_is_validation_loss
FROM hopper.trial_metrics m JOIN hopper.trials t USING (trial_id), reg_m_info i
WHERE t.run_id = :fit_run ORDER BY 1, 3;
-- The same curves in long form (hopper.learning_curves): one row per iteration, split and metric,
-- equal to the _info table's arrays.
SELECT lc.split, lc.metric, count(*) AS iterations,
       bool_and(lc.value = CASE lc.split || '.' || lc.metric
                             WHEN 'training.loss' THEN i.training_loss[lc.iteration]
                             WHEN 'training.accuracy' THEN i.training_metrics[lc.iteration]
                             WHEN 'validation.loss' THEN i.validation_loss[lc.iteration]
                             WHEN 'validation.accuracy' THEN i.validation_metrics[lc.iteration] END) AS same_as_info,
       min(lc.iteration) AS first, max(lc.iteration) AS last, bool_and(lc.run_name = 'reg_fit' AND lc.method = 'fit') AS named
FROM hopper.learning_curves lc, reg_m_info i WHERE lc.run_id = :fit_run GROUP BY 1, 2 ORDER BY 1, 2;
-- One checkpoint per saved iteration: steps, size, checksum and the metrics of that iteration.
SELECT e.iteration, e.steps_completed, e.state, e.storage, e.format, e.task_type, e.mst_key,
       e.size_bytes = octet_length(m.model_state) AS size_ok, e.checksum LIKE 'sha256:%' AS has_checksum,
       e.resources ->> 'model_state' = e.size_bytes::text AS resources_ok, e.metadata ->> 'iteration' AS meta_iteration,
       e.validation_metrics ? 'accuracy' AS has_accuracy, e.searcher_metric,
       e.searcher_value = e.signed_searcher_value AS smaller_is_better, e.version_count,
       e.data ->> 'dependent_vartype' AS vartype
FROM hopper.checkpoints_expanded e, reg_m m WHERE e.run_id = :fit_run ORDER BY e.iteration;
-- The last checkpoint is the output model, bit for bit; the payload is stored in its own table.
SELECT hopper.checkpoint_state(l.uuid) = m.model_state AS same_state,
       c.checksum = 'sha256:' || encode(sha256(m.model_state), 'hex') AS checksum_is_sha256
FROM hopper.latest_checkpoints l JOIN hopper.checkpoints c USING (checkpoint_id), reg_m m WHERE l.run_id = :fit_run;
SELECT count(*) AS bytea_columns_in_checkpoints FROM information_schema.columns
WHERE table_schema = 'hopper' AND table_name = 'checkpoints' AND data_type = 'bytea';

-- ---- fit_multiple: a checkpoint per configuration and saved iteration ----
CREATE TABLE reg_arch (model_id integer, model_arch jsonb);
INSERT INTO reg_arch VALUES
    (1, '{"input_dim": 2, "layers": [{"units": 4, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]}'),
    (2, '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}');
CREATE TABLE reg_mst (mst_key integer, model_id integer, compile_params text, fit_params text);
INSERT INTO reg_mst VALUES
    (1, 1, $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, 'batch_size=10'),
    (2, 2, $$optimizer='SGD(lr=0.01)', metrics=['accuracy']$$, 'batch_size=10');
CREATE TABLE reg_mst_summary AS SELECT 'reg_arch'::text AS model_arch_table;
CALL hopper.fit_multiple('reg_packed', 'reg_multi', 'reg_mst', 3, validation_table => 'reg_valid_packed',
                         metrics_compute_frequency => 1, name => 'reg_multi', searcher_metric => 'accuracy');
SELECT run_id AS multi_run FROM hopper.runs WHERE name = 'reg_multi' \gset
SELECT method, model_selection_table, checkpoint_frequency, searcher_metric, smaller_is_better
FROM hopper.runs WHERE run_id = :multi_run;

-- The run's learning curves as a picture (hopper.learning_curves_svg): one line per configuration,
-- the best last value of the searcher metric (validation accuracy, larger is better) highlighted.
SELECT hopper.learning_curves_svg(:multi_run) AS svg \gset
SELECT :'svg' LIKE '<svg xmlns="http://www.w3.org/2000/svg"%</svg>' || chr(10) AS whole_document,
       (SELECT count(*) FROM regexp_matches(:'svg', '<polyline', 'g')) AS lines,
       (SELECT count(*) FROM regexp_matches(:'svg', 'class="curve best"', 'g')) AS highlighted,
       strpos(:'svg', '>run ' || :multi_run || ' (reg_multi): validation accuracy</text>') > 0 AS titled,
       substring(:'svg' from 'font-weight="bold">mst_key ([0-9]+):')::int = (
           SELECT mst_key FROM hopper.learning_curves
           WHERE run_id = :multi_run AND split = 'validation' AND metric = 'accuracy' AND iteration = 3
           ORDER BY value DESC, mst_key LIMIT 1) AS best_is_highest_last_accuracy;
-- Another metric and split; loss: the smallest last value is the best.
SELECT hopper.learning_curves_svg(:multi_run, 'loss', 'training') AS svg \gset
SELECT strpos(:'svg', ': training loss</text>') > 0 AS titled,
       substring(:'svg' from 'font-weight="bold">mst_key ([0-9]+):')::int = (
           SELECT mst_key FROM hopper.learning_curves
           WHERE run_id = :multi_run AND split = 'training' AND metric = 'loss' AND iteration = 3
           ORDER BY value, mst_key LIMIT 1) AS best_is_lowest_last_loss;
-- And as text, a sparkline per configuration.
SELECT mst_key, length(hopper.sparkline(array_agg(value ORDER BY iteration))) AS points
FROM hopper.learning_curves WHERE run_id = :multi_run AND split = 'validation' AND metric = 'accuracy'
GROUP BY mst_key ORDER BY mst_key;
SELECT hopper.sparkline(ARRAY[0, 1, NULL, 'NaN', 0.5]::float8[]) AS gaps, hopper.sparkline('{}') AS empty,
       hopper.sparkline(NULL) IS NULL AS strict;
SELECT pg_temp.try($$SELECT hopper.sparkline('{{1,2},{3,4}}')$$);
SELECT pg_temp.try($$SELECT hopper.learning_curves_svg(-5)$$);
SELECT pg_temp.try($$SELECT hopper.learning_curves_svg(NULL)$$);
SELECT pg_temp.try($$SELECT hopper.learning_curves_svg($$ || :multi_run || $$, 'accuracy', 'test')$$);
SELECT regexp_replace(pg_temp.try($$SELECT hopper.learning_curves_svg($$ || :multi_run || $$, 'f1')$$),
                      'run [0-9]+', 'run <id>') AS try;

-- docs/registry.md: every checkpoint of a run, one row per (configuration, saved iteration).
SELECT mst_key, iteration, steps_completed, state,
       (validation_metrics ->> 'accuracy')::float8 > 0.8 AS accurate, searcher_metric
FROM hopper.checkpoints_expanded
WHERE run_name = 'reg_multi'
ORDER BY mst_key, iteration;
-- A larger-is-better metric ranks by its negation.
SELECT bool_and(signed_searcher_value = -searcher_value) AS negated FROM hopper.checkpoints_expanded WHERE run_id = :multi_run;

-- docs/registry.md: the latest checkpoint of every configuration.
SELECT mst_key, iteration, steps_completed, (validation_metrics ->> 'accuracy')::float8 > 0.8 AS accurate
FROM hopper.latest_checkpoints
WHERE run_name = 'reg_multi'
ORDER BY mst_key;

-- docs/registry.md: the best checkpoint of every configuration (by the run's searcher metric).
SELECT mst_key, searcher_metric, searcher_value > 0.8 AS accurate
FROM hopper.best_checkpoints
WHERE run_name = 'reg_multi'
ORDER BY mst_key;
-- ... the same by hand: smallest signed value, ties to the earlier checkpoint.
SELECT b.mst_key, b.checkpoint_id = (SELECT e.checkpoint_id FROM hopper.checkpoints_expanded e
                                     WHERE e.trial_id = b.trial_id AND e.state = 'COMPLETED'
                                     ORDER BY e.signed_searcher_value, e.checkpoint_id LIMIT 1) AS agrees
FROM hopper.best_checkpoints b WHERE b.run_id = :multi_run ORDER BY 1;

-- docs/registry.md: the best checkpoint of the whole run.
SELECT mst_key, iteration, searcher_value
FROM hopper.checkpoints_expanded
WHERE run_name = 'reg_multi' AND state = 'COMPLETED' AND signed_searcher_value IS NOT NULL
ORDER BY signed_searcher_value, checkpoint_id
LIMIT 1;

-- checkpoint_frequency 0: only after the last iteration. Metrics every second iteration with a
-- checkpoint every iteration: checkpoints between evaluations have no searcher value.
CALL hopper.fit('reg_packed', 'reg_m_end', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
                '', '', 3, name => 'reg_end', checkpoint_frequency => 0);
SELECT iteration, searcher_metric, searcher_value IS NOT NULL AS ranked FROM hopper.checkpoints_expanded WHERE run_name = 'reg_end';
CALL hopper.fit('reg_packed', 'reg_m_sparse', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
                '', '', 4, metrics_compute_frequency => 2, name => 'reg_sparse', checkpoint_frequency => 1);
SELECT iteration, searcher_value IS NOT NULL AS ranked FROM hopper.checkpoints_expanded WHERE run_name = 'reg_sparse' ORDER BY 1;

-- ---- the model registry ----
SELECT hopper.create_model('reg-Classifier', 'two blobs', '{"team": "ranking"}', ARRAY['demo', 'blobs', 'demo'], 'notes') > 0 AS created;
SELECT name, description, metadata, labels, notes, archived, next_version, owner = current_user AS mine
FROM hopper.models WHERE name = 'reg-Classifier';
-- Register the last checkpoint of reg_fit, then iteration 2 of configuration 2 of reg_multi.
SELECT hopper.register_model_version('reg-classifier', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'reg_fit'),
                                     name => 'first', comment => 'from fit', labels => ARRAY['x']) AS version;
SELECT hopper.register_model_version('REG-CLASSIFIER', (SELECT uuid FROM hopper.checkpoints_expanded WHERE run_name = 'reg_multi' AND mst_key = 2 AND iteration = 2)) AS version;
SELECT hopper.set_model_alias('reg-classifier', 'champion', 1);
SELECT hopper.set_model_alias('reg-classifier', 'challenger', 2);

-- docs/registry.md: the versions of a model.
SELECT version, name, comment, aliases, run_id = :fit_run AS from_fit, mst_key, steps_completed,
       (validation_metrics ->> 'accuracy')::float8 > 0.8 AS accurate, checkpoint_state
FROM hopper.model_versions_expanded
WHERE model_name = 'reg-Classifier'
ORDER BY version;

-- docs/registry.md: the checkpoint behind a version.
SELECT c.run_name, c.mst_key, c.iteration, c.steps_completed, c.state, c.version_count, c.hparams -> 'compile' -> 'optimizer' ->> 'learning_rate' AS lr
FROM hopper.checkpoints_expanded c
JOIN hopper.model_versions_expanded v ON v.checkpoint_id = c.checkpoint_id
WHERE v.model_name = 'reg-Classifier' AND v.version = 2;

-- docs/registry.md: a version as a model table, for predict and evaluate.
SELECT hopper.materialize_model_version('reg-Classifier', 'reg_champion', alias => 'champion');
SELECT hopper.predict('reg_champion', 'reg_points', 'id', 'x', 'reg_champion_predicted', pred_type => 'prob');
SELECT hopper.predict('reg_m', 'reg_points', 'id', 'x', 'reg_m_predicted', pred_type => 'prob');
SELECT count(*) AS rows, bool_and(a.estimated_label = b.estimated_label AND a.prob = b.prob) AS identical_to_fit,
       avg((a.estimated_label = p.label)::int) = 1 AS accurate
FROM reg_champion_predicted a JOIN reg_m_predicted b USING (id) JOIN reg_points p USING (id);
SELECT e.loss = f.loss AS same_loss FROM hopper.evaluate('reg_champion', 'reg_valid_packed') e, hopper.evaluate('reg_m', 'reg_valid_packed') f;
SELECT method, source, model_name, model_version, mst_key, response_type, class_values, dependent_vartype, scale
FROM reg_champion_summary;
SELECT model_arch = (SELECT model_arch FROM reg_m) AS same_arch, compile_params, fit_params FROM reg_champion;

-- docs/registry.md: scoring rows in a query with a version's weights.
WITH v AS MATERIALIZED (
    SELECT hopper.model_version_state(model_name, version) AS state,
           normalizing_const, feature_center, feature_spread, class_values
    FROM hopper.model_versions_expanded
    WHERE model_name = 'reg-Classifier' AND 'champion' = ANY (aliases))
SELECT count(*) AS scored,
       bool_and(v.class_values[hopper.argmax(hopper.model_forward(v.state, p.x, v.normalizing_const,
                                                                  v.feature_center, v.feature_spread))]
                = r.estimated_label) AS same_as_predict
FROM reg_points p CROSS JOIN v JOIN reg_m_predicted r USING (id);
SELECT hopper.model_weights(hopper.model_version_state('reg-Classifier', 1)) = hopper.model_weights(model_state) AS same_weights FROM reg_m;
SELECT hopper.model_version_state('reg-Classifier') = hopper.model_version_state('reg-Classifier', alias => 'challenger') AS latest_is_2;

-- Version numbers are never reused; deleting a version frees its checkpoint (and drops its aliases).
SELECT hopper.delete_model_version('reg-Classifier', 2);
SELECT hopper.register_model_version('reg-Classifier', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'reg_multi' AND mst_key = 1)) AS version;
SELECT version, aliases FROM hopper.model_versions_expanded WHERE model_name = 'reg-Classifier' ORDER BY version;
SELECT next_version FROM hopper.models WHERE name = 'reg-Classifier';
SELECT iteration, version_count FROM hopper.checkpoints_expanded WHERE run_id = :multi_run AND version_count > 0;
-- Moving an alias.
SELECT hopper.set_model_alias('reg-Classifier', 'CHAMPION', 3);
SELECT alias, (SELECT version FROM hopper.model_versions v WHERE v.version_id = a.version_id)
FROM hopper.model_aliases a JOIN hopper.models m USING (model_id) WHERE m.name = 'reg-Classifier';
SELECT hopper.delete_model_alias('reg-Classifier', 'champion');
SELECT count(*) AS aliases_left FROM hopper.model_aliases a JOIN hopper.models m USING (model_id) WHERE m.name = 'reg-Classifier';

-- An archived model refuses new versions; unarchived, it accepts them again.
SELECT hopper.archive_model('reg-Classifier');
SELECT pg_temp.try($$SELECT hopper.register_model_version('reg-Classifier', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'reg_end'))$$);
SELECT pg_temp.try($$INSERT INTO hopper.model_versions (model_id, checkpoint_id)
                     SELECT m.model_id, l.checkpoint_id FROM hopper.models m, hopper.latest_checkpoints l
                     WHERE m.name = 'reg-Classifier' AND l.run_name = 'reg_end'$$);
SELECT hopper.archive_model('reg-Classifier');  -- archiving twice is harmless
SELECT hopper.unarchive_model('reg-Classifier');
SELECT hopper.register_model_version('reg-Classifier', (SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'reg_end')) AS version;

-- ---- registered checkpoints cannot be deleted ----
SELECT pg_temp.try($$SELECT hopper.delete_checkpoints(ARRAY[(SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'reg_fit')])$$);
SELECT pg_temp.try($$UPDATE hopper.checkpoints SET state = 'DELETED' WHERE checkpoint_id = (SELECT checkpoint_id FROM hopper.latest_checkpoints WHERE run_name = 'reg_fit')$$);
SELECT pg_temp.try($$SELECT hopper.set_checkpoint_state((SELECT uuid FROM hopper.latest_checkpoints WHERE run_name = 'reg_fit'), 'ERROR')$$);
-- Unregistered ones can (all or none); a deleted checkpoint keeps its row and loses its payload.
SELECT hopper.delete_checkpoints(ARRAY(SELECT uuid FROM hopper.checkpoints_expanded WHERE run_name = 'reg_sparse' AND iteration <= 2)) AS deleted;
SELECT hopper.delete_checkpoints(ARRAY(SELECT uuid FROM hopper.checkpoints_expanded WHERE run_name = 'reg_sparse' AND iteration <= 2)) AS deleted_again;
SELECT e.iteration, e.state, (SELECT count(*) FROM hopper.checkpoint_chunks k WHERE k.checkpoint_id = e.checkpoint_id) AS chunks
FROM hopper.checkpoints_expanded e WHERE e.run_name = 'reg_sparse' ORDER BY 1;
SELECT pg_temp.try($$SELECT hopper.checkpoint_state((SELECT uuid FROM hopper.checkpoints_expanded WHERE run_name = 'reg_sparse' AND iteration = 1))$$);
SELECT pg_temp.try($$SELECT hopper.register_model_version('reg-Classifier', (SELECT uuid FROM hopper.checkpoints_expanded WHERE run_name = 'reg_sparse' AND iteration = 1))$$);
-- The latest COMPLETED checkpoint skips deleted ones.
SELECT iteration FROM hopper.latest_checkpoints WHERE run_name = 'reg_sparse';

-- ---- warm start from a checkpoint (fit) or from a run's latest checkpoints (fit_multiple) ----
SELECT uuid AS warm_uuid, steps_completed AS warm_steps FROM hopper.checkpoints_expanded WHERE run_name = 'reg_fit' AND iteration = 2 \gset
CALL hopper.fit('reg_packed', 'reg_m_warm', '{"input_dim": 2, "layers": [{"units": 4, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, 'batch_size=10', 2,
                name => 'reg_warm', warm_start_checkpoint => :'warm_uuid');
SELECT e.steps_completed - :warm_steps AS new_steps, t.warm_start_checkpoint_id = (SELECT checkpoint_id FROM hopper.checkpoints WHERE uuid = :'warm_uuid') AS source_recorded
FROM hopper.checkpoints_expanded e JOIN hopper.trials t USING (trial_id) WHERE e.run_name = 'reg_warm' ORDER BY 1;
-- Continuing from iteration 2 for two more iterations gives the 4-iteration model, bit for bit.
SELECT a.model_state = b.model_state AS resumed_exactly FROM reg_m_warm a, reg_m b;
CALL hopper.fit_multiple('reg_packed', 'reg_multi_warm', 'reg_mst', 1, metrics_compute_frequency => 1,
                         name => 'reg_multi_warm', warm_start_run => :multi_run);
SELECT t.mst_key, s.iteration AS from_iteration, e.steps_completed - s.steps_completed AS new_steps
FROM hopper.trials t JOIN hopper.checkpoints_expanded s ON s.checkpoint_id = t.warm_start_checkpoint_id
JOIN hopper.checkpoints_expanded e ON e.trial_id = t.trial_id
WHERE t.run_id = (SELECT run_id FROM hopper.runs WHERE name = 'reg_multi_warm') ORDER BY 1;
-- A model selection table made again, whose mst_key 1 is now another configuration: that one starts
-- fresh (with a notice, as a configuration the run does not have): one iteration's 10 steps; the
-- other continues, its steps counted on from the run's.
CREATE TABLE reg_mst_again (mst_key integer, model_id integer, compile_params text, fit_params text);
INSERT INTO reg_mst_again VALUES
    (1, 1, $$optimizer='Adam(lr=0.01)', metrics=['accuracy']$$, 'batch_size=20'),
    (2, 2, $$optimizer = 'SGD(lr=0.01)', metrics = ['accuracy']$$, 'batch_size = 10');
CREATE TABLE reg_mst_again_summary AS SELECT 'reg_arch'::text AS model_arch_table;
CALL hopper.fit_multiple('reg_packed', 'reg_multi_again', 'reg_mst_again', 1, name => 'reg_multi_again',
                         warm_start_run => :multi_run);
SELECT t.mst_key, t.warm_start_checkpoint_id IS NOT NULL AS continued, e.steps_completed
FROM hopper.trials t JOIN hopper.checkpoints_expanded e ON e.trial_id = t.trial_id
WHERE t.run_id = (SELECT run_id FROM hopper.runs WHERE name = 'reg_multi_again') ORDER BY 1;

-- ---- garbage collection ----
-- Of reg_multi (6 checkpoints): keep the best per run, the latest per configuration, and the
-- protected ones (registered: iteration 3 of mst_key 1; warm-start sources: both latest).
SELECT mst_key, iteration FROM hopper.gc_checkpoints(:multi_run, dry_run => true) ORDER BY 1, 2;
SELECT mst_key, iteration FROM hopper.gc_checkpoints(:multi_run) ORDER BY 1, 2;
SELECT count(*) AS removed_again FROM hopper.gc_checkpoints(:multi_run);
SELECT mst_key, iteration, state FROM hopper.checkpoints_expanded WHERE run_id = :multi_run ORDER BY 1, 2;
-- Keeping nothing still keeps registered checkpoints and warm-start sources.
SELECT count(*) AS removed FROM hopper.gc_checkpoints(:multi_run, keep_best_per_run => 0, keep_latest_per_configuration => 0);
SELECT mst_key, iteration, version_count > 0 AS registered FROM hopper.checkpoints_expanded
WHERE run_id = :multi_run AND state = 'COMPLETED' ORDER BY 1, 2;
-- keep_latest_per_run and keep_best_overall.
SELECT iteration FROM hopper.gc_checkpoints((SELECT run_id FROM hopper.runs WHERE name = 'reg_sparse'),
                                            keep_best_per_run => 0, keep_latest_per_configuration => 0,
                                            keep_latest_per_run => 1, dry_run => true);
SELECT iteration FROM hopper.gc_checkpoints((SELECT run_id FROM hopper.runs WHERE name = 'reg_sparse'),
                                            keep_best_per_run => 0, keep_latest_per_configuration => 0,
                                            keep_best_overall => 1, dry_run => true) ORDER BY 1;

-- ---- listing with a total from the same statement ----
SELECT iteration, state, total_count FROM hopper.list_checkpoints(run_id => :fit_run);
SELECT mst_key, iteration, total_count
FROM hopper.list_checkpoints(run_id => (SELECT run_id FROM hopper.runs WHERE name = 'reg_sparse'), states => ARRAY['completed'],
                             order_by => 'steps', descending => false, page_size => 1, page_offset => 1);
SELECT iteration, validation_metrics ->> 'loss' = (SELECT validation_metrics ->> 'loss' FROM hopper.checkpoints_expanded c
                                                   WHERE c.uuid = l.checkpoint_uuid) AS loss_ok, total_count
FROM hopper.list_checkpoints(run_id => :fit_run, order_by => 'validation.loss', descending => false) l;
SELECT iteration, total_count FROM hopper.list_checkpoints(run_id => :fit_run, order_by => 'searcher_metric', descending => false);
SELECT iteration FROM hopper.list_checkpoints(run_id => :fit_run, order_by => 'training.accuracy', page_size => 5);
SELECT iteration FROM hopper.list_checkpoints(run_id => :fit_run, order_by => 'accuracy');
SELECT count(*) AS past_the_end FROM hopper.list_checkpoints(run_id => :fit_run, page_offset => 10);
SELECT version, name, aliases, labels, total_count FROM hopper.list_model_versions('reg-Classifier');
SELECT version, total_count FROM hopper.list_model_versions('reg-Classifier', order_by => 'steps', descending => false, page_size => 2);
SELECT version FROM hopper.list_model_versions('reg-Classifier', order_by => 'creation_time', descending => false);
SELECT version FROM hopper.list_model_versions('reg-Classifier', order_by => 'validation.accuracy');
SELECT version FROM hopper.list_model_versions('reg-Classifier', order_by => 'searcher_metric', page_offset => 1);

-- ---- generic checkpoints: any task, any metadata ----
SELECT hopper.create_task('IMPORT', 'copied from a file', '{"source": "s3"}') AS import_task \gset
SELECT hopper.create_checkpoint(model_state, :import_task, metadata => jsonb_build_object('data', jsonb_build_object(
           'response_type', 'classification', 'class_values', jsonb_build_array('even', 'odd'), 'dependent_varname', 'label',
           'dependent_vartype', 'text', 'normalizing_const', 1, 'feature_center', s.feature_center, 'feature_spread', s.feature_spread)))
       AS import_uuid
FROM reg_m, reg_m_summary s \gset
SELECT task_type, state, steps_completed = (SELECT steps FROM reg_m_info) AS steps_from_state, storage, format,
       run_id IS NULL AS not_training, iteration, resources ? 'model_state' AS has_resources, data ->> 'response_type' AS response
FROM hopper.checkpoints_expanded WHERE uuid = :'import_uuid';
SELECT hopper.end_task(:import_task);
SELECT state, end_time IS NOT NULL AS ended FROM hopper.tasks WHERE task_id = :import_task;
-- An imported checkpoint with a data description can be predicted with, and registered.
SELECT hopper.materialize_checkpoint(:'import_uuid', 'reg_imported');
SELECT hopper.predict('reg_imported', 'reg_points', 'id', 'x', 'reg_imported_predicted');
SELECT bool_and(a.estimated_label = b.estimated_label) AS same_predictions FROM reg_imported_predicted a JOIN reg_m_predicted b USING (id);
SELECT method, source LIKE 'checkpoint %' AS from_checkpoint, model_name, run_id, mst_key, normalizing_const, class_values FROM reg_imported_summary;
SELECT hopper.register_model_version('reg-Classifier', :'import_uuid', comment => 'imported') AS version;
-- A bare checkpoint (no task, no data description) and explicit steps.
SELECT hopper.create_checkpoint(model_state, steps_completed => 7) AS bare_uuid FROM reg_m \gset
SELECT task_id IS NULL AS no_task, steps_completed, metadata FROM hopper.checkpoints WHERE uuid = :'bare_uuid';
SELECT pg_temp.try($$SELECT hopper.materialize_checkpoint('$$ || :'bare_uuid' || $$', 'reg_bare')$$);
-- External references and their life cycle.
SELECT hopper.create_checkpoint_reference('s3://bucket/model.pt', 'torch', 1234, 'md5:abc', :import_task, 10,
                                          '{"framework": "torch"}', state => 'ACTIVE') AS ext_uuid \gset
SELECT state, storage, external_uri, format, size_bytes, checksum, steps_completed, task_type FROM hopper.checkpoints_expanded WHERE uuid = :'ext_uuid';
SELECT hopper.set_checkpoint_state(:'ext_uuid', 'COMPLETED');
SELECT hopper.set_checkpoint_state(:'ext_uuid', 'COMPLETED');  -- unchanged: nothing to do
SELECT pg_temp.try($$SELECT hopper.checkpoint_state('$$ || :'ext_uuid' || $$')$$);
SELECT hopper.delete_checkpoints(ARRAY[:'ext_uuid']::uuid[]);
SELECT state FROM hopper.checkpoints WHERE uuid = :'ext_uuid';
SELECT hopper.set_checkpoint_state(:'ext_uuid', 'partially_deleted');
SELECT hopper.set_checkpoint_state(:'ext_uuid', 'DELETED');
SELECT state FROM hopper.checkpoints WHERE uuid = :'ext_uuid';
SELECT pg_temp.try($$SELECT hopper.set_checkpoint_state('$$ || :'ext_uuid' || $$', 'COMPLETED')$$);

-- A writer may also stream a payload into an ACTIVE checkpoint and then complete it: completing
-- checks the chunks against the recorded size and checksum.
INSERT INTO hopper.checkpoints (state, format, storage, size_bytes, checksum)
SELECT 'ACTIVE', 'hopper_model_state_v1', 'database', octet_length(model_state), 'sha256:' || encode(sha256(model_state), 'hex')
FROM reg_m RETURNING checkpoint_id AS streamed_id, uuid AS streamed_uuid \gset
INSERT INTO hopper.checkpoint_chunks SELECT :streamed_id, 0, substr(model_state, 1, 100) FROM reg_m;
SELECT pg_temp.try($$SELECT hopper.set_checkpoint_state('$$ || :'streamed_uuid' || $$', 'COMPLETED')$$);
INSERT INTO hopper.checkpoint_chunks SELECT :streamed_id, 1, substr(model_state, 101) FROM reg_m;
SELECT hopper.set_checkpoint_state(:'streamed_uuid', 'COMPLETED');
SELECT state, hopper.checkpoint_state(uuid) = (SELECT model_state FROM reg_m) AS same FROM hopper.checkpoints WHERE uuid = :'streamed_uuid';
SELECT hopper.set_checkpoint_state(:'bare_uuid', 'ERROR');
SELECT state FROM hopper.checkpoints WHERE uuid = :'bare_uuid';

-- ---- large models are stored in 1 MB chunks ----
CALL hopper.fit('reg_packed', 'reg_big', '{"input_dim": 2, "layers": [{"units": 600, "activation": "relu"}, {"units": 500, "activation": "relu"}, {"units": 2, "activation": "softmax"}]}',
                '', 'batch_size=50', 1, name => 'reg_big');
SELECT size_bytes > 1048576 AS over_1mb, (SELECT count(*) FROM hopper.checkpoint_chunks k WHERE k.checkpoint_id = e.checkpoint_id) AS chunks,
       (SELECT max(octet_length(data)) FROM hopper.checkpoint_chunks k WHERE k.checkpoint_id = e.checkpoint_id) AS largest_chunk,
       hopper.checkpoint_state(uuid) = (SELECT model_state FROM reg_big) AS round_trip
FROM hopper.checkpoints_expanded e WHERE run_name = 'reg_big';

-- ---- a damaged payload is detected (the superuser bypasses row-level security here) ----
SELECT uuid AS big_uuid, checkpoint_id AS big_id FROM hopper.checkpoints_expanded WHERE run_name = 'reg_big' \gset
UPDATE hopper.checkpoint_chunks SET data = overlay(data PLACING '\x00'::bytea FROM 100) WHERE checkpoint_id = :big_id AND chunk_no = 0;
SELECT pg_temp.try($$SELECT hopper.checkpoint_state('$$ || :'big_uuid' || $$')$$);
UPDATE hopper.checkpoints SET size_bytes = size_bytes + 1 WHERE checkpoint_id = :big_id;
SELECT pg_temp.try($$SELECT hopper.checkpoint_state('$$ || :'big_uuid' || $$')$$);
DELETE FROM hopper.checkpoint_chunks WHERE checkpoint_id = :big_id AND chunk_no = 0;
SELECT pg_temp.try($$SELECT hopper.checkpoint_state('$$ || :'big_uuid' || $$')$$);
DELETE FROM hopper.checkpoint_chunks WHERE checkpoint_id = :big_id;
SELECT pg_temp.try($$SELECT hopper.checkpoint_state('$$ || :'big_uuid' || $$')$$);
-- A payload whose checksum matches but whose model state is corrupt.
SELECT hopper.create_checkpoint(model_state) AS bad_uuid FROM reg_m_end \gset
UPDATE hopper.checkpoint_chunks k SET data = overlay(data PLACING '\xff'::bytea FROM 80)
FROM hopper.checkpoints c WHERE c.checkpoint_id = k.checkpoint_id AND c.uuid = :'bad_uuid';
UPDATE hopper.checkpoints c SET checksum = 'sha256:' || encode(sha256(k.data), 'hex')
FROM hopper.checkpoint_chunks k WHERE c.checkpoint_id = k.checkpoint_id AND c.uuid = :'bad_uuid';
SELECT pg_temp.try($$SELECT hopper.checkpoint_state('$$ || :'bad_uuid' || $$')$$);

-- ---- what the triggers keep true, whatever SQL is used ----
SELECT model_id AS reg_model FROM hopper.models WHERE name = 'reg-Classifier' \gset
SELECT pg_temp.try($$INSERT INTO hopper.model_versions (model_id, checkpoint_id, version) VALUES ($$ || :reg_model || $$, (SELECT checkpoint_id FROM hopper.latest_checkpoints WHERE run_name = 'reg_fit'), 1)$$);
INSERT INTO hopper.model_versions (model_id, checkpoint_id, comment)
VALUES (:reg_model, (SELECT checkpoint_id FROM hopper.latest_checkpoints WHERE run_name = 'reg_warm'), 'plain insert') RETURNING version;
SELECT pg_temp.try($$INSERT INTO hopper.model_versions (model_id, checkpoint_id) VALUES (-1, 1)$$);
SELECT pg_temp.try($$INSERT INTO hopper.model_versions (model_id, checkpoint_id) VALUES ($$ || :reg_model || $$, -1)$$);
SELECT pg_temp.try($$UPDATE hopper.model_versions SET version = 99 WHERE model_id = $$ || :reg_model);
UPDATE hopper.model_versions SET notes = 'reviewed' WHERE model_id = :reg_model AND version = 1 RETURNING version, notes, last_updated_time >= creation_time AS touched;
SELECT pg_temp.try($$UPDATE hopper.models SET next_version = 1 WHERE name = 'reg-Classifier'$$);
-- A registered checkpoint stays COMPLETED (read from hopper.model_versions, not from a counter).
SELECT pg_temp.try($$UPDATE hopper.checkpoints SET state = 'ERROR' WHERE checkpoint_id = (SELECT min(v.checkpoint_id) FROM hopper.model_versions v JOIN hopper.models m USING (model_id) WHERE m.name = 'reg-Classifier')$$);
SELECT pg_temp.try($$UPDATE hopper.checkpoints SET uuid = gen_random_uuid() WHERE uuid = '$$ || :'bare_uuid' || $$'$$);
SELECT pg_temp.try($$UPDATE hopper.checkpoints SET state = 'COMPLETED' WHERE uuid = '$$ || :'ext_uuid' || $$'$$);
SELECT pg_temp.try($$UPDATE hopper.models SET name = 'has space' WHERE name = 'reg-Classifier'$$);
UPDATE hopper.models SET description = 'renamed', name = 'reg-classifier-2' WHERE name = 'reg-Classifier' RETURNING name, description;
UPDATE hopper.models SET name = 'reg-Classifier' WHERE name = 'reg-classifier-2';

-- ---- privileges: rows belong to their owner ----
CREATE ROLE regress_hopper_alice;
CREATE ROLE regress_hopper_bob;
CREATE ROLE regress_hopper_team;
GRANT regress_hopper_team TO regress_hopper_bob;
GRANT USAGE ON SCHEMA hopper TO regress_hopper_alice, regress_hopper_bob;
GRANT SELECT ON reg_m, reg_packed, reg_packed_summary, reg_valid_packed, reg_valid_packed_summary TO regress_hopper_alice;
GRANT CREATE ON SCHEMA public TO regress_hopper_alice;
SET ROLE regress_hopper_alice;
SELECT hopper.create_model('reg-alice') > 0 AS created;
SELECT hopper.create_checkpoint(model_state) AS alice_uuid FROM reg_m \gset
SELECT hopper.create_task('IMPORT') AS alice_task \gset
SELECT hopper.register_model_version('reg-alice', :'alice_uuid') AS version;
SELECT owner FROM hopper.models WHERE name = 'reg-alice';
-- Alice trains: her run, trials, metrics and checkpoints are hers.
CALL hopper.fit('reg_packed', 'reg_alice_m', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 2,
                validation_table => 'reg_valid_packed', name => 'reg_alice_run');
SELECT count(*) AS checkpoints, bool_and(owner = 'regress_hopper_alice') AS hers,
       bool_and(validation_metrics IS NOT NULL) AS with_metrics
FROM hopper.checkpoints_expanded WHERE run_name = 'reg_alice_run';
SELECT owner, state FROM hopper.runs WHERE name = 'reg_alice_run';
-- The payload of a COMPLETED checkpoint cannot change, not even for its owner.
SELECT pg_temp.try($$INSERT INTO hopper.checkpoint_chunks SELECT checkpoint_id, 1, '\x00' FROM hopper.checkpoints WHERE uuid = '$$ || :'alice_uuid' || $$'$$);
UPDATE hopper.checkpoint_chunks SET data = '\x00' WHERE checkpoint_id = (SELECT checkpoint_id FROM hopper.checkpoints WHERE uuid = :'alice_uuid');
DELETE FROM hopper.checkpoint_chunks WHERE checkpoint_id = (SELECT checkpoint_id FROM hopper.checkpoints WHERE uuid = :'alice_uuid');
SET ROLE regress_hopper_bob;
-- Bob sees everything, changes nothing of Alice's.
SELECT count(*) > 0 AS sees_models FROM hopper.models;
SELECT pg_temp.try($$SELECT hopper.archive_model('reg-alice')$$);
SELECT pg_temp.try($$SELECT hopper.delete_model('reg-alice')$$);
SELECT pg_temp.try($$SELECT hopper.register_model_version('reg-alice', '$$ || :'alice_uuid' || $$')$$);
SELECT pg_temp.try($$SELECT hopper.delete_model_version('reg-alice', 1)$$);
SELECT pg_temp.try($$SELECT hopper.set_model_alias('reg-alice', 'mine', 1)$$);
SELECT pg_temp.try($$SELECT hopper.delete_checkpoints(ARRAY['$$ || :'alice_uuid' || $$'::uuid])$$);
SELECT pg_temp.try($$SELECT hopper.set_checkpoint_state('$$ || :'alice_uuid' || $$', 'ERROR')$$);
SELECT pg_temp.try($$SELECT hopper.end_task($$ || :alice_task || $$)$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint(hopper.checkpoint_state('$$ || :'alice_uuid' || $$'), $$ || :alice_task || $$)$$);
-- Plain SQL is held to the same rules by row-level security and the triggers.
UPDATE hopper.models SET description = 'bob was here' WHERE name = 'reg-alice';
DELETE FROM hopper.model_versions WHERE model_id = (SELECT model_id FROM hopper.models WHERE name = 'reg-alice');
DELETE FROM hopper.checkpoint_chunks WHERE checkpoint_id = (SELECT checkpoint_id FROM hopper.checkpoints WHERE uuid = :'alice_uuid');
SELECT pg_temp.try($$UPDATE hopper.checkpoints SET metadata = '{"bob": 1}' WHERE uuid = '$$ || :'alice_uuid' || $$'$$);
SELECT pg_temp.try($$INSERT INTO hopper.models (name, owner) VALUES ('reg-fake', 'regress_hopper_alice')$$);
SELECT pg_temp.try($$INSERT INTO hopper.model_versions (model_id, checkpoint_id)
                     SELECT model_id, (SELECT checkpoint_id FROM hopper.checkpoints WHERE uuid = '$$ || :'alice_uuid' || $$')
                     FROM hopper.models WHERE name = 'reg-alice'$$);
-- Bob may register Alice's checkpoint into his own model: that only counts it as used.
SELECT hopper.create_model('reg-bob') > 0 AS created;
SELECT hopper.register_model_version('reg-bob', :'alice_uuid') AS version;
SELECT version_count, metadata FROM hopper.checkpoints_expanded WHERE uuid = :'alice_uuid';
-- A model owned by a role Bob is a member of is his to change.
RESET ROLE;
SELECT hopper.create_model('reg-team') > 0 AS created;
UPDATE hopper.models SET owner = 'regress_hopper_team' WHERE name = 'reg-team';
SET ROLE regress_hopper_bob;
SELECT hopper.register_model_version('reg-team', :'alice_uuid') AS version;
SELECT hopper.archive_model('reg-team');
SET ROLE regress_hopper_alice;
-- Alice cannot delete her checkpoint while Bob's versions use it; Bob removes them, then she can.
SELECT pg_temp.try($$SELECT hopper.delete_checkpoints(ARRAY['$$ || :'alice_uuid' || $$'::uuid])$$);
SET ROLE regress_hopper_bob;
SELECT hopper.delete_model('reg-bob');
SELECT hopper.delete_model('reg-team');
SET ROLE regress_hopper_alice;
SELECT hopper.delete_model('reg-alice');
SELECT hopper.delete_checkpoints(ARRAY[:'alice_uuid']::uuid[]) AS deleted;
SELECT count(*) AS chunks_left FROM hopper.checkpoint_chunks k JOIN hopper.checkpoints c USING (checkpoint_id) WHERE c.uuid = :'alice_uuid';
SELECT iteration FROM hopper.gc_checkpoints((SELECT run_id FROM hopper.runs WHERE name = 'reg_alice_run'), keep_best_per_run => 0);
SELECT e.iteration, e.state, (SELECT count(*) FROM hopper.checkpoint_chunks k WHERE k.checkpoint_id = e.checkpoint_id) AS chunks
FROM hopper.checkpoints_expanded e WHERE e.run_name = 'reg_alice_run' ORDER BY 1;
SELECT hopper.end_task(:alice_task, 'CANCELED');
RESET ROLE;
SELECT count(*) AS alice_rows FROM hopper.models WHERE owner = 'regress_hopper_alice';

-- ---- every error branch ----
SELECT pg_temp.try($$SELECT hopper.create_model(NULL)$$);
SELECT pg_temp.try($$SELECT hopper.create_model('')$$);
SELECT pg_temp.try($$SELECT hopper.create_model('has space')$$);
SELECT pg_temp.try($$SELECT hopper.create_model('-lead')$$);
SELECT pg_temp.try($$SELECT hopper.create_model('12345')$$);
SELECT pg_temp.try($$SELECT hopper.create_model(repeat('m', 129))$$);
SELECT pg_temp.try($$SELECT hopper.create_model('x;drop table t')$$);
SELECT pg_temp.try($$SELECT hopper.create_model('reg-Classifier')$$);
SELECT pg_temp.try($$SELECT hopper.create_model('REG-classifier')$$);
SELECT pg_temp.try($$SELECT hopper.create_model('reg-x', metadata => '[1]')$$);
SELECT pg_temp.try($$SELECT hopper.create_model('reg-x', labels => ARRAY[''])$$);
SELECT pg_temp.try($$SELECT hopper.create_model('reg-x', labels => ARRAY[' padded'])$$);
SELECT pg_temp.try($$SELECT hopper.create_model('reg-x', labels => ARRAY['a', NULL])$$);
SELECT pg_temp.try($$SELECT hopper.archive_model('reg-missing')$$);
SELECT pg_temp.try($$SELECT hopper.unarchive_model(NULL)$$);
SELECT pg_temp.try($$SELECT hopper.delete_model('reg-missing')$$);
SELECT pg_temp.try($$SELECT hopper.register_model_version('reg-missing', gen_random_uuid())$$);
SELECT pg_temp.try($$SELECT hopper.register_model_version('reg-Classifier', gen_random_uuid())$$);
SELECT pg_temp.try($$SELECT hopper.register_model_version('reg-Classifier', NULL)$$);
SELECT pg_temp.try($$SELECT hopper.register_model_version('reg-Classifier', '$$ || :'bare_uuid' || $$', metadata => '"text"')$$);
SELECT pg_temp.try($$SELECT hopper.delete_model_version('reg-Classifier', 2)$$);
SELECT pg_temp.try($$SELECT hopper.delete_model_version('reg-Classifier', NULL)$$);
SELECT pg_temp.try($$SELECT hopper.set_model_alias('reg-Classifier', '7', 1)$$);
SELECT pg_temp.try($$SELECT hopper.set_model_alias('reg-Classifier', 'new', 2)$$);
SELECT pg_temp.try($$SELECT hopper.delete_model_alias('reg-Classifier', 'nope')$$);
SELECT pg_temp.try($$SELECT hopper.model_version_state('reg-Classifier', 1, 'champion')$$);
SELECT pg_temp.try($$SELECT hopper.model_version_state('reg-Classifier', 2)$$);
SELECT pg_temp.try($$SELECT hopper.model_version_state('reg-Classifier', alias => 'nope')$$);
SELECT hopper.create_model('reg-empty') > 0 AS created;
SELECT pg_temp.try($$SELECT hopper.model_version_state('reg-empty')$$);
SELECT pg_temp.try($$SELECT hopper.materialize_model_version('reg-empty', 'reg_nothing')$$);
SELECT pg_temp.try($$SELECT hopper.materialize_model_version('reg-Classifier', 'reg_champion', version => 1)$$);
CREATE TABLE reg_taken_summary (x int);
SELECT pg_temp.try($$SELECT hopper.materialize_model_version('reg-Classifier', 'reg_taken', version => 1)$$);
SELECT pg_temp.try($$SELECT hopper.materialize_model_version('reg-Classifier', 'o; drop table reg_m', version => 1)$$);
SELECT pg_temp.try($$SELECT hopper.list_model_versions('reg-Classifier', order_by => 'accuracy')$$);
SELECT pg_temp.try($$SELECT hopper.list_model_versions('reg-Classifier', page_size => 0)$$);
SELECT pg_temp.try($$SELECT hopper.list_model_versions('reg-missing')$$);
SELECT pg_temp.try($$SELECT hopper.list_checkpoints(states => ARRAY['DONE'])$$);
SELECT pg_temp.try($$SELECT hopper.list_checkpoints(order_by => 'validation.x y')$$);
SELECT pg_temp.try($$SELECT hopper.list_checkpoints(order_by => 'size.bytes')$$);
SELECT pg_temp.try($$SELECT hopper.list_checkpoints(page_size => 10001)$$);
SELECT pg_temp.try($$SELECT hopper.list_checkpoints(page_offset => -1)$$);
SELECT pg_temp.try($$SELECT hopper.gc_checkpoints(keep_best_per_run => -1)$$);
SELECT pg_temp.try($$SELECT hopper.gc_checkpoints(-5)$$);
SELECT pg_temp.try($$SELECT hopper.delete_checkpoints(NULL)$$);
SELECT pg_temp.try($$SELECT hopper.delete_checkpoints(ARRAY[NULL]::uuid[])$$);
SELECT pg_temp.try($$SELECT hopper.delete_checkpoints(ARRAY[gen_random_uuid()])$$);
SELECT hopper.delete_checkpoints('{}') AS nothing;
SELECT hopper.checkpoint_state(NULL) IS NULL AS strict;
SELECT pg_temp.try($$SELECT hopper.checkpoint_state(gen_random_uuid())$$);
SELECT pg_temp.try($$SELECT hopper.materialize_checkpoint(gen_random_uuid(), 'reg_nothing')$$);
SELECT pg_temp.try($$SELECT hopper.create_task(NULL)$$);
SELECT pg_temp.try($$SELECT hopper.create_task('import')$$);
SELECT pg_temp.try($$SELECT hopper.create_task('TRAINING')$$);
SELECT pg_temp.try($$SELECT hopper.create_task('IMPORT', metadata => '[]')$$);
SELECT pg_temp.try($$SELECT hopper.end_task(-1)$$);
SELECT pg_temp.try($$SELECT hopper.end_task($$ || :import_task || $$, 'DONE')$$);
SELECT pg_temp.try($$SELECT hopper.end_task($$ || :import_task || $$)$$);
SELECT pg_temp.try($$SELECT hopper.end_task((SELECT trial_id FROM hopper.trials WHERE run_id = $$ || :fit_run || $$))$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint(NULL)$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint('\xdeadbeef')$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint(model_state, steps_completed => -1) FROM reg_m$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint(model_state, -1) FROM reg_m$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint(model_state, (SELECT trial_id FROM hopper.trials WHERE run_id = $$ || :fit_run || $$)) FROM reg_m$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint(model_state, metadata => '1') FROM reg_m$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint(model_state, resources => 'null') FROM reg_m$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint_reference(NULL, 'torch')$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint_reference('', 'torch')$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint_reference('file:///m', '')$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint_reference('file:///m', 'torch', -1)$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint_reference('file:///m', 'torch', steps_completed => -1)$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint_reference('file:///m', 'torch', state => 'DELETED')$$);
SELECT pg_temp.try($$SELECT hopper.create_checkpoint_reference('file:///m', 'torch', state => 'GONE')$$);
SELECT pg_temp.try($$SELECT hopper.set_checkpoint_state(gen_random_uuid(), 'ERROR')$$);
SELECT pg_temp.try($$SELECT hopper.set_checkpoint_state('$$ || :'bare_uuid' || $$', 'DELETED')$$);
SELECT pg_temp.try($$SELECT hopper.set_checkpoint_state('$$ || :'bare_uuid' || $$', NULL)$$);
-- Materializing needs a description of the data, and a sane one.
SELECT hopper.create_checkpoint(model_state, metadata => '{"data": {"response_type": "ranking", "dependent_varname": "y", "dependent_vartype": "text"}}') AS odd_uuid FROM reg_m \gset
SELECT pg_temp.try($$SELECT hopper.materialize_checkpoint('$$ || :'odd_uuid' || $$', 'reg_odd')$$);
SELECT hopper.create_checkpoint(model_state, metadata => '{"data": {"response_type": "classification", "dependent_varname": "y", "dependent_vartype": "text"}}') AS odd_uuid FROM reg_m \gset
SELECT pg_temp.try($$SELECT hopper.materialize_checkpoint('$$ || :'odd_uuid' || $$', 'reg_odd')$$);
SELECT hopper.create_checkpoint(model_state, metadata => '{"data": {"response_type": "regression", "dependent_varname": "y", "dependent_vartype": "text; drop table reg_m"}}') AS odd_uuid FROM reg_m \gset
SELECT pg_temp.try($$SELECT hopper.materialize_checkpoint('$$ || :'odd_uuid' || $$', 'reg_odd')$$);
SELECT hopper.create_checkpoint(model_state, metadata => '{"data": {"response_type": "regression", "dependent_varname": "y", "dependent_vartype": "nosuchtype"}}') AS odd_uuid FROM reg_m \gset
SELECT pg_temp.try($$SELECT hopper.materialize_checkpoint('$$ || :'odd_uuid' || $$', 'reg_odd')$$);
SELECT count(*) AS leftovers FROM pg_class WHERE relname LIKE 'reg\_odd%';
-- fit's registry arguments.
SELECT pg_temp.try($$CALL hopper.fit('reg_packed', 'reg_e', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 1, checkpoint_frequency => -1)$$);
SELECT pg_temp.try($$CALL hopper.fit('reg_packed', 'reg_e', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 1, searcher_metric => 'f1')$$);
SELECT pg_temp.try($$CALL hopper.fit('reg_packed', 'reg_e', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 1, searcher_metric => 'accuracy')$$);
SELECT pg_temp.try($$CALL hopper.fit('reg_packed', 'reg_e', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 1, searcher_metric => 'validation_loss')$$);
SELECT pg_temp.try($$CALL hopper.fit('reg_packed', 'reg_e', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 1, warm_start_checkpoint => gen_random_uuid())$$);
SELECT pg_temp.try($$CALL hopper.fit('reg_packed', 'reg_e', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 1, warm_start_checkpoint => '$$ || :'warm_uuid' || $$')$$);
SELECT pg_temp.try($$CALL hopper.fit('reg_packed', 'reg_m', '{"input_dim": 2, "layers": [{"units": 4, "activation": "tanh"}, {"units": 2, "activation": "softmax"}]}', '', '', 1, warm_start => true, warm_start_checkpoint => '$$ || :'warm_uuid' || $$')$$);
SELECT pg_temp.try($$CALL hopper.fit_multiple('reg_packed', 'reg_e', 'reg_mst', 1, warm_start_run => -1)$$);
SELECT pg_temp.try($$CALL hopper.fit_multiple('reg_packed', 'reg_multi', 'reg_mst', 1, warm_start => true, warm_start_run => $$ || :multi_run || $$)$$);
SELECT count(*) AS leftovers FROM pg_class WHERE relname LIKE 'reg\_e%';
-- A configuration the run does not have starts fresh.
INSERT INTO reg_mst VALUES (3, 2, $$optimizer='SGD(lr=0.05)', metrics=['accuracy']$$, 'batch_size=10');
CALL hopper.fit_multiple('reg_packed', 'reg_multi_3', 'reg_mst', 1, metrics_compute_frequency => 1, warm_start_run => :multi_run, name => 'reg_multi_3');
SELECT mst_key, warm_start_checkpoint_id IS NOT NULL AS warm FROM hopper.trials
WHERE run_id = (SELECT run_id FROM hopper.runs WHERE name = 'reg_multi_3') ORDER BY 1;

-- Objects in the caller's search_path cannot stand in for what the registry uses.
CREATE SCHEMA reg_evil;
CREATE FUNCTION reg_evil.hijack(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS
  $$ BEGIN RAISE EXCEPTION 'hijacked'; END $$;
CREATE OPERATOR reg_evil.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = reg_evil.hijack);
CREATE FUNCTION reg_evil.lower(text) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked'; END $$;
CREATE FUNCTION reg_evil.count(bigint) RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'hijacked'; END $$;
SET search_path = reg_evil, pg_catalog, public;
SELECT hopper.create_model('reg-evil') > 0 AS created;
SELECT hopper.register_model_version('reg-evil', (SELECT uuid FROM hopper.latest_checkpoints l WHERE l.run_name OPERATOR(pg_catalog.=) 'reg_fit')) AS version;
SELECT count(*) OPERATOR(pg_catalog.>) 0 AS listed FROM hopper.list_checkpoints(run_id => :fit_run, order_by => 'validation.loss');
SELECT length(hopper.model_version_state('reg-evil', 1)) OPERATOR(pg_catalog.>) 0 AS loaded;
SELECT count(*) AS collected FROM hopper.gc_checkpoints(:fit_run, dry_run => true);
SELECT hopper.delete_model('reg-evil');
RESET search_path;
DROP SCHEMA reg_evil CASCADE;

-- An aborted fit leaves no registry rows when it ran in one transaction.
BEGIN;
CALL hopper.fit('reg_packed', 'reg_rolled_back', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}', '', '', 1, name => 'reg_rolled_back');
SELECT count(*) AS inside FROM hopper.checkpoints_expanded WHERE run_name = 'reg_rolled_back';
ROLLBACK;
SELECT count(*) AS after FROM hopper.runs WHERE name = 'reg_rolled_back';

-- A run whose session ended before it completed (error, cancel, crash) is marked INTERRUPTED by
-- hopper.mark_interrupted_runs(), which every new run of its owner calls.
INSERT INTO hopper.runs (method, source_table, model_output_table, num_iterations, metrics_compute_frequency,
                         checkpoint_frequency, searcher_metric, smaller_is_better, data, backend_pid, backend_start)
VALUES ('fit', 'reg_packed', 'reg_gone', 1, 1, 1, 'validation.loss', true, '{}', 0, '2000-01-01');
SELECT hopper.mark_interrupted_runs() >= 1 AS marked;
SELECT state, end_time IS NOT NULL AS ended FROM hopper.runs WHERE model_output_table = 'reg_gone';
SELECT hopper.mark_interrupted_runs() AS again;
DELETE FROM hopper.runs WHERE model_output_table = 'reg_gone';

-- Data-parallel training is recorded and checkpointed like fit.
CALL hopper.fit_data_parallel('reg_packed', 'reg_dp', '{"input_dim": 2, "layers": [{"units": 2, "activation": "softmax"}]}',
                              '', '', 2, name => 'reg_dp', checkpoint_frequency => 1);
SELECT r.method, r.state, r.backend_pid = pg_backend_pid() AS this_session,
       (SELECT count(*) FROM hopper.checkpoints_expanded c WHERE c.run_id = r.run_id) AS checkpoints
FROM hopper.runs r WHERE r.name = 'reg_dp';

DROP OWNED BY regress_hopper_alice, regress_hopper_bob, regress_hopper_team;
DROP ROLE regress_hopper_alice;
DROP ROLE regress_hopper_bob;
DROP ROLE regress_hopper_team;
