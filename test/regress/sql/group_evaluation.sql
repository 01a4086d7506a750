-- On plain PostgreSQL the group of processes that trains an iteration's hops also evaluates the
-- models due after it, each as soon as its last visit of the iteration is done
-- (src/pg/training/hop_workers.h). Its metrics -- validation and exact training metrics, every
-- iteration -- must be bit for bit those of the statements (hopper.debug_hops = on: statements
-- train and evaluate; hopper.overlap_evaluation = off: the group trains, statements evaluate), for
-- fit and fit_multiple on 1 and 2 segments, models with different numbers of metrics; the group
-- must need no evaluation statement at all; an error in its evaluation is the statements' error.
CREATE SCHEMA test_group_evaluation;
SET search_path = test_group_evaluation, public;
SET client_min_messages = warning;

CREATE TABLE ge_points AS
SELECT g AS id, ARRAY[(g % 3) * 2.0 + sin(g * 1.7), ((g % 3) = 1)::int * 2.0 + cos(g * 0.3), sin(g * 0.11)]::float8[] AS x,
       (ARRAY['red', 'green', 'blue'])[g % 3 + 1] AS label
FROM generate_series(1, 400) g;
SELECT hopper.preprocess('ge_points', 'ge_packed1', 'label', 'x', buffer_size => 25, num_segments => 1,
                         scale => 'standardize', seed => 3);
SELECT hopper.preprocess('ge_points', 'ge_packed2', 'label', 'x', buffer_size => 25, num_segments => 2,
                         scale => 'standardize', seed => 3);
CREATE TABLE ge_valid AS
SELECT g AS id, ARRAY[(g % 3) * 2.0 + sin(g * 1.9), ((g % 3) = 1)::int * 2.0 + cos(g * 0.7), sin(g * 0.13)]::float8[] AS x,
       (ARRAY['red', 'green', 'blue'])[g % 3 + 1] AS label
FROM generate_series(1001, 1170) g;
SELECT hopper.preprocess_validation('ge_valid', 'ge_valid1', 'label', 'x', 'ge_packed1');
SELECT hopper.preprocess_validation('ge_valid', 'ge_valid2', 'label', 'x', 'ge_packed2');
SELECT num_segments FROM ge_valid2_summary;
SELECT hopper.load_model_arch('ge_arch', '{"input_dim": 3, "layers": [{"units": 8, "activation": "relu"},
                                                                      {"units": 3, "activation": "softmax"}]}') AS model_id;
-- 3 configurations (more than 2 segments) with no metric, one and three.
SELECT hopper.load_model_selection_table('ge_arch', 'ge_mst', ARRAY[1],
    ARRAY[$$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)'$$,
          $$loss='categorical_crossentropy', optimizer='SGD(lr=0.2, momentum=0.9)', metrics=['accuracy']$$,
          $$loss='categorical_crossentropy', optimizer='Adam(lr=0.005)', metrics=['accuracy', 'top_k_categorical_accuracy', 'mse'], top_k=2$$],
    ARRAY['batch_size=10']);

-- Two runs alike: the same states, and every learning curve the same to the last bit (float8
-- text is exact in PostgreSQL 15).
CREATE FUNCTION ge_same(a text, b text) RETURNS TABLE (models bigint, same_states boolean, same_curves boolean)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        $q$SELECT count(*), bool_and(a.model_state = b.model_state),
                  bool_and(ai.metrics_iters = bi.metrics_iters
                           AND ai.training_loss::text = bi.training_loss::text
                           AND ai.training_metrics::text IS NOT DISTINCT FROM bi.training_metrics::text
                           AND ai.training_metrics_all::text = bi.training_metrics_all::text
                           AND ai.validation_loss::text = bi.validation_loss::text
                           AND ai.validation_metrics::text IS NOT DISTINCT FROM bi.validation_metrics::text
                           AND ai.validation_metrics_all::text = bi.validation_metrics_all::text)
           FROM %1$I a JOIN %2$I b USING (mst_key) JOIN %3$I ai USING (mst_key) JOIN %4$I bi USING (mst_key)$q$,
        a, b, a || '_info', b || '_info');
END $$;

-- Each case three ways: <case>_stmt (statements), <case>_off (the group trains, statements
-- evaluate), <case>_group. Exact training metrics: the training table is evaluated too.
CREATE PROCEDURE ge_runs(suffix text) LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format($c$CALL hopper.fit_multiple('ge_packed1', 'fm1_%s', 'ge_mst', 3, 'ge_valid1', 1)$c$, suffix);
    EXECUTE format($c$CALL hopper.fit_multiple('ge_packed2', 'fm2_%s', 'ge_mst', 3, 'ge_valid2', 1)$c$, suffix);
    EXECUTE format($c$CALL hopper.fit('ge_packed1', 'fit1_%s', '{"input_dim": 3, "layers": [{"units": 3, "activation": "softmax"}]}',
                   $p$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$p$,
                   'batch_size=10', 3, 'ge_valid1')$c$, suffix);
    EXECUTE format($c$CALL hopper.fit('ge_packed2', 'fit2_%s', '{"input_dim": 3, "layers": [{"units": 3, "activation": "softmax"}]}',
                   $p$loss='categorical_crossentropy', optimizer='Adam(lr=0.02)', metrics=['accuracy']$p$,
                   'batch_size=10', 3, 'ge_valid2')$c$, suffix);
    -- Every second iteration only (and at the last): the models due are not always all of them.
    EXECUTE format($c$CALL hopper.fit_multiple('ge_packed2', 'fq2_%s', 'ge_mst', 3, 'ge_valid2', 2)$c$, suffix);
END $$;
SET hopper.training_metrics = exact;
SET hopper.debug_hops = on;
CALL ge_runs('stmt');
SET hopper.debug_hops = off;
SET hopper.overlap_evaluation = off;
CALL ge_runs('off');
RESET hopper.overlap_evaluation;
CALL ge_runs('group');
SELECT c, s.models, s.same_states, s.same_curves, o.same_states AS off_same_states, o.same_curves AS off_same_curves
FROM unnest(ARRAY['fm1', 'fm2', 'fit1', 'fit2', 'fq2']) c, ge_same(c || '_stmt', c || '_group') s,
     ge_same(c || '_off', c || '_group') o;
SELECT metrics_iters, array_length(validation_loss, 1) AS evaluations FROM fq2_group_info WHERE mst_key = 1;
SELECT mst_key, array_length(training_metrics, 1) AS evaluations,
       jsonb_object_keys(validation_metrics_all) AS metric FROM fm2_group_info ORDER BY 1, 3;
-- Running training metrics (the default): only the validation table is evaluated.
RESET hopper.training_metrics;
CALL hopper.fit_multiple('ge_packed2', 'run2_group', 'ge_mst', 2, 'ge_valid2', 1);
SET hopper.debug_hops = on;
CALL hopper.fit_multiple('ge_packed2', 'run2_stmt', 'ge_mst', 2, 'ge_valid2', 1);
RESET hopper.debug_hops;
SELECT * FROM ge_same('run2_stmt', 'run2_group');

-- The group needs no evaluation statement: with the evaluation aggregates out of reach (renamed
-- for the length of a transaction), the group's runs complete alike, while the statements fail.
BEGIN;
ALTER AGGREGATE hopper.evaluate_models_sums(bytea[], real[], real[]) RENAME TO evaluate_models_sums_away;
ALTER AGGREGATE hopper.evaluate_models(bytea[], real[], real[]) RENAME TO evaluate_models_away;
SET LOCAL hopper.training_metrics = exact;
CALL ge_runs('away');
SELECT c, s.* FROM unnest(ARRAY['fm1', 'fm2', 'fit1', 'fit2', 'fq2']) c, ge_same(c || '_stmt', c || '_away') s;
SAVEPOINT statements;
SET LOCAL hopper.overlap_evaluation = off;
\set VERBOSITY terse
CALL hopper.fit_multiple('ge_packed2', 'fm2_statements', 'ge_mst', 1, 'ge_valid2', 1);
\set VERBOSITY default
ROLLBACK TO statements;
ROLLBACK;

-- An error in the group's evaluation (NaN in a validation buffer) is the statements' error, and
-- leaves nothing behind.
SELECT hopper.preprocess_validation('ge_valid', 'ge_valid_nan', 'label', 'x', 'ge_packed2');
UPDATE ge_valid_nan SET independent_var[1][2] = 'NaN'
WHERE (dist_key, buffer_id) = (SELECT dist_key, buffer_id FROM ge_valid_nan ORDER BY 1 DESC, 2 DESC LIMIT 1);
\set VERBOSITY terse
CALL hopper.fit_multiple('ge_packed2', 'ge_nan_out', 'ge_mst', 2, 'ge_valid_nan', 1);
SET hopper.overlap_evaluation = off;
CALL hopper.fit_multiple('ge_packed2', 'ge_nan_out', 'ge_mst', 2, 'ge_valid_nan', 1);
RESET hopper.overlap_evaluation;
\set VERBOSITY default
SELECT to_regclass('ge_nan_out') IS NULL AS no_output_of_failed_runs;
CALL hopper.fit_multiple('ge_packed2', 'fm2_after', 'ge_mst', 3, 'ge_valid2', 1);
SET hopper.training_metrics = exact;
CALL hopper.fit_multiple('ge_packed2', 'fm2_after_exact', 'ge_mst', 3, 'ge_valid2', 1);
RESET hopper.training_metrics;
SELECT * FROM ge_same('fm2_group', 'fm2_after_exact');

-- A temporary validation table cannot be read by parallel workers: its evaluation is left to the
-- statement (the backend alone), and still the same.
CREATE TEMP TABLE ge_valid_temp AS SELECT * FROM ge_valid;
SELECT hopper.preprocess_validation('ge_valid_temp', 'pg_temp.ge_valid_temp_packed', 'label', 'x', 'ge_packed2');
SET hopper.training_metrics = exact;
CALL hopper.fit_multiple('ge_packed2', 'fm2_temp', 'ge_mst', 3, 'pg_temp.ge_valid_temp_packed', 1);
RESET hopper.training_metrics;
SELECT * FROM ge_same('fm2_group', 'fm2_temp');

-- A temporary packed training table is trained by statements (parallel workers cannot read it), in
-- working tables beside the output: temporary ones for an output in the session's temporary schema
-- (they were created UNLOGGED there, which PostgreSQL refuses).
SELECT hopper.preprocess('ge_points', 'pg_temp.ge_packed2_temp', 'label', 'x', buffer_size => 25, num_segments => 2,
                         scale => 'standardize', seed => 3);
SET hopper.training_metrics = exact;
CALL hopper.fit_multiple('pg_temp.ge_packed2_temp', 'pg_temp.fm2_temp_out', 'ge_mst', 3, 'ge_valid2', 1);
RESET hopper.training_metrics;
SELECT * FROM ge_same('fm2_group', 'fm2_temp_out');

DROP SCHEMA test_group_evaluation CASCADE;
