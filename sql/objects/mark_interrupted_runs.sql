CREATE OR REPLACE FUNCTION hopper.mark_interrupted_runs() RETURNS bigint
LANGUAGE sql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
    WITH gone AS (
        UPDATE hopper.run_records AS r SET state = 'INTERRUPTED', end_time = pg_catalog.now()
        WHERE r.state = 'ACTIVE' AND NOT hopper.run_is_live(r.run_id)
        RETURNING 1)
    SELECT pg_catalog.count(*) FROM gone
$$;
COMMENT ON FUNCTION hopper.mark_interrupted_runs() IS
'records as INTERRUPTED the caller''s ACTIVE training runs that no session is running any more (an error, a cancel, a server crash) and returns how many; every new training run calls it for its owner (hopper.runs already reads them as INTERRUPTED)';
