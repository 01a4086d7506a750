CREATE OR REPLACE FUNCTION hopper.shared_buffer_cache_stats(OUT enabled boolean, OUT size_bytes bigint,
                                                 OUT used_bytes bigint, OUT buffers bigint, OUT pinned bigint,
                                                 OUT kept bigint, OUT warm_reads bigint, OUT evicted bigint,
                                                 OUT stale bigint)
AS 'MODULE_PATHNAME', 'shared_buffer_cache_stats' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION hopper.shared_buffer_cache_stats() IS
'the server''s cache of detoasted packed buffers kept between calls (hopper.shared_buffer_cache_mb): whether the server has one (it needs hopper in shared_preload_libraries), its size reserved at start, the bytes and buffers it holds, the buffers running calls hold (pinned), and since the server started: buffers fetched and kept, first reads of a training call served by a buffer an earlier call kept (warm_reads), buffers let go to make room (evicted), and buffers found but no longer the value their pointer names, fetched again (stale)';
