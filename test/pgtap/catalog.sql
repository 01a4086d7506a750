-- Catalog contracts of the extension: every function documented, markings honest, aggregates complete.
BEGIN;
SELECT plan(11);

SELECT has_schema('hopper');

-- Every function, procedure and aggregate in schema hopper has a COMMENT.
SELECT is_empty($$
  SELECT p.oid::regprocedure::text FROM pg_proc p
  WHERE p.pronamespace = 'hopper'::regnamespace AND obj_description(p.oid, 'pg_proc') IS NULL
$$, 'every hopper function has a comment');

-- One SQL function = one C function of the same name (an overloaded SQL name has one C function
-- that tells its forms apart), so that a function is found by its name in either language.
SELECT is_empty($$
  SELECT p.oid::regprocedure::text || ' -> ' || p.prosrc FROM pg_proc p
  WHERE p.pronamespace = 'hopper'::regnamespace AND p.prolang = (SELECT oid FROM pg_language WHERE lanname = 'c')
    AND p.prosrc <> p.proname
$$, 'every C function''s symbol is its SQL name');

-- Everything is SECURITY INVOKER: hopper never runs a caller's request with other rights. The one
-- exception is the trigger that locks a new model version's checkpoint, which no role may execute
-- (so none can attach it to a table of its own) and which refuses to fire anywhere else.
SELECT is_empty($$
  SELECT p.oid::regprocedure::text FROM pg_proc p
  WHERE p.pronamespace = 'hopper'::regnamespace AND p.prosecdef
    AND NOT (p.oid = 'hopper.model_versions_lock_checkpoint()'::regprocedure
             AND NOT has_function_privilege('public', p.oid, 'EXECUTE'))
$$, 'no hopper function is SECURITY DEFINER but the checkpoint lock trigger, which no role may execute');

-- Functions that write tables or run their own statements are never PARALLEL SAFE.
SELECT is_empty($$
  SELECT p.oid::regprocedure::text FROM pg_proc p
  WHERE p.pronamespace = 'hopper'::regnamespace AND p.proparallel = 's'
    AND p.proname IN ('preprocess', 'preprocess_validation', 'predict', 'evaluate', 'fit', 'fit_multiple')
$$, 'functions that run statements are not parallel safe');

-- The training and evaluation aggregates run inside parallel workers, so they must be PARALLEL SAFE.
SELECT is((SELECT string_agg(p.proname || ':' || p.proparallel::text, ',' ORDER BY p.proname) FROM pg_proc p
           WHERE p.pronamespace = 'hopper'::regnamespace AND p.prokind = 'a'
             AND p.proname IN ('train_segment', 'evaluate_models', 'evaluate_models_sums')),
          'evaluate_models:s,evaluate_models_sums:s,train_segment:s', 'training and evaluation aggregates are parallel safe');

-- Every aggregate with an internal state that can be combined declares serialize/deserialize too,
-- so PostgreSQL can run it as a parallel partial aggregate. The one exception on purpose:
-- evaluate_models_sums, which hopper runs one whole segment per process (GROUP BY dist_key) and
-- whose missing serial functions keep PostgreSQL from splitting a segment between processes.
SELECT is_empty($$
  SELECT a.aggfnoid::regprocedure::text FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
  WHERE p.pronamespace = 'hopper'::regnamespace AND a.aggtranstype = 'internal'::regtype
    AND a.aggcombinefn <> 0 AND (a.aggserialfn = 0 OR a.aggdeserialfn = 0)
    AND p.proname <> 'evaluate_models_sums'
$$, 'combinable internal-state aggregates serialize');

-- Combine functions of internal states must not be STRICT (the first state starts empty).
SELECT is_empty($$
  SELECT a.aggcombinefn::regprocedure::text FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
  JOIN pg_proc c ON c.oid = a.aggcombinefn
  WHERE p.pronamespace = 'hopper'::regnamespace AND a.aggtranstype = 'internal'::regtype AND c.proisstrict
$$, 'internal-state combine functions are not strict');

-- The training aggregate is the only one without a combine function, on purpose (sequential SGD).
SELECT is((SELECT string_agg(p.proname, ',' ORDER BY p.proname) FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid
           WHERE p.pronamespace = 'hopper'::regnamespace AND a.aggcombinefn = 0),
          'train_segment', 'only train_segment has no combine function');

-- Training runs are procedures (they commit per iteration when they can).
SELECT is((SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc
           WHERE pronamespace = 'hopper'::regnamespace AND prokind = 'p' AND proname IN ('fit', 'fit_multiple')),
          'fit,fit_multiple', 'fit and fit_multiple are procedures');

-- Pure functions of their arguments are IMMUTABLE; nothing that reads tables is.
SELECT is_empty($$
  SELECT p.oid::regprocedure::text FROM pg_proc p
  WHERE p.pronamespace = 'hopper'::regnamespace AND p.provolatile = 'i'
    AND p.proname IN ('preprocess', 'preprocess_validation', 'predict', 'evaluate')
$$, 'table-reading functions are not immutable');

SELECT * FROM finish();
ROLLBACK;
