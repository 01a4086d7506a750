CREATE OR REPLACE FUNCTION hopper.version() RETURNS text
    AS 'MODULE_PATHNAME', 'version' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.version() IS 'version of the hopper extension library';
