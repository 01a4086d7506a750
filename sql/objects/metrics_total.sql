CREATE TYPE hopper.metrics_total AS (row_count bigint, loss double precision, metrics jsonb);
COMMENT ON TYPE hopper.metrics_total IS 'result of hopper.metrics: rows evaluated, mean loss, mean of each compiled metric';
