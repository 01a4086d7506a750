-- Shared views do not depend on other roles' good behaviour: every role reads every row of the
-- registry and writes its own rows' JSON, so one role's malformed metrics or data facts must not
-- make another role's unfiltered query of a view fail (a metrics row that was a JSON array made
-- every SELECT of hopper.learning_curves fail with 22023). Alice writes what she can into her own
-- run, checkpoint and model; Bob then reads every view of schema hopper, and the listings sorted by
-- a metric. In a database of its own.
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS hopper_shared_views;
CREATE DATABASE hopper_shared_views;
\c hopper_shared_views
CREATE EXTENSION hopper;
SET client_min_messages = warning;
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE stmt;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN 'ok, ' || n || ' rows';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
DROP ROLE IF EXISTS hopper_sv_alice;
DROP ROLE IF EXISTS hopper_sv_bob;
CREATE ROLE hopper_sv_alice;
CREATE ROLE hopper_sv_bob;
GRANT USAGE ON SCHEMA hopper TO hopper_sv_alice, hopper_sv_bob;
GRANT CREATE, USAGE ON SCHEMA public TO hopper_sv_alice, hopper_sv_bob;
GRANT EXECUTE ON FUNCTION try(text) TO PUBLIC;

-- Alice trains (a run, its trial, metrics and checkpoints), then writes malformed rows of her own.
SET ROLE hopper_sv_alice;
CREATE TABLE alice_src AS SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 120) g;
SELECT hopper.preprocess('alice_src', 'alice_packed', 'y', 'x', buffer_size => 20, num_segments => 2);
CALL hopper.fit('alice_packed', 'alice_m', '{"input_dim": 2, "layers": [{"units": 3, "activation": "softmax"}]}',
                $$optimizer='SGD(lr=0.1)', metrics=['accuracy']$$, '', 2, name => 'alice run');
SELECT trial_id AS alice_trial FROM hopper.trials t JOIN hopper.runs r USING (run_id) WHERE r.name = 'alice run' \gset
-- Metrics that are not objects: refused by the table (23514).
SELECT try(format($$INSERT INTO hopper.trial_metrics (trial_id, iteration, steps_completed, training_metrics)
                    VALUES (%s, 100, 0, '[1, 2]')$$, :alice_trial));
SELECT try(format($$INSERT INTO hopper.trial_metrics (trial_id, iteration, steps_completed, training_metrics)
                    VALUES (%s, 100, 0, '"loss"')$$, :alice_trial));
SELECT try(format($$INSERT INTO hopper.trial_metrics (trial_id, iteration, steps_completed, training_metrics, validation_metrics)
                    VALUES (%s, 100, 0, '{}', '7')$$, :alice_trial));
-- Objects whose values are not numbers, or numbers beyond double precision (both ways): accepted,
-- and read as NULL (or 0 for what underflows), never an error.
SELECT try(format($$INSERT INTO hopper.trial_metrics (trial_id, iteration, steps_completed, training_metrics, validation_metrics)
                    VALUES (%s, 101, 0, '{"loss": 1e400, "accuracy": "high", "top_k": {"k": 5}}', '{"loss": -1e-400, "accuracy": null}')$$,
                  :alice_trial));
-- The metrics of a checkpointed iteration, as sort keys of everyone's listings.
SELECT try(format($$UPDATE hopper.trial_metrics SET training_metrics = '{"loss": "abc", "accuracy": 1e400}',
                    validation_metrics = '{"loss": [1]}' WHERE trial_id = %s AND iteration = 2$$, :alice_trial));
-- A registered checkpoint whose data facts are not numbers where the views cast them.
SELECT hopper.create_checkpoint(model_state) AS alice_uuid FROM alice_m \gset
SELECT try(format($$UPDATE hopper.checkpoints SET metadata = '{"data": {"response_type": "classification",
                    "class_values": [1, "b", {"c": 3}], "normalizing_const": "abc",
                    "feature_center": ["x", 1e50, {"a": 1}, 0.5], "feature_spread": [1e-60, 2, null]}}'
                    WHERE uuid = %L$$, :'alice_uuid'));
SELECT hopper.create_model('alice-model');
SELECT hopper.register_model_version('alice-model', :'alice_uuid');
SELECT hopper.register_model_version('alice-model', (SELECT uuid FROM hopper.latest_checkpoints l JOIN hopper.runs r USING (run_id)
                                                     WHERE r.name = 'alice run'));
RESET ROLE;

-- Bob reads every view of schema hopper, every column of every row (a whole-row reference: a count
-- alone would not compute the columns).
SET ROLE hopper_sv_bob;
SELECT c.relname AS view, try(format('SELECT count(*) FROM hopper.%I v WHERE v::text IS NOT NULL', c.relname)) AS bob_reads
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'hopper' AND c.relkind = 'v' AND has_table_privilege(c.oid, 'SELECT') ORDER BY 1;
SELECT split, metric, value FROM hopper.learning_curves WHERE trial_id = :alice_trial AND iteration IN (2, 101)
ORDER BY iteration, split, metric;
SELECT version, class_values, normalizing_const, feature_center, feature_spread
FROM hopper.model_versions_expanded WHERE model_name = 'alice-model' ORDER BY version;
-- Listings sorted by a metric, across everyone's checkpoints and versions.
SELECT try($$SELECT * FROM hopper.list_checkpoints(order_by => 'training.loss')$$) AS by_training_loss,
       try($$SELECT * FROM hopper.list_checkpoints(order_by => 'training.accuracy', descending => false)$$) AS by_training_accuracy,
       try($$SELECT * FROM hopper.list_checkpoints(order_by => 'validation.loss')$$) AS by_validation_loss;
SELECT try($$SELECT * FROM hopper.list_model_versions('alice-model', order_by => 'training.loss')$$) AS versions_by_loss;
-- The JSON casts themselves: NULL or 0, never an error, for every kind of value.
SELECT left(v::text, 12) AS v, hopper.json_float8(v) AS float8, hopper.json_float4(v) AS float4
FROM (VALUES ('1.5'::jsonb), ('-2e10'), ('1e400'), ('-1e400'), ('1e-400'), ('1e50'), ('1e-50'), ('"3"'), ('null'), ('true'),
             ('[1]'), ('{"a": 1}'), (NULL)) AS t(v);
RESET ROLE;

\c :regress_db
DROP DATABASE hopper_shared_views;
DROP ROLE hopper_sv_alice;
DROP ROLE hopper_sv_bob;
