CREATE OR REPLACE FUNCTION hopper.ps_tables_internal(
    OUT name text, OUT num_keys bigint, OUT key_lo bigint[], OUT key_hi bigint[], OUT chunk_size integer,
    OUT num_chunks bigint, OUT consistency text, OUT staleness integer, OUT num_workers integer,
    OUT min_clock bigint, OUT max_clock bigint, OUT memory_bytes bigint, OUT owner oid,
    OUT created_at timestamptz, OUT get_calls bigint, OUT get_keys bigint, OUT add_calls bigint,
    OUT add_keys bigint, OUT clocks bigint, OUT waits bigint, OUT late_adds bigint, OUT part integer,
    OUT map_lo bigint[], OUT map_hi bigint[])
RETURNS SETOF record AS 'MODULE_PATHNAME', 'ps_tables_internal' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 10;
COMMENT ON FUNCTION hopper.ps_tables_internal() IS
'the parameter tables of this database, read from shared memory (used by the view hopper.ps_tables)';
