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
    -- Li et al.'s brackets (li) or MADlib's madlib_keras_automl's (madlib: hopper_madlib's).
    bracket_rule text NOT NULL DEFAULT 'li' CHECK (bracket_rule IN ('li', 'madlib')),
    -- Set when the search completes: the trial and checkpoint with the best searcher value.
    best_mst_key integer,
    best_checkpoint_id bigint REFERENCES hopper.checkpoints
);
COMMENT ON TABLE hopper.searches IS
'one row per adaptive search (hopper.fit_automl; the run is in hopper.runs): method, budget (max_iterations, eta, skip_last), bracket rule, brackets, search space and random_state, and, once it completed, its best trial and checkpoint';

CREATE OR REPLACE TRIGGER searches_keep_columns BEFORE UPDATE ON hopper.searches
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('run_id');
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.searches TO PUBLIC;

ALTER TABLE hopper.searches ENABLE ROW LEVEL SECURITY;
CREATE POLICY searches_read ON hopper.searches FOR SELECT USING (true);
CREATE POLICY searches_owner ON hopper.searches
    USING (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = searches.run_id AND hopper.may_modify(r.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = searches.run_id AND hopper.may_modify(r.owner))
                AND (best_checkpoint_id IS NULL
                     OR EXISTS (SELECT 1 FROM hopper.checkpoint_training ct JOIN hopper.trials t ON t.trial_id = ct.trial_id
                                WHERE ct.checkpoint_id = searches.best_checkpoint_id AND t.run_id = searches.run_id)));

SELECT pg_catalog.pg_extension_config_dump('hopper.searches', '');
