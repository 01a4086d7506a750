-- hopper.fit_automl: successive halving and Hyperband by model hopping. The plan of brackets and
-- rungs, the decisions (ranking, survivors), survivors continuing from their states (never from
-- scratch), bracket packing that changes the schedule and not the results, output tables like
-- fit_multiple's, the best trial registered as a model version, every bad input refused before
-- anything trains, and other roles kept out of a search's rows.
CREATE SCHEMA test_automl;
SET search_path = test_automl, public;
SET client_min_messages = warning;

CREATE TABLE am_points AS
SELECT g AS id, ARRAY[(g % 3) * 3.0 + sin(g * 1.3) * 1.5, ((g % 3) = 1)::int * 2.0 + cos(g) * 1.5]::float8[] AS x,
       (ARRAY['red', 'green', 'blue'])[g % 3 + 1] AS label
FROM generate_series(1, 600) g;
SELECT hopper.preprocess('am_points', 'am_packed', 'label', 'x', buffer_size => 50, num_segments => 3,
                         scale => 'standardize', seed => 5);
CREATE TABLE am_valid AS SELECT * FROM am_points WHERE id % 5 = 0;
SELECT hopper.preprocess_validation('am_valid', 'am_valid_packed', 'label', 'x', 'am_packed');
SELECT hopper.load_model_arch('am_arch', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"},
                                                                       {"units": 3, "activation": "softmax"}]}');
SELECT hopper.load_model_arch('am_arch', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}');

-- ---- Hyperband with its defaults (max_iterations 9, eta 3), searched on validation accuracy ----
CALL hopper.fit_automl('am_packed', 'am_hb', 'am_arch', model_id_list => '{1,2}',
    compile_params_grid => '{"loss": "categorical_crossentropy", "optimizer": ["sgd", "adam"],
                             "learning_rate": {"log_uniform": [0.001, 0.3]}, "metrics": ["accuracy"]}',
    fit_params_grid => '{"batch_size": [16, 64]}', validation_table => 'am_valid_packed',
    random_state => 7, searcher_metric => 'accuracy', name => 'hb');
SELECT run_id AS hb_run FROM hopper.runs WHERE name = 'hb' \gset

SELECT method, state, searcher_metric, smaller_is_better, num_iterations FROM hopper.runs WHERE run_id = :hb_run;
SELECT automl_method, max_iterations, eta, skip_last, num_brackets, num_configs, model_iterations, search_type,
       random_state, pack_brackets, best_mst_key IS NOT NULL AS has_best
FROM hopper.searches WHERE run_id = :hb_run;
-- Li et al.'s brackets for R = 9, eta = 3: 9 configurations at 1, 3, 9 iterations; 5 at 3, 9; 3 at 9.
SELECT bracket, rung, budget, iterations_in_rung, num_configs, num_promoted, state, cardinality(mst_keys) AS trials,
       cardinality(survivors) AS survivors
FROM hopper.search_brackets WHERE run_id = :hb_run ORDER BY bracket DESC, rung;
-- The survivors of a rung are its best num_promoted by rank, and exactly the trials of the next rung.
SELECT b.bracket, b.rung,
       b.survivors = b.ranking[1:b.num_promoted] AS best_go_on,
       b.survivors = n.mst_keys AS next_rung_trains_them
FROM hopper.search_brackets b JOIN hopper.search_brackets n
  ON n.run_id = b.run_id AND n.bracket = b.bracket AND n.rung = b.rung + 1
WHERE b.run_id = :hb_run ORDER BY b.bracket DESC, b.rung;
-- Ranks follow the searcher value (larger accuracy first).
SELECT bool_and(ok) AS ranked_by_value FROM (
    SELECT x.searcher_value >= lead(x.searcher_value) OVER (PARTITION BY x.bracket, x.rung ORDER BY x.rank)
           OR lead(x.searcher_value) OVER (PARTITION BY x.bracket, x.rung ORDER BY x.rank) IS NULL AS ok
    FROM hopper.trial_rungs x WHERE x.run_id = :hb_run) r;
-- Each trial: stopped at the rung it lost, or completed its bracket; iterations = that rung's budget.
SELECT status, stopped_at_rung, iterations, count(*) FROM hopper.search_trials WHERE run_id = :hb_run
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
-- Survivors continue from their state: a trial's steps at a rung's end are proportional to the
-- iterations it trained in all (a restart from scratch would count only the rung's own iterations).
SELECT bool_and(ct.iteration = x.iteration) AS checkpoint_at_budget,
       bool_and(c.steps_completed = x.iteration * first.steps_completed / first.iteration) AS steps_accumulate,
       count(*) AS checkpoints
FROM hopper.trial_rungs x
JOIN hopper.checkpoint_training ct ON ct.checkpoint_id = x.checkpoint_id
JOIN hopper.checkpoints c ON c.checkpoint_id = x.checkpoint_id
JOIN LATERAL (SELECT y.iteration, c0.steps_completed FROM hopper.trial_rungs y
              JOIN hopper.checkpoints c0 ON c0.checkpoint_id = y.checkpoint_id
              WHERE y.trial_id = x.trial_id ORDER BY y.rung LIMIT 1) first ON true
WHERE x.run_id = :hb_run;
-- Model-epochs trained: the plan's, as nothing diverged.
SELECT sum(iterations_in_rung * num_configs) = (SELECT model_iterations FROM hopper.searches WHERE run_id = :hb_run)
       AS model_iterations_as_planned
FROM hopper.search_brackets WHERE run_id = :hb_run;
-- Learning curves: at every rung's end of each trial.
SELECT count(*) = (SELECT count(*) FROM hopper.trial_rungs WHERE run_id = :hb_run) AS one_point_per_rung
FROM hopper.trial_metrics m JOIN hopper.trials t USING (trial_id) WHERE t.run_id = :hb_run;
-- Output tables in fit_multiple's shape; the model selection table the search drew.
SELECT count(*) AS models, count(DISTINCT mst_key) AS keys FROM am_hb;
SELECT status, count(*) FROM am_hb_info GROUP BY 1 ORDER BY 1;
SELECT method, num_models, num_segments, num_iterations, validation_table FROM am_hb_summary;
-- The summary's figures are the search's: metrics_iters every iteration any trial was evaluated at
-- (the union of the info table's), the call's metrics_compute_frequency (left out: 0), its training
-- and evaluation seconds (they read 0, taken from no trained run), and no hops_per_iteration (a
-- ring iteration hops as many times as there are trials in training; it read 0).
SELECT s.metrics_iters = (SELECT array_agg(DISTINCT it ORDER BY it) FROM am_hb_info, unnest(metrics_iters) it)
         AS every_evaluated_iteration,
       s.metrics_compute_frequency, s.training_seconds > 0 AS trained_seconds,
       s.evaluation_seconds > 0 AS evaluated_seconds, s.hops_per_iteration IS NULL AS hops_vary
FROM am_hb_summary s;
SELECT count(*) AS configurations, (SELECT search_type FROM am_hb_mst_summary) FROM am_hb_mst;
-- The best trial is ready to register and to predict with.
SELECT (SELECT mst_key FROM hopper.search_trials WHERE run_id = :hb_run ORDER BY searcher_value DESC, iterations DESC, mst_key LIMIT 1)
       = best_mst_key AS best_is_top FROM hopper.searches WHERE run_id = :hb_run;
SELECT c.uuid AS best_uuid FROM hopper.searches s JOIN hopper.checkpoints c ON c.checkpoint_id = s.best_checkpoint_id
WHERE s.run_id = :hb_run \gset
SELECT hopper.create_model('am_best') > 0 AS created;
SELECT hopper.register_model_version('am_best', :'best_uuid') AS version;
SELECT hopper.materialize_model_version('am_best', 'am_best_model');
SELECT hopper.predict('am_best_model', 'am_valid', 'id', 'x', 'am_best_pred');
SELECT count(*) AS predicted, avg((estimated_label = v.label)::int) > 0.5 AS mostly_right
FROM am_best_pred p JOIN am_valid v USING (id);

-- ---- bracket packing changes the schedule, not the results ----
CALL hopper.fit_automl('am_packed', 'am_hb_seq', 'am_arch', model_id_list => '{1,2}',
    compile_params_grid => '{"loss": "categorical_crossentropy", "optimizer": ["sgd", "adam"],
                             "learning_rate": {"log_uniform": [0.001, 0.3]}, "metrics": ["accuracy"]}',
    fit_params_grid => '{"batch_size": [16, 64]}', validation_table => 'am_valid_packed',
    random_state => 7, searcher_metric => 'accuracy', pack_brackets => false, name => 'hb_seq');
SELECT run_id AS seq_run FROM hopper.runs WHERE name = 'hb_seq' \gset
SELECT count(*) AS differing_decisions FROM (
    (SELECT t.mst_key, x.rung, x.rank, x.searcher_value, x.promoted FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id) WHERE x.run_id = :hb_run
     EXCEPT SELECT t.mst_key, x.rung, x.rank, x.searcher_value, x.promoted FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id) WHERE x.run_id = :seq_run)
    UNION ALL
    (SELECT t.mst_key, x.rung, x.rank, x.searcher_value, x.promoted FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id) WHERE x.run_id = :seq_run
     EXCEPT SELECT t.mst_key, x.rung, x.rank, x.searcher_value, x.promoted FROM hopper.trial_rungs x JOIN hopper.trials t USING (trial_id) WHERE x.run_id = :hb_run)) d;
SELECT count(*) AS differing_states FROM am_hb a FULL JOIN am_hb_seq b USING (mst_key)
WHERE a.model_state IS DISTINCT FROM b.model_state;

-- ---- successive halving over a grid, on the training loss (no validation table) ----
CALL hopper.fit_automl('am_packed', 'am_sh', 'am_arch', model_id_list => '{1,2}',
    compile_params_grid => '{"loss": "categorical_crossentropy", "optimizer": "sgd", "learning_rate": [0.01, 0.1, 0.3]}',
    fit_params_grid => '{"batch_size": [16, 64]}', automl_method => 'successive_halving', search_type => 'grid',
    max_iterations => 4, eta => 2, name => 'sh');
SELECT run_id AS sh_run FROM hopper.runs WHERE name = 'sh' \gset
SELECT automl_method, num_brackets, num_configs, search_type, random_state FROM hopper.searches WHERE run_id = :sh_run;
SELECT searcher_metric, smaller_is_better FROM hopper.runs WHERE run_id = :sh_run;
SELECT bracket, rung, budget, num_configs, num_promoted, state FROM hopper.search_brackets WHERE run_id = :sh_run ORDER BY rung;
SELECT bool_and(x.searcher_value <= y.searcher_value) AS smaller_loss_first
FROM hopper.trial_rungs x JOIN hopper.trial_rungs y ON y.run_id = x.run_id AND y.rung = x.rung AND y.rank = x.rank + 1
WHERE x.run_id = :sh_run;
-- skip_last drops the last rung: the survivors of the rung before end there.
CALL hopper.fit_automl('am_packed', 'am_skip', 'am_arch', model_id_list => '{2}',
    compile_params_grid => '{"loss": "categorical_crossentropy", "optimizer": "sgd", "learning_rate": {"uniform": [0.01, 0.3]}}',
    automl_method => 'successive_halving', num_configs => 4, max_iterations => 4, eta => 2, skip_last => 1,
    random_state => 3, name => 'skip');
SELECT b.rung, b.budget, b.num_configs, b.num_promoted FROM hopper.search_brackets b JOIN hopper.runs r USING (run_id)
WHERE r.name = 'skip' ORDER BY b.rung;

-- Trials that diverge rank last, are never promoted and are never the best; a rung that promotes
-- nobody ends its bracket (the rungs after it are SKIPPED) and the search completes without a best.
CALL hopper.fit_automl('am_packed', 'am_div', 'am_arch', model_id_list => '{1}',
    compile_params_grid => '{"loss": "categorical_crossentropy", "optimizer": "sgd", "learning_rate": {"uniform": [1000000, 10000000]}}',
    automl_method => 'successive_halving', num_configs => 4, max_iterations => 2, eta => 2, random_state => 1, name => 'div');
SELECT b.rung, b.state, cardinality(b.mst_keys) AS trials, coalesce(cardinality(b.survivors), 0) AS survivors
FROM hopper.search_brackets b JOIN hopper.runs r USING (run_id) WHERE r.name = 'div' ORDER BY b.rung;
SELECT t.status, count(*), count(t.searcher_value) AS with_value FROM hopper.search_trials t JOIN hopper.runs r USING (run_id)
WHERE r.name = 'div' GROUP BY 1;
SELECT s.best_mst_key, s.best_checkpoint_id IS NULL AS no_best_checkpoint, r.state FROM hopper.searches s JOIN hopper.runs r USING (run_id) WHERE r.name = 'div';
-- Trials that all diverge inside a rung of several iterations: the search keeps its own schedule
-- (fit and fit_multiple end once every model diverged; a search completes its rungs).
CALL hopper.fit_automl('am_packed', 'am_div2', 'am_arch', model_id_list => '{1}',
    compile_params_grid => '{"loss": "categorical_crossentropy", "optimizer": "sgd", "learning_rate": {"uniform": [1000000, 10000000]}}',
    automl_method => 'successive_halving', num_configs => 2, max_iterations => 4, eta => 2, random_state => 1, name => 'div2');
SELECT b.rung, b.state, b.iterations_in_rung, cardinality(b.mst_keys) AS trials FROM hopper.search_brackets b
JOIN hopper.runs r USING (run_id) WHERE r.name = 'div2' ORDER BY b.rung;
SELECT r.state, s.best_mst_key FROM hopper.searches s JOIN hopper.runs r USING (run_id) WHERE r.name = 'div2';

-- ---- bad input: refused before anything is created or trained ----

-- Inside a transaction block (or a function) a search runs in that one transaction: no commits,
-- and a ROLLBACK leaves nothing behind.
BEGIN;
CALL hopper.fit_automl('am_packed', 'am_tx', 'am_arch', model_id_list => '{2}',
    compile_params_grid => '{"loss": "categorical_crossentropy", "learning_rate": {"uniform": [0.01, 0.3]}}',
    automl_method => 'successive_halving', num_configs => 2, max_iterations => 2, eta => 2, random_state => 5, name => 'tx');
SELECT count(*) AS trained FROM am_tx;
ROLLBACK;
SELECT to_regclass('am_tx') IS NULL AS rolled_back, (SELECT count(*) FROM hopper.runs WHERE name = 'tx') AS runs;
-- With its defaults: every architecture of the table, and a space of Adam's learning rate (random
-- search: log-uniform over [1e-4, 0.1]; grid: four values), said in a NOTICE.
CALL hopper.fit_automl('am_packed', 'am_defaults', 'am_arch', automl_method => 'successive_halving',
    max_iterations => 2, eta => 2, random_state => 3, name => 'defaults');
SELECT s.model_id_list, s.compile_params_grid FROM hopper.searches s JOIN hopper.runs r USING (run_id)
WHERE r.name = 'defaults';
SELECT bool_and(compile_params::jsonb ->> 'optimizer' = 'adam') AS adam,
       bool_and((compile_params::jsonb ->> 'learning_rate')::float8 BETWEEN 0.0001 AND 0.1) AS learning_rates_in_range
FROM am_defaults_mst;
\set VERBOSITY terse
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', eta => 1);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_packed');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', max_iterations => 2);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', max_iterations => 0);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', max_iterations => 2000000);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', automl_method => 'hyperopt');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', automl_method => 'bayes');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', num_configs => 5);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}',
                       automl_method => 'successive_halving', num_brackets => 2);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}',
                       automl_method => 'successive_halving', num_configs => 2);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', skip_last => 5);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', num_brackets => 9);
-- Empty or too small search spaces.
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{}', compile_params_grid => '{}');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{"optimizer": []}');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{"optimizer": ["sgd", "adam"]}');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{"optimizer": ["sgd", "adam"]}',
                       search_type => 'grid');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{"optimizer": ["sgd", "adam"]}',
                       search_type => 'grid', automl_method => 'successive_halving', num_configs => 3);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{7}', compile_params_grid => '{}');
-- A searcher metric the configurations do not compute.
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', random_state => 1,
                       compile_params_grid => '{"learning_rate": {"log_uniform": [0.001, 0.3]}}', searcher_metric => 'accuracy');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', random_state => 1,
                       compile_params_grid => '{"learning_rate": {"log_uniform": [0.001, 0.3]}}', searcher_metric => 'validation_loss');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', random_state => 1,
                       compile_params_grid => '{"learning_rate": {"log_uniform": [0.001, 0.3]}}', metrics_compute_frequency => -1);
-- Missing arguments, tables that do not exist or already do.
CALL hopper.fit_automl(NULL, 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}');
CALL hopper.fit_automl('am_packed', NULL, 'am_arch', model_id_list => '{1}', compile_params_grid => '{}');
CREATE TABLE am_no_archs (model_id serial, model_arch jsonb);
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_no_archs', compile_params_grid => '{}');
CALL hopper.fit_automl('am_nowhere', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}');
CALL hopper.fit_automl('am_packed', 'am_hb', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', 'am_hb_mst', model_id_list => '{1}', compile_params_grid => '{}');
CALL hopper.fit_automl('am_packed', 'am_bad', 'am_arch', model_id_list => '{1}', compile_params_grid => '{}', validation_table => 'am_valid');
-- Continuing: unknown run, a run that is not a search, a completed one, other arguments with it.
CALL hopper.fit_automl(run_id => 999999);
CALL hopper.fit('am_packed', 'am_single', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                '', '', 1, name => 'single');
SELECT run_id AS single_run FROM hopper.runs WHERE name = 'single' \gset
-- (SQLSTATEs only where the message names a run id: ids differ between plain PostgreSQL and Citus runs.)
\set VERBOSITY sqlstate
CALL hopper.fit_automl(run_id => :single_run);
CALL hopper.fit_automl(run_id => :hb_run);
\set VERBOSITY terse
CALL hopper.fit_automl(run_id => :hb_run, max_iterations => 27);
\set VERBOSITY default
SELECT count(*) AS searches_recorded, to_regclass('am_bad') IS NULL AS no_output,
       to_regclass('am_bad_mst') IS NULL AS no_selection_table
FROM hopper.runs WHERE method = 'fit_automl' AND source_table LIKE 'test_automl.%';

-- ---- other roles ----
SET client_min_messages = warning;
DROP ROLE IF EXISTS hopper_am_mallory;
CREATE ROLE hopper_am_mallory;
GRANT USAGE ON SCHEMA test_automl, hopper TO hopper_am_mallory;
SET ROLE hopper_am_mallory;
-- Read: yes. Continue, change, plant or delete: no.
SELECT count(*) > 0 AS reads_brackets FROM hopper.search_brackets WHERE run_id = :hb_run;
\set VERBOSITY sqlstate
CALL hopper.fit_automl(run_id => :hb_run);
\set VERBOSITY terse
UPDATE hopper.search_rungs SET num_promoted = 0 WHERE run_id = :hb_run;
DELETE FROM hopper.searches WHERE run_id = :hb_run;
UPDATE hopper.trial_rungs SET promoted = NOT promoted WHERE run_id = :hb_run;
INSERT INTO hopper.trial_rungs (trial_id, run_id, bracket, rung, iteration, searcher_value, rank, promoted)
SELECT trial_id, run_id, bracket, 1, 3, 1.0, 1, true FROM hopper.trial_rungs WHERE run_id = :hb_run AND rung = 0 LIMIT 1;
INSERT INTO hopper.search_rungs (run_id, bracket, rung, num_configs, iterations, num_promoted)
VALUES (:hb_run, 7, 0, 1, 1, 0);
\set VERBOSITY default
RESET ROLE;
SELECT count(*) AS rungs, sum(num_promoted) AS promoted FROM hopper.search_rungs WHERE run_id = :hb_run;
SELECT count(*) AS decisions, count(*) FILTER (WHERE promoted) AS promoted FROM hopper.trial_rungs WHERE run_id = :hb_run;
REVOKE USAGE ON SCHEMA test_automl, hopper FROM hopper_am_mallory;
DROP ROLE hopper_am_mallory;
