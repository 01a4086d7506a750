CREATE OR REPLACE FUNCTION hopper.ps_clock(name text, worker integer) RETURNS bigint
AS 'MODULE_PATHNAME', 'ps_clock' LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION hopper.ps_clock(text, integer) IS
'ends worker''s current iteration and returns its new clock (never waits); wakes the workers waiting for it';
