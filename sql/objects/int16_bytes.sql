CREATE OR REPLACE FUNCTION hopper.int16_bytes(values_array smallint[]) RETURNS bytea
AS 'MODULE_PATHNAME', 'int16_bytes' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.int16_bytes(smallint[]) IS
'the array''s values (row-major) as little-endian int16 bytes, as Apache MADlib 2.x packs one-hot labels (numpy tobytes)';
