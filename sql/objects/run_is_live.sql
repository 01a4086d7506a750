-- Whether a training run is alive: the backend running it holds a session-level advisory lock
-- (class 18512, which no SQL function takes, so no role can fake or block it; key space 1213223473,
-- key the run id modulo 2^31) from its first transaction until it ends,
-- errs or is cancelled (src/pg/runtime/run_lock.cpp). pg_locks shows every session's advisory locks to
-- every role, and a lock is gone the moment its backend stops running the run -- unlike a process
-- id, which outlives a failed run in a session that goes on.
CREATE OR REPLACE FUNCTION hopper.run_is_live(run_id bigint) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE STRICT
BEGIN ATOMIC
    SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_locks l
                   WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 18512
                     AND l.database = (SELECT d.oid FROM pg_catalog.pg_database d
                                       WHERE d.datname = pg_catalog.current_database())
                     AND l.classid = 1213223473::oid
                     AND l.objid = (run_id % 2147483648)::oid);
END;
COMMENT ON FUNCTION hopper.run_is_live(bigint) IS
'whether the training run is being run by a session right now (the session holds the run''s advisory lock)';
