CREATE OR REPLACE FUNCTION hopper.sparkline(curve double precision[])
RETURNS text
AS 'MODULE_PATHNAME', 'sparkline' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION hopper.sparkline(double precision[]) IS
'a curve as one line of text: a block character per value (8 heights between the smallest and the largest), a space for NULL, NaN or infinity; e.g. SELECT mst_key, hopper.sparkline(array_agg(value ORDER BY iteration)) FROM hopper.learning_curves WHERE ... GROUP BY mst_key';
