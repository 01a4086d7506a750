-- Parameter-server tables: float4 values per int8 key in shared memory, read and updated by
-- numbered workers with BSP, SSP, SparseSSP or ASP consistency (docs/parameter_server.md); one
-- logical table may be split over several servers by a range map (ps_create_part). Needs
-- shared_preload_libraries = 'hopper'. Creating, dropping and Adds take effect at once and are not
-- undone by ROLLBACK. Every function here is VOLATILE and PARALLEL UNSAFE unless noted: they read
-- and change shared state, may wait for other sessions, and bind workers to the calling session.

CREATE FUNCTION hopper.ps_create(name text, num_keys bigint, chunk_size integer DEFAULT 1,
                                 consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                 num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create(text, bigint, integer, text, integer, integer, real) IS
'creates parameter table name with keys 0 .. num_keys-1, every value init_value; chunk c covers keys [c*chunk_size, (c+1)*chunk_size); consistency ''bsp'', ''ssp'' (needs staleness), ''sparse_ssp'' (needs staleness; waits only for the workers that wrote the chunks read) or ''asp''; workers 0 .. num_workers-1';

CREATE FUNCTION hopper.ps_create(name text, key_ranges int8range[], chunk_size integer DEFAULT 1,
                                 consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                 num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create(text, int8range[], integer, text, integer, integer, real) IS
'creates parameter table name whose keys are the union of key_ranges (bounded, disjoint); otherwise like ps_create(name, num_keys, ...)';

CREATE FUNCTION hopper.ps_create_part(name text, range_map int8range[], part integer, chunk_size integer DEFAULT 1,
                                      consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                      num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create_part' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create_part(text, int8range[], integer, integer, text, integer, integer, real) IS
'creates part number part (from 0) of a parameter table split over several servers: range_map lists every part''s keys in key order, without gap or overlap, inner boundaries multiples of chunk_size; this server holds the keys range_map[part + 1]; otherwise like ps_create';

CREATE FUNCTION hopper.ps_drop(name text, if_exists boolean DEFAULT false) RETURNS boolean
AS 'MODULE_PATHNAME', 'ps_drop' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_drop(text, boolean) IS
'drops parameter table name (owner only) and wakes its waiting workers with an error; returns false (with a notice) if it does not exist and if_exists is true';

CREATE FUNCTION hopper.ps_get(name text, worker integer, keys bigint[]) RETURNS real[]
AS 'MODULE_PATHNAME', 'ps_get' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get(text, integer, bigint[]) IS
'values of keys (sorted, unique) as worker sees them: waits until the consistency allows (BSP: every worker at this worker''s clock; SSP(s): every worker at clock - s; SparseSSP(s): every worker that wrote their chunks at clock - s, after ending the worker''s previous iteration if its last Get started one; ASP: never)';

CREATE FUNCTION hopper.ps_add(name text, worker integer, keys bigint[], deltas real[]) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add(text, integer, bigint[], real[]) IS
'value += delta for each key (sorted, unique); visible at once under SSP, SparseSSP (where it makes the worker a writer of the keys'' chunks) and ASP, when the last worker finishes the iteration under BSP (a BSP Add from a worker ahead of the slowest waits); not undone by ROLLBACK';

CREATE FUNCTION hopper.ps_clock(name text, worker integer) RETURNS bigint
AS 'MODULE_PATHNAME', 'ps_clock' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_clock(text, integer) IS
'ends worker''s current iteration and returns its new clock (never waits); wakes the workers waiting for it';

CREATE FUNCTION hopper.ps_get_chunk(name text, worker integer, chunk_ids bigint[]) RETURNS real[]
AS 'MODULE_PATHNAME', 'ps_get_chunk' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_chunk(text, integer, bigint[]) IS
'values of the keys of chunks chunk_ids (sorted, unique), chunk after chunk in key order; waits like ps_get';

CREATE FUNCTION hopper.ps_add_chunk(name text, worker integer, chunk_ids bigint[], deltas real[]) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_chunk' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_chunk(text, integer, bigint[], real[]) IS
'adds deltas (one per key of the chunks, in ps_get_chunk order) to the keys of chunks chunk_ids; like ps_add';

-- Packed forms: keys and chunk ids as 8-byte, values and deltas as 4-byte little-endian numbers in
-- bytea. They skip the per-element conversion of arrays (the C++ client uses them).
CREATE FUNCTION hopper.ps_get_bytes(name text, worker integer, keys bytea) RETURNS bytea
AS 'MODULE_PATHNAME', 'ps_get_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_bytes(text, integer, bytea) IS
'ps_get with keys packed as 8-byte little-endian integers; returns the values packed as 4-byte little-endian floats';

CREATE FUNCTION hopper.ps_add_bytes(name text, worker integer, keys bytea, deltas bytea) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_bytes(text, integer, bytea, bytea) IS
'ps_add with keys packed as 8-byte and deltas as 4-byte little-endian numbers';

CREATE FUNCTION hopper.ps_get_chunk_bytes(name text, worker integer, chunk_ids bytea) RETURNS bytea
AS 'MODULE_PATHNAME', 'ps_get_chunk_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_get_chunk_bytes(text, integer, bytea) IS
'ps_get_chunk with chunk ids packed as 8-byte little-endian integers; returns the values packed as 4-byte little-endian floats';

CREATE FUNCTION hopper.ps_add_chunk_bytes(name text, worker integer, chunk_ids bytea, deltas bytea) RETURNS void
AS 'MODULE_PATHNAME', 'ps_add_chunk_bytes' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_add_chunk_bytes(text, integer, bytea, bytea) IS
'ps_add_chunk with chunk ids packed as 8-byte and deltas as 4-byte little-endian numbers';

CREATE FUNCTION hopper.ps_tables_internal(
    OUT name text, OUT num_keys bigint, OUT key_lo bigint[], OUT key_hi bigint[], OUT chunk_size integer,
    OUT num_chunks bigint, OUT consistency text, OUT staleness integer, OUT num_workers integer,
    OUT min_clock bigint, OUT max_clock bigint, OUT memory_bytes bigint, OUT owner oid,
    OUT created_at timestamptz, OUT get_calls bigint, OUT get_keys bigint, OUT add_calls bigint,
    OUT add_keys bigint, OUT clocks bigint, OUT waits bigint, OUT late_adds bigint, OUT part integer,
    OUT map_lo bigint[], OUT map_hi bigint[])
RETURNS SETOF record AS 'MODULE_PATHNAME', 'ps_tables_internal' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 10;
COMMENT ON FUNCTION hopper.ps_tables_internal() IS
'the parameter tables of this database, read from shared memory (used by the view hopper.ps_tables)';

CREATE VIEW hopper.ps_tables AS
SELECT t.name, t.num_keys,
       ARRAY(SELECT pg_catalog.int8range(t.key_lo[i], t.key_hi[i])
             FROM pg_catalog.generate_subscripts(t.key_lo, 1) AS i ORDER BY i) AS key_ranges,
       t.chunk_size, t.num_chunks, t.consistency, t.staleness, t.num_workers, t.min_clock, t.max_clock,
       t.memory_bytes, t.owner::regrole AS owner, t.created_at, t.get_calls, t.get_keys, t.add_calls,
       t.add_keys, t.clocks, t.waits, t.late_adds, t.part,
       CASE WHEN t.part IS NOT NULL THEN
           ARRAY(SELECT pg_catalog.int8range(t.map_lo[i], t.map_hi[i])
                 FROM pg_catalog.generate_subscripts(t.map_lo, 1) AS i ORDER BY i) END AS range_map
FROM hopper.ps_tables_internal() AS t;
COMMENT ON VIEW hopper.ps_tables IS
'parameter tables of this database: settings, slowest and fastest worker clock, shared memory used, call/key counters since creation, late_adds (SparseSSP: chunks first written after a Get too far ahead had read them), and for a part of a table split over servers its part number and the range map';

CREATE FUNCTION hopper.ps_workers_internal(OUT table_name text, OUT worker integer, OUT clock bigint,
                                           OUT status text, OUT pid integer)
RETURNS SETOF record AS 'MODULE_PATHNAME', 'ps_workers_internal' LANGUAGE C VOLATILE PARALLEL SAFE ROWS 100;
COMMENT ON FUNCTION hopper.ps_workers_internal() IS
'every worker of every parameter table of this database (used by the view hopper.ps_workers)';

CREATE VIEW hopper.ps_workers AS
SELECT w.table_name, w.worker, w.clock, w.status, w.pid FROM hopper.ps_workers_internal() AS w;
COMMENT ON VIEW hopper.ps_workers IS
'each worker''s clock and status: ''not joined'' (no session used it yet), ''active'' (bound to the session with process id pid) or ''gone'' (its session ended; a new session may take it over)';

CREATE FUNCTION hopper.ps_memory(OUT memory_bytes bigint, OUT used_bytes bigint, OUT largest_free_bytes bigint,
                                 OUT max_tables integer, OUT tables integer)
RETURNS record AS 'MODULE_PATHNAME', 'ps_memory' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.ps_memory() IS
'shared memory for parameter tables (hopper.ps_memory_mb): size, bytes in use and largest free block; table slots (hopper.ps_max_tables) and tables in use, over all databases';

-- Checkpoints of parameter tables are generic checkpoints of the registry (40_registry.sql):
-- a row in hopper.checkpoints with format 'hopper_ps_v1', steps_completed = the slowest worker's
-- clock and the table's settings and clocks in metadata->'parameter_table', and the serialized
-- table (include/hopper/ps.h) in hopper.checkpoint_chunks.
CREATE FUNCTION hopper.ps_save(name text, metadata jsonb DEFAULT '{}') RETURNS uuid
AS 'MODULE_PATHNAME', 'ps_save' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_save(text, jsonb) IS
'saves parameter table name (values, BSP pending Adds, each worker''s clock, settings), as one consistent snapshot, as a COMPLETED checkpoint in hopper.checkpoints (format hopper_ps_v1; metadata plus the table''s facts under "parameter_table") and returns its uuid; the rows are written in the calling transaction';

CREATE FUNCTION hopper.ps_restore(checkpoint uuid, name text DEFAULT NULL) RETURNS text
AS 'MODULE_PATHNAME', 'ps_restore' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_restore(uuid, text) IS
'creates a parameter table (named name, or as saved) from a checkpoint written by hopper.ps_save: same settings, values, pending BSP Adds and worker clocks, all workers not joined; returns its name';
