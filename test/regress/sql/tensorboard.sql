-- hopper.tensorboard_scalars (issue 30): scalars as a TensorBoard event file on the server (the
-- bytes: test/unit/test_tensorboard.cpp; decoded end to end: test/scripts/madlib_tensorboard.sh),
-- and hopper_madlib's madlib_keras_fit with MADlib's callbacks=[TensorBoard(log_dir=...)], which
-- writes a fit's curves through it under log_dir/train and log_dir/validation. Files go under the
-- cluster's data directory, in a directory of this backend.
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS hopper_madlib;
CREATE SCHEMA test_tensorboard;
SET search_path = test_tensorboard, public;
CREATE FUNCTION refusal(stmt text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE stmt;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT current_setting('data_directory') || '/hopper_tensorboard_' || pg_backend_pid() AS dir \gset

-- ---- hopper.tensorboard_scalars ----
SELECT hopper.tensorboard_scalars(:'dir' || '/direct/', ARRAY['epoch_loss', 'epoch_loss', 'epoch_accuracy'],
                                  ARRAY[1, 2, 2]::bigint[], ARRAY[0.75, 0.5, 0.875], ARRAY[1.5e9, 1.5e9 + 1, 1.5e9 + 1])
       LIKE :'dir' || '/direct/events.out.tfevents.%.v2' AS path_in_log_dir \gset
\echo :path_in_log_dir
SELECT pg_ls_dir AS file FROM pg_ls_dir(:'dir' || '/direct') \gset
-- The version record (8 + 4 + 24 + 4 bytes), then one of 8 + 4 + 32 + 4 per scalar (tag epoch_loss)
-- and 8 + 4 + 36 + 4 (epoch_accuracy); each record starts with its data's length.
SELECT length(b) AS bytes, get_byte(b, 0) AS version_length, get_byte(b, 40) AS first_scalar_length,
       position('brain.Event:2'::bytea IN b) > 0 AS version, position('epoch_accuracy'::bytea IN b) > 0 AS tagged
FROM pg_read_binary_file(:'dir' || '/direct/' || :'file') b;
-- Without wall times the events are stamped now; an empty set of scalars is a file of its version.
SELECT length(pg_read_binary_file(hopper.tensorboard_scalars(:'dir' || '/empty', '{}', '{}', '{}'))) AS version_only;
-- Bad input.
SELECT refusal($$SELECT hopper.tensorboard_scalars('relative/dir', ARRAY['a'], ARRAY[1]::bigint[], ARRAY[1.0])$$);
SELECT refusal($$SELECT hopper.tensorboard_scalars('', ARRAY['a'], ARRAY[1]::bigint[], ARRAY[1.0])$$);
SELECT refusal(format($$SELECT hopper.tensorboard_scalars(%L, ARRAY['a', 'b'], ARRAY[1]::bigint[], ARRAY[1.0])$$, :'dir'));
SELECT refusal(format($$SELECT hopper.tensorboard_scalars(%L, ARRAY['a'], ARRAY[1]::bigint[], ARRAY[1.0], ARRAY[1.0, 2.0])$$, :'dir'));
SELECT refusal(format($$SELECT hopper.tensorboard_scalars(%L, NULL, ARRAY[1]::bigint[], ARRAY[1.0])$$, :'dir'));
SELECT refusal(format($$SELECT hopper.tensorboard_scalars(%L, ARRAY['a'], ARRAY[1]::bigint[], ARRAY[NULL]::float8[])$$, :'dir'));
SELECT refusal($$SELECT hopper.tensorboard_scalars(NULL, ARRAY['a'], ARRAY[1]::bigint[], ARRAY[1.0])$$);
-- A file where the directory would go.
SELECT regexp_replace(refusal(format($$SELECT hopper.tensorboard_scalars(%L, ARRAY['a'], ARRAY[1]::bigint[], ARRAY[1.0])$$,
                                     :'dir' || '/direct/' || :'file')), '".*"', '"<file>"') AS not_a_directory;
-- Writing server files is for superusers and pg_write_server_files, as COPY TO a file.
CREATE ROLE regress_hopper_tb_plain;
GRANT USAGE ON SCHEMA test_tensorboard, hopper TO regress_hopper_tb_plain;
SET ROLE regress_hopper_tb_plain;
SELECT refusal(format($$SELECT hopper.tensorboard_scalars(%L, ARRAY['a'], ARRAY[1]::bigint[], ARRAY[1.0])$$, :'dir' || '/plain'));
RESET ROLE;
SELECT count(*) AS plain_wrote FROM pg_ls_dir(:'dir') d WHERE d = 'plain';

-- ---- madlib_keras_fit's callbacks=[TensorBoard(log_dir=...)] ----
CREATE TABLE pts AS
SELECT g AS id, ARRAY[g % 4, (g % 4) * 2 + g % 2, g % 5]::float8[] AS x, ('c' || g % 4)::varchar AS y
FROM generate_series(1, 80) g;
SELECT madlib.training_preprocessor_dl('pts', 'pts_packed', 'y', 'x', 20);
SELECT madlib.validation_preprocessor_dl('pts', 'pts_val', 'y', 'x', 'pts_packed', 20);
SELECT madlib.load_keras_model('arch', '{"class_name": "Sequential", "config": [{"class_name": "Dense", "config": {"name": "d1", "activation": "softmax", "units": 4, "batch_input_shape": [null, 3], "use_bias": true}}], "backend": "tensorflow"}'::json);
SELECT format($$ batch_size=10, callbacks=[TensorBoard(log_dir='%s/fit')] $$, :'dir') AS fit_params \gset
SELECT madlib.madlib_keras_fit('pts_packed', 'tb_model', 'arch', 1,
    $$ loss='categorical_crossentropy', optimizer='SGD(lr=0.1)', metrics=['accuracy'] $$, :'fit_params', 3,
    FALSE, 'pts_val', 1);
-- The summary keeps fit_params as written, as MADlib's; hopper trained without the callbacks.
SELECT fit_params = :'fit_params' AS as_written, metrics_iters FROM tb_model_summary;
-- One file in train and one in validation, each the version and 2 scalars (loss, accuracy) of each of
-- the 3 evaluated iterations.
SELECT d AS split, (SELECT count(*) FROM pg_ls_dir(:'dir' || '/fit/' || d)) AS files,
       (SELECT length(pg_read_binary_file(:'dir' || '/fit/' || d || '/' || f)) FROM pg_ls_dir(:'dir' || '/fit/' || d) f) AS bytes
FROM pg_ls_dir(:'dir' || '/fit') d ORDER BY d;
-- Other callbacks, other arguments, Keras' relative default log_dir: refused before training.
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1, 'loss=''categorical_crossentropy''',
    'batch_size=10, callbacks=[EarlyStopping(monitor=''loss'')]', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1, 'loss=''categorical_crossentropy''',
    'batch_size=10, callbacks=[TensorBoard(log_dir=''/tmp/x'', histogram_freq=1)]', 1)$$);
SELECT refusal($$SELECT madlib.madlib_keras_fit('pts_packed', 'x_model', 'arch', 1, 'loss=''categorical_crossentropy''',
    'callbacks=[TensorBoard()], batch_size=10', 1)$$);
SELECT to_regclass('x_model') AS nothing_written;
-- In model selection tables callbacks stay refused (hopper_madlib writes a single fit's curves).
SELECT refusal($$SELECT madlib.load_model_selection_table('arch', 'x_mst', ARRAY[1], ARRAY['loss=''categorical_crossentropy'''],
    ARRAY['batch_size=10, callbacks=[TensorBoard(log_dir=''/tmp/x'')]'])$$);

DROP SCHEMA test_tensorboard CASCADE;
REVOKE USAGE ON SCHEMA hopper FROM regress_hopper_tb_plain;
DROP ROLE regress_hopper_tb_plain;
