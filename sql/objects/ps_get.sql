CREATE OR REPLACE FUNCTION hopper.ps_get(name text, worker integer, keys bigint[]) RETURNS real[]
AS 'MODULE_PATHNAME', 'ps_get' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get(text, integer, bigint[]) IS
'values of keys (sorted, unique) as worker sees them: waits until the consistency allows (BSP: every worker at this worker''s clock; SSP(s): every worker at clock - s; SparseSSP(s): every worker that wrote their chunks at clock - s, after ending the worker''s previous iteration if its last Get started one; ASP: never)';
