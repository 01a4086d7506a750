-- Adaptive model selection: hopper.fit_automl runs successive halving or Hyperband by model hopping,
-- and every decision it takes is a row here. The run itself is a row of hopper.runs (method
-- fit_automl), each configuration a row of hopper.trials (status pending, training, stopped,
-- completed or diverged), its learning curve in hopper.trial_metrics and its state at the end of
-- every rung it trained in a checkpoint (hopper.checkpoints_expanded). These tables add the plan
-- (brackets and rungs with their budgets) and the outcome of each trial at each rung (its searcher
-- value, rank and whether it survived). Rows belong to the owner of their run, as the registry's do.

CREATE TABLE hopper.searches (
    run_id bigint PRIMARY KEY REFERENCES hopper.run_records,
    automl_method text NOT NULL CHECK (automl_method IN ('hyperband', 'successive_halving')),
    max_iterations integer NOT NULL CHECK (max_iterations >= 1),
    eta integer NOT NULL CHECK (eta >= 2),
    skip_last integer NOT NULL CHECK (skip_last >= 0),
    num_brackets integer NOT NULL CHECK (num_brackets >= 1),
    -- Configurations (trials) of the whole search, and the iterations they train in all when
    -- nothing diverges (model-epochs).
    num_configs integer NOT NULL CHECK (num_configs >= 1),
    model_iterations bigint NOT NULL CHECK (model_iterations >= 1),
    model_arch_table text NOT NULL,
    model_id_list integer[] NOT NULL,
    compile_params_grid jsonb NOT NULL,
    fit_params_grid jsonb NOT NULL,
    search_type text NOT NULL CHECK (search_type IN ('grid', 'random')),
    random_state bigint,
    pack_brackets boolean NOT NULL,
    -- Set when the search completes: the trial and checkpoint with the best searcher value.
    best_mst_key integer,
    best_checkpoint_id bigint REFERENCES hopper.checkpoints
);
COMMENT ON TABLE hopper.searches IS
'one row per adaptive search (hopper.fit_automl; the run is in hopper.runs): method, budget (max_iterations, eta, skip_last), brackets, search space and random_state, and, once it completed, its best trial and checkpoint';

CREATE TABLE hopper.search_rungs (
    run_id bigint NOT NULL REFERENCES hopper.searches,
    bracket integer NOT NULL CHECK (bracket >= 0),  -- Hyperband's s: the halvings the bracket plans
    rung integer NOT NULL CHECK (rung >= 0),
    num_configs integer NOT NULL CHECK (num_configs >= 1),
    iterations integer NOT NULL CHECK (iterations >= 1),  -- each trial's iterations in all at the rung's end
    num_promoted integer NOT NULL CHECK (num_promoted >= 0),
    -- PENDING, TRAINING, COMPLETED; SKIPPED when a rung before it promoted nobody (all diverged).
    state text NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'TRAINING', 'COMPLETED', 'SKIPPED')),
    -- The trials of the rung, once known (rung 0: at the start; later: the survivors of the rung before).
    mst_keys integer[],
    start_time timestamptz,
    end_time timestamptz,
    PRIMARY KEY (run_id, bracket, rung)
);
COMMENT ON TABLE hopper.search_rungs IS
'the plan and progress of an adaptive search: one row per rung of every bracket, with its budget (iterations each trial has trained at its end), how many configurations train in it and how many go on, its state and its trials';

CREATE TABLE hopper.trial_rungs (
    trial_id bigint NOT NULL REFERENCES hopper.trials,
    run_id bigint NOT NULL,
    bracket integer NOT NULL,
    rung integer NOT NULL,
    iteration integer NOT NULL CHECK (iteration >= 1),
    searcher_value double precision,
    rank integer NOT NULL CHECK (rank >= 1),  -- 1: the best of the rung
    promoted boolean NOT NULL,                -- goes on to the next rung
    checkpoint_id bigint REFERENCES hopper.checkpoints,  -- the trial's state at the end of the rung
    PRIMARY KEY (trial_id, rung),
    FOREIGN KEY (run_id, bracket, rung) REFERENCES hopper.search_rungs
);
COMMENT ON TABLE hopper.trial_rungs IS
'the decision about each trial at each rung it trained in: its searcher value, its rank in the rung, whether it survived to the next, and the checkpoint of its state at that point';
CREATE INDEX trial_rungs_rung_idx ON hopper.trial_rungs (run_id, bracket, rung, rank);

CREATE TRIGGER searches_keep_columns BEFORE UPDATE ON hopper.searches
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('run_id');
CREATE TRIGGER search_rungs_keep_columns BEFORE UPDATE ON hopper.search_rungs
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('run_id', 'bracket', 'rung');
CREATE TRIGGER trial_rungs_keep_columns BEFORE UPDATE ON hopper.trial_rungs
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('trial_id', 'run_id', 'bracket', 'rung');

-- Everyone reads; rows are written by the owner of their run (a trial's rows by the owner of its
-- task), and may point only at that run's trials and checkpoints.
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.searches, hopper.search_rungs, hopper.trial_rungs TO PUBLIC;

ALTER TABLE hopper.searches ENABLE ROW LEVEL SECURITY;
CREATE POLICY searches_read ON hopper.searches FOR SELECT USING (true);
CREATE POLICY searches_owner ON hopper.searches
    USING (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = searches.run_id AND hopper.may_modify(r.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = searches.run_id AND hopper.may_modify(r.owner))
                AND (best_checkpoint_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.checkpoint_training ct JOIN hopper.trials t ON t.trial_id = ct.trial_id
                                WHERE ct.checkpoint_id = searches.best_checkpoint_id AND t.run_id = searches.run_id)));

ALTER TABLE hopper.search_rungs ENABLE ROW LEVEL SECURITY;
CREATE POLICY search_rungs_read ON hopper.search_rungs FOR SELECT USING (true);
CREATE POLICY search_rungs_owner ON hopper.search_rungs
    USING (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = search_rungs.run_id AND hopper.may_modify(r.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = search_rungs.run_id AND hopper.may_modify(r.owner)));

ALTER TABLE hopper.trial_rungs ENABLE ROW LEVEL SECURITY;
CREATE POLICY trial_rungs_read ON hopper.trial_rungs FOR SELECT USING (true);
CREATE POLICY trial_rungs_owner ON hopper.trial_rungs
    USING (EXISTS (SELECT 1 FROM hopper.tasks k WHERE k.task_id = trial_rungs.trial_id AND hopper.may_modify(k.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.trials t JOIN hopper.tasks k ON k.task_id = t.trial_id
                        WHERE t.trial_id = trial_rungs.trial_id AND t.run_id = trial_rungs.run_id
                          AND hopper.may_modify(k.owner))
                AND (checkpoint_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.checkpoints c WHERE c.checkpoint_id = trial_rungs.checkpoint_id
                                AND c.task_id = trial_rungs.trial_id)));

SELECT pg_catalog.pg_extension_config_dump('hopper.searches', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.search_rungs', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.trial_rungs', '');

-- Brackets, rungs, budgets and survivors of every search.
CREATE VIEW hopper.search_brackets WITH (security_invoker = true) AS
SELECT g.run_id, r.name AS run_name, s.automl_method, g.bracket, g.rung, g.iterations AS budget,
       g.iterations - coalesce(lag(g.iterations) OVER (PARTITION BY g.run_id, g.bracket ORDER BY g.rung), 0)
           AS iterations_in_rung,
       g.num_configs, g.num_promoted, g.state, g.mst_keys,
       d.ranking,
       CASE WHEN g.state = 'COMPLETED' THEN coalesce(d.survivors, '{}') END AS survivors,
       d.ranking[1] AS best_mst_key, d.best_value, r.searcher_metric, g.start_time, g.end_time
FROM hopper.search_rungs g
JOIN hopper.searches s ON s.run_id = g.run_id
JOIN hopper.run_records r ON r.run_id = g.run_id
LEFT JOIN LATERAL (
    SELECT array_agg(t.mst_key ORDER BY x.rank) AS ranking,
           array_agg(t.mst_key ORDER BY x.rank) FILTER (WHERE x.promoted) AS survivors,
           (array_agg(x.searcher_value ORDER BY x.rank))[1] AS best_value
    FROM hopper.trial_rungs x JOIN hopper.trials t ON t.trial_id = x.trial_id
    WHERE x.run_id = g.run_id AND x.bracket = g.bracket AND x.rung = g.rung) d ON true;
COMMENT ON VIEW hopper.search_brackets IS
'every rung of every bracket of every adaptive search: budget (iterations in all at its end, and in the rung), how many configurations train and survive, its state, its trials, their ranking by the searcher metric (best first), the survivors and the best value';

-- Each trial of every search: its bracket, status (stopped: at which rung), and its latest state.
CREATE VIEW hopper.search_trials WITH (security_invoker = true) AS
SELECT t.run_id, r.name AS run_name, t.trial_id, t.mst_key, b.bracket, t.status, x.rung AS last_rung,
       CASE WHEN t.status = 'stopped' THEN x.rung END AS stopped_at_rung, x.iteration AS iterations,
       x.searcher_value, x.rank, c.uuid AS checkpoint_uuid, t.model_id, t.compile_params, t.fit_params, t.hparams
FROM hopper.trials t
JOIN hopper.searches s ON s.run_id = t.run_id
JOIN hopper.run_records r ON r.run_id = t.run_id
JOIN hopper.search_rungs b ON b.run_id = t.run_id AND b.rung = 0 AND t.mst_key = ANY (b.mst_keys)
LEFT JOIN LATERAL (
    SELECT y.rung, y.iteration, y.searcher_value, y.rank, y.checkpoint_id FROM hopper.trial_rungs y
    WHERE y.trial_id = t.trial_id ORDER BY y.rung DESC LIMIT 1) x ON true
LEFT JOIN hopper.checkpoints c ON c.checkpoint_id = x.checkpoint_id;
COMMENT ON VIEW hopper.search_trials IS
'every configuration (trial) of every adaptive search: its bracket, status (stopped_at_rung for one stopped early), the last rung it completed with its iterations, searcher value and rank there, and the checkpoint of its state then (ready for hopper.register_model_version)';

GRANT SELECT ON hopper.search_brackets, hopper.search_trials TO PUBLIC;

CREATE PROCEDURE hopper.fit_automl(
    packed_table text DEFAULT NULL,
    model_output_table text DEFAULT NULL,
    model_arch_table text DEFAULT NULL,
    model_selection_table text DEFAULT NULL,
    model_id_list integer[] DEFAULT NULL,
    compile_params_grid jsonb DEFAULT NULL,
    fit_params_grid jsonb DEFAULT NULL,
    automl_method text DEFAULT NULL,
    max_iterations integer DEFAULT NULL,
    eta integer DEFAULT NULL,
    skip_last integer DEFAULT NULL,
    num_brackets integer DEFAULT NULL,
    num_configs integer DEFAULT NULL,
    search_type text DEFAULT NULL,
    random_state bigint DEFAULT NULL,
    validation_table text DEFAULT NULL,
    metrics_compute_frequency integer DEFAULT NULL,
    searcher_metric text DEFAULT NULL,
    pack_brackets boolean DEFAULT NULL,
    name text DEFAULT NULL,
    description text DEFAULT NULL,
    run_id bigint DEFAULT NULL)
AS 'MODULE_PATHNAME', 'fit_automl' LANGUAGE C;
COMMENT ON PROCEDURE hopper.fit_automl(text, text, text, text, integer[], jsonb, jsonb, text, integer, integer, integer, integer, integer, text, bigint, text, integer, text, boolean, text, text, bigint) IS
'adaptive model selection by model hopping: draws configurations from a search space (as generate_model_configs, into model_selection_table) and runs hyperband (default) or successive_halving with budget max_iterations (default 9) and eta (default 3); search_type random (default) or grid (successive_halving only); model_selection_table defaults to <model_output_table>_mst; searcher_metric as fit_multiple''s (default: the loss, on the validation table when given); each rung trains its trials together, ranks them by the searcher metric and continues the best 1/eta from their state; writes model_output_table, _info and _summary like fit_multiple and records every decision (hopper.searches, search_rungs, trial_rungs, views search_brackets and search_trials); CALLed on its own it commits after every ring iteration and run_id => continues an interrupted search from its last completed rungs; inside a transaction block or a function it runs in that one transaction';
