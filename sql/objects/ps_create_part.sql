CREATE OR REPLACE FUNCTION hopper.ps_create_part(name text, range_map int8range[], part integer, chunk_size integer DEFAULT 1,
                                      consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                      num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create_part' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create_part(text, int8range[], integer, integer, text, integer, integer, real) IS
'creates part number part (from 0) of a parameter table split over several servers: range_map lists every part''s keys in key order, without gap or overlap, inner boundaries multiples of chunk_size; this server holds the keys range_map[part + 1]; otherwise like ps_create';
