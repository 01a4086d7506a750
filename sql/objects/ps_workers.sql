CREATE OR REPLACE VIEW hopper.ps_workers AS
SELECT w.table_name, w.worker, w.clock, w.status, w.pid FROM hopper.ps_workers_internal() AS w;
COMMENT ON VIEW hopper.ps_workers IS
'each worker''s clock and status: ''not joined'' (no session used it yet), ''active'' (bound to the session with process id pid) or ''gone'' (its session ended; a new session may take it over)';
GRANT SELECT ON hopper.ps_workers TO PUBLIC;
