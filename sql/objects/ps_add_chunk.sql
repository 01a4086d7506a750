CREATE OR REPLACE FUNCTION hopper.ps_add_chunk(name text, worker integer, chunk_ids bigint[], deltas real[]) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_chunk' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_chunk(text, integer, bigint[], real[]) IS
'adds deltas (one per key of the chunks, in ps_get_chunk order) to the keys of chunks chunk_ids; like ps_add';
