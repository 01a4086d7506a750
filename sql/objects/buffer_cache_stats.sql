CREATE OR REPLACE FUNCTION hopper.buffer_cache_stats(OUT hits bigint, OUT misses bigint, OUT not_kept bigint,
                                          OUT kept_bytes bigint, OUT budget_bytes bigint, OUT attached boolean,
                                          OUT read_ahead_listed bigint, OUT read_ahead_kept bigint,
                                          OUT warm bigint)
AS 'MODULE_PATHNAME', 'buffer_cache_stats' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION hopper.buffer_cache_stats() IS
'how this session''s last fit, fit_multiple or fit_data_parallel used its cache of detoasted packed buffers (hopper.buffer_cache_mb): hits, buffers fetched and kept (misses), buffers fetched but not kept because the budget was full, bytes kept, the budget, whether the session holds a cache now (only while a run is going on), the buffers its read-ahead worker was given (0: none ran; hopper.read_ahead_min_mb) and kept before a reader asked for them, and warm: the buffers it found in the server''s cache at their first read, kept there by an earlier call (hopper.shared_buffer_cache_mb)';
