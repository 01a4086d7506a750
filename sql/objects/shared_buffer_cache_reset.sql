CREATE OR REPLACE FUNCTION hopper.shared_buffer_cache_reset() RETURNS bigint
AS 'MODULE_PATHNAME', 'shared_buffer_cache_reset' LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;
COMMENT ON FUNCTION hopper.shared_buffer_cache_reset() IS
'lets go of every buffer in the server''s cache of detoasted packed buffers that no running call holds, and returns how many (the next call on those tables fetches them from TOAST again); superusers only unless granted, as pg_stat_reset';
REVOKE EXECUTE ON FUNCTION hopper.shared_buffer_cache_reset() FROM PUBLIC;
