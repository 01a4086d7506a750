CREATE TYPE hopper.vector_total AS (count bigint, sum double precision[], mean double precision[]);
COMMENT ON TYPE hopper.vector_total IS 'result of hopper.vector_sum: number of vectors, their element-wise sum and mean';
