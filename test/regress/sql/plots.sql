-- hopper.learning_curves_svg on runs written with plain SQL into the caller's own registry rows
-- (issue 25). A run of a few hundred configurations crashed the server for any role: the picture
-- was built in SPI's memory, which SPI_finish freed before PostgreSQL read the result. The legend
-- names what tells the configurations apart; a configuration evaluated once is a dot.
CREATE SCHEMA test_plots;
SET search_path = test_plots, public;
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_hopper_plots;
CREATE ROLE regress_hopper_plots;
GRANT USAGE ON SCHEMA hopper TO regress_hopper_plots;
SET ROLE regress_hopper_plots;

-- Run "plots_big": 400 configurations (Adam or SGD, each its own learning rate), 30 evaluated
-- iterations each: an SVG of some 200 kB, which malloc returns to the system or hands out again
-- once SPI frees it.
INSERT INTO hopper.run_records (method, name, source_table, model_output_table, num_iterations,
                                metrics_compute_frequency, checkpoint_frequency, searcher_metric, smaller_is_better, data)
VALUES ('fit_multiple', 'plots_big', 'src', 'out_big', 30, 1, 0, 'validation_loss', true, '{}'),
       ('fit_multiple', 'plots_last', 'src', 'out_last', 30, 30, 0, 'validation_loss', true, '{}');
SELECT run_id AS big FROM hopper.runs WHERE name = 'plots_big' \gset
SELECT run_id AS last FROM hopper.runs WHERE name = 'plots_last' \gset
-- A trial's task must exist before the trial (row-level security checks it): two statements.
INSERT INTO hopper.tasks (task_type, description)
SELECT 'TRAINING', r.name || ' ' || k FROM hopper.runs r, generate_series(1, 400) k
WHERE r.name = 'plots_big' OR (r.name = 'plots_last' AND k <= 4);
INSERT INTO hopper.trials (trial_id, run_id, mst_key, model_arch, compile_params, fit_params, model_config, hparams)
SELECT t.task_id, r.run_id, c.k, '{"input_dim": 4, "layers": [{"units": 3, "activation": "softmax"}]}',
       format($$optimizer='%s(lr=%s)', metrics=['accuracy']$$, c.optimizer, c.lr), 'batch_size=16',
       jsonb_build_object('architecture', '{"input_dim": 4, "layers": [{"units": 3, "activation": "softmax"}]}'::jsonb,
                          'compile', jsonb_build_object('loss', 'softmax_cross_entropy', 'metrics', '["accuracy"]'::jsonb,
                                                        'optimizer', jsonb_build_object('name', c.optimizer, 'learning_rate', c.lr)),
                          'fit', '{"batch_size": 16, "epochs": 1}'::jsonb),
       '{}'
FROM hopper.tasks t
JOIN hopper.runs r ON t.description LIKE r.name || ' %'
CROSS JOIN LATERAL (SELECT split_part(t.description, ' ', 2)::int AS k) AS n
CROSS JOIN LATERAL (SELECT n.k, CASE WHEN n.k % 2 = 0 THEN 'Adam' ELSE 'SGD' END AS optimizer,
                           round(n.k * 0.0001, 4) AS lr) AS c
WHERE t.owner = current_user;
-- plots_big: every iteration; plots_last: only the last one (fit_multiple's default frequency).
INSERT INTO hopper.trial_metrics (trial_id, iteration, steps_completed, training_metrics, validation_metrics)
SELECT tr.trial_id, i, i * 10,
       jsonb_build_object('loss', 1.0 / (1 + i * tr.mst_key / 400.0)),
       jsonb_build_object('loss', 1.1 / (1 + i * tr.mst_key / 400.0) + 0.01 * (tr.mst_key % 7), 'accuracy', 0.5 + tr.mst_key / 1000.0)
FROM hopper.trials tr JOIN hopper.runs r ON r.run_id = tr.run_id
CROSS JOIN generate_series(1, 30) i
WHERE r.name = 'plots_big' OR (r.name = 'plots_last' AND i = 30);

-- The picture is whole, and the same on every call: a result read after it was freed is not.
SELECT hopper.learning_curves_svg(:big) AS svg \gset
SELECT length(:'svg') > 150000 AS large,
       :'svg' LIKE '<svg xmlns="http://www.w3.org/2000/svg"%</svg>' || chr(10) AS whole_document,
       (SELECT count(*) FROM regexp_matches(:'svg', '<polyline', 'g')) AS lines,
       strpos(:'svg', '>run ' || :big || ' (plots_big): validation loss</text>') > 0 AS titled;
-- Two pictures in one row: the second call reuses the memory of the first one's result if it was
-- freed (the old code: the first read back empty, or the server aborted).
SELECT a = b AS same, length(a) = length(b) AS same_length, a = :'svg' AS as_before
FROM (SELECT hopper.learning_curves_svg(:big) AS a, hopper.learning_curves_svg(:big) AS b OFFSET 0) s;
SELECT count(DISTINCT md5(x)) AS two_pictures, bool_and(length(x) > 150000) AS all_large
FROM unnest(ARRAY[hopper.learning_curves_svg(:big), hopper.learning_curves_svg(:big, 'accuracy'),
                  hopper.learning_curves_svg(:big)]) AS x;

-- The legend: the first 30 configurations, and the best (lowest last validation loss) after them;
-- each names its optimizer and learning rate, which is all that differs: no two read the same.
SELECT count(*) AS legend_entries, count(DISTINCT m[1]) AS distinct_entries
FROM regexp_matches(:'svg', '<text x="[0-9.]+" y="[0-9.]+"(?: font-weight="bold")?>(mst_key [^<]*)</text>', 'g') AS m;
SELECT (regexp_matches(:'svg', '<text x="[0-9.]+" y="[0-9.]+"(?: font-weight="bold")?>(mst_key [^<]*)</text>', 'g'))[1] AS legend
LIMIT 3;
SELECT substring(:'svg' from 'font-weight="bold">(mst_key [^<]*)</text>') AS best,
       (SELECT 'mst_key ' || mst_key FROM hopper.learning_curves
        WHERE run_id = :big AND split = 'validation' AND metric = 'loss' AND iteration = 30
        ORDER BY value, mst_key LIMIT 1) AS lowest_last_loss;
SELECT strpos(:'svg', '>... 369 more</text>') > 0 AS says_how_many_more;

-- Evaluated only at the last iteration: one dot per configuration (a line of one point draws
-- nothing), the best one larger.
SELECT hopper.learning_curves_svg(:last) AS svg \gset
SELECT (SELECT count(*) FROM regexp_matches(:'svg', '<circle class="marker', 'g')) AS dots,
       (SELECT count(*) FROM regexp_matches(:'svg', '<circle class="marker best"', 'g')) AS best_dots,
       (SELECT count(*) FROM regexp_matches(:'svg', '<polyline', 'g')) AS lines;
SELECT (regexp_matches(:'svg', '>(mst_key [^<]*)</text>', 'g'))[1] AS legend;

RESET ROLE;
DELETE FROM hopper.trial_metrics WHERE trial_id IN (SELECT trial_id FROM hopper.trials t JOIN hopper.runs r USING (run_id)
                                                    WHERE r.name IN ('plots_big', 'plots_last'));
DELETE FROM hopper.trials WHERE run_id IN (:big, :last);
DELETE FROM hopper.tasks WHERE owner = 'regress_hopper_plots';
DELETE FROM hopper.run_records WHERE run_id IN (:big, :last);
REVOKE USAGE ON SCHEMA hopper FROM regress_hopper_plots;
DROP ROLE regress_hopper_plots;
DROP SCHEMA test_plots;
