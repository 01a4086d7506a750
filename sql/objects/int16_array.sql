CREATE OR REPLACE FUNCTION hopper.int16_array(bytes bytea) RETURNS smallint[]
AS 'MODULE_PATHNAME', 'int16_array' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.int16_array(bytea) IS
'little-endian int16 bytes (Apache MADlib 2.x''s packed labels) as a one-dimensional smallint[]; an odd length is refused';
