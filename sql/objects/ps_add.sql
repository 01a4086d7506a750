CREATE OR REPLACE FUNCTION hopper.ps_add(name text, worker integer, keys bigint[], deltas real[]) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add(text, integer, bigint[], real[]) IS
'value += delta for each key (sorted, unique); visible at once under SSP, SparseSSP (where it makes the worker a writer of the keys'' chunks) and ASP, when the last worker finishes the iteration under BSP (a BSP Add from a worker ahead of the slowest waits); not undone by ROLLBACK';
