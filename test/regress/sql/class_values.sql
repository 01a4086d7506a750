-- A classifier's class_values name its outputs, one each, in order. A model (or packed) summary whose
-- class_values is NULL, shorter or longer than the model's outputs is the table's error: 22004 or
-- 22023 naming class_values and both counts, before anything is written (predict wrote NULL labels
-- for the rows whose argmax had no name, under a warning about non-finite outputs).
\set regress_db :DBNAME
SET client_min_messages = warning;
DROP DATABASE IF EXISTS hopper_class_values;
CREATE DATABASE hopper_class_values;
\c hopper_class_values
CREATE EXTENSION hopper;
SET client_min_messages = warning;
CREATE FUNCTION try(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || regexp_replace(SQLERRM, '[0-9a-f]{8}-[0-9a-f-]{27}', '<uuid>', 'g');
END $$;

CREATE TABLE pts AS
SELECT g AS id, ARRAY[g % 3, g % 5]::float8[] AS x, (g % 3)::text AS y FROM generate_series(1, 600) g;
SELECT hopper.preprocess('pts', 'pts_packed', 'y', 'x', buffer_size => 100, num_segments => 2, normalizing_const => 5);
CALL hopper.fit('pts_packed', 'm', '{"input_dim": 2, "layers": [{"units": 8, "activation": "relu"}, {"units": 3, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, '', 3);

-- predict: NULL, shorter and longer class_values in the model's summary.
UPDATE m_summary SET class_values = NULL;
SELECT try($$SELECT hopper.predict('m', 'pts', 'id', 'x', 'pred_null')$$) AS null_class_values;
UPDATE m_summary SET class_values = '{0,1}';
SELECT try($$SELECT hopper.predict('m', 'pts', 'id', 'x', 'pred_short', 'prob')$$) AS shorter;
UPDATE m_summary SET class_values = '{0,1,2,3}';
SELECT try($$SELECT hopper.predict('m', 'pts', 'id', 'x', 'pred_long')$$) AS longer;
UPDATE m_summary SET class_values = '{}';
SELECT try($$SELECT hopper.predict('m', 'pts', 'id', 'x', 'pred_empty')$$) AS empty;
SELECT count(*) AS prediction_tables FROM pg_class WHERE relname LIKE 'pred%';
SELECT count(*) AS recorded_outputs FROM hopper.output_tables WHERE kind = 'predictions';
-- Restored, every row gets a label.
UPDATE m_summary SET class_values = '{0,1,2}';
SELECT hopper.predict('m', 'pts', 'id', 'x', 'pred_ok');
SELECT count(*) AS rows, count(estimated_y) AS labelled FROM pred_ok;

-- The packed summary (evaluate, and validation data packed against it).
UPDATE pts_packed_summary SET class_values = '{0,1}';
SELECT try($$SELECT * FROM hopper.evaluate('m', 'pts_packed')$$) AS evaluate_shorter;
SELECT try($$SELECT hopper.preprocess_validation('pts', 'val_packed', 'y', 'x', 'pts_packed')$$) AS validation_shorter;
UPDATE pts_packed_summary SET class_values = NULL;
SELECT try($$SELECT * FROM hopper.evaluate('m', 'pts_packed')$$) AS evaluate_null;
SELECT count(*) AS validation_tables FROM pg_class WHERE relname LIKE 'val_packed%';
UPDATE pts_packed_summary SET class_values = '{0,1,2}';

-- A checkpoint whose data facts name two classes for a model of three outputs: refused when it
-- becomes a model table, and nothing is written.
SELECT hopper.create_checkpoint(model_state, metadata => '{"data": {"response_type": "classification",
    "dependent_varname": "y", "dependent_vartype": "text", "class_values": ["0", "1"]}}') AS two_uuid FROM m \gset
SELECT try(format($$SELECT hopper.materialize_checkpoint(%L, 'from_ckpt')$$, :'two_uuid')) AS materialize_shorter;
SELECT count(*) AS from_ckpt_tables FROM pg_class WHERE relname LIKE 'from_ckpt%';
SELECT hopper.create_checkpoint(model_state, metadata => '{"data": {"response_type": "classification",
    "dependent_varname": "y", "dependent_vartype": "text", "class_values": ["0", "1", "2"]}}') AS three_uuid FROM m \gset
SELECT hopper.materialize_checkpoint(:'three_uuid', 'from_ckpt');
SELECT hopper.predict('from_ckpt', 'pts', 'id', 'x', 'pred_ckpt');
SELECT count(*) AS rows, count(estimated_y) AS labelled FROM pred_ckpt;

-- A char(n) target's labels come back whole, as the column's type without its length (bpchar): the
-- summary's "character" read as SQL is character(1), which cut 'fixed' and 'freelance' to 'f'.
CREATE TABLE jobs AS SELECT g AS id, ARRAY[g % 4]::float8[] AS x,
    (ARRAY['fixed', 'freelance', 'others', 'partime'])[1 + g % 4]::char(10) AS job FROM generate_series(1, 400) g;
SELECT hopper.preprocess('jobs', 'jobs_packed', 'job', 'x', buffer_size => 100, num_segments => 2, normalizing_const => 3);
CALL hopper.fit('jobs_packed', 'jobs_model', '{"input_dim": 1, "layers": [{"units": 8, "activation": "relu"}, {"units": 4, "activation": "softmax"}]}',
                $$optimizer='Adam(lr=0.05)', metrics=['accuracy']$$, 'batch_size=16', 20);
SELECT hopper.predict('jobs_model', 'jobs', 'id', 'x', 'jobs_pred');
SELECT format_type(atttypid, atttypmod) AS label_type FROM pg_attribute
WHERE attrelid = 'jobs_pred'::regclass AND attname = 'estimated_job';
SELECT count(DISTINCT estimated_job) >= 2 AS several_labels, bool_and(estimated_job IN ('fixed', 'freelance', 'others', 'partime')) AS whole
FROM jobs_pred;
SELECT hopper.predict('jobs_model', 'jobs', 'id', 'x', 'jobs_prob', 'prob');
SELECT format_type(atttypid, atttypmod) AS prob_label_type, bool_and(estimated_job IN ('fixed', 'freelance', 'others', 'partime')) AS whole
FROM pg_attribute, jobs_prob WHERE attrelid = 'jobs_prob'::regclass AND attname = 'estimated_job'
GROUP BY 1;

\c :regress_db
DROP DATABASE hopper_class_values;
