CREATE OR REPLACE VIEW hopper.ps_tables AS
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
GRANT SELECT ON hopper.ps_tables TO PUBLIC;
