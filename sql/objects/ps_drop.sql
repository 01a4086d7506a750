CREATE OR REPLACE FUNCTION hopper.ps_drop(name text, if_exists boolean DEFAULT false) RETURNS boolean
AS 'MODULE_PATHNAME', 'ps_drop' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_drop(text, boolean) IS
'drops parameter table name (owner only) and wakes its waiting workers with an error; returns false (with a notice) if it does not exist and if_exists is true';
