-- Every row of every registry table, hashed per table: table | rows | md5. The runs are read through
-- hopper.runs (whatever table stores them) without their state, which a view computes, and the
-- checkpoints without 0.1.0's version_count (0.2.0 reads it from hopper.model_versions). Used by
-- test/scripts/upgrade.sh and test/scripts/dump_restore.sh to show that rows survive.
SELECT t, n, h FROM (
  SELECT 'tasks' AS t, count(*) AS n, md5(string_agg(x::text, '|' ORDER BY x::text)) AS h FROM hopper.tasks x
  UNION ALL SELECT 'runs', count(*), md5(string_agg((to_jsonb(x) - 'state')::text, '|' ORDER BY x.run_id))
    FROM (SELECT * FROM hopper.runs) x
  UNION ALL SELECT 'checkpoints', count(*), md5(string_agg((to_jsonb(x) - 'version_count')::text, '|' ORDER BY x.checkpoint_id))
    FROM hopper.checkpoints x
  UNION ALL SELECT 'checkpoint_chunks', count(*), md5(string_agg(x::text, '|' ORDER BY x.checkpoint_id, x.chunk_no)) FROM hopper.checkpoint_chunks x
  UNION ALL SELECT 'trials', count(*), md5(string_agg(x::text, '|' ORDER BY x.trial_id)) FROM hopper.trials x
  UNION ALL SELECT 'trial_metrics', count(*), md5(string_agg(x::text, '|' ORDER BY x.trial_id, x.iteration)) FROM hopper.trial_metrics x
  UNION ALL SELECT 'checkpoint_training', count(*), md5(string_agg(x::text, '|' ORDER BY x.checkpoint_id)) FROM hopper.checkpoint_training x
  UNION ALL SELECT 'models', count(*), md5(string_agg(x::text, '|' ORDER BY x.model_id)) FROM hopper.models x
  UNION ALL SELECT 'model_versions', count(*), md5(string_agg(x::text, '|' ORDER BY x.version_id)) FROM hopper.model_versions x
  UNION ALL SELECT 'model_aliases', count(*), md5(string_agg(x::text, '|' ORDER BY x.model_id, x.alias)) FROM hopper.model_aliases x
) f ORDER BY t;
