CREATE OR REPLACE FUNCTION hopper.float32_array(bytes bytea) RETURNS real[]
AS 'MODULE_PATHNAME', 'float32_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.float32_array(bytea) IS
'little-endian float32 bytes (Apache MADlib 2.x''s packed buffers) as a one-dimensional real[]; a length not a multiple of 4 is refused';
