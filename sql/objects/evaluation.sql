CREATE TYPE hopper.evaluation AS (mst_key integer, loss double precision, metrics jsonb, row_count bigint);
COMMENT ON TYPE hopper.evaluation IS 'loss and metrics of one model on one data set';
