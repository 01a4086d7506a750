CREATE OR REPLACE FUNCTION hopper.ps_workers_internal(OUT table_name text, OUT worker integer, OUT clock bigint,
                                           OUT status text, OUT pid integer)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'ps_workers_internal' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION hopper.ps_workers_internal() IS
'every worker of every parameter table of this database (used by the view hopper.ps_workers)';
