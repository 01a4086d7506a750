CREATE OR REPLACE FUNCTION hopper.ps_create(name text, num_keys bigint, chunk_size integer DEFAULT 1,
                                 consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                 num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create(text, bigint, integer, text, integer, integer, real) IS
'creates parameter table name with keys 0 .. num_keys-1, every value init_value; chunk c covers keys [c*chunk_size, (c+1)*chunk_size); consistency ''bsp'', ''ssp'' (needs staleness), ''sparse_ssp'' (needs staleness; waits only for the workers that wrote the chunks read) or ''asp''; workers 0 .. num_workers-1';

CREATE OR REPLACE FUNCTION hopper.ps_create(name text, key_ranges int8range[], chunk_size integer DEFAULT 1,
                                 consistency text DEFAULT 'bsp', staleness integer DEFAULT NULL,
                                 num_workers integer DEFAULT 1, init_value real DEFAULT 0)
RETURNS void AS 'MODULE_PATHNAME', 'ps_create' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_create(text, int8range[], integer, text, integer, integer, real) IS
'creates parameter table name whose keys are the union of key_ranges (bounded, disjoint); otherwise like ps_create(name, num_keys, ...)';
