CREATE OR REPLACE FUNCTION hopper.tensorboard_scalars(log_dir text, tags text[], steps bigint[], "values" float8[],
                                                      wall_times float8[] DEFAULT NULL)
RETURNS text
AS 'MODULE_PATHNAME', 'tensorboard_scalars' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.tensorboard_scalars(text, text[], bigint[], float8[], float8[]) IS
'writes scalars as a TensorBoard event file (what Keras'' TensorBoard callback writes) in log_dir on the database server, creating the directory: one event per element of the parallel arrays tags, steps and values (wall_times in seconds since 1970, default now); returns the file''s path; needs superuser or pg_write_server_files, as COPY TO a file does';
