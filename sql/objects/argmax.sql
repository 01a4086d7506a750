CREATE OR REPLACE FUNCTION hopper.argmax(x real[]) RETURNS integer
AS 'MODULE_PATHNAME', 'argmax' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.argmax(real[]) IS '1-based position of the largest value (the first one on ties)';
