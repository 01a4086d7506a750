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
CREATE OR REPLACE TRIGGER trial_rungs_keep_columns BEFORE UPDATE ON hopper.trial_rungs
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('trial_id', 'run_id', 'bracket', 'rung');
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.trial_rungs TO PUBLIC;

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
SELECT pg_catalog.pg_extension_config_dump('hopper.trial_rungs', '');
