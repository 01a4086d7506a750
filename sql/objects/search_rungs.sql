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
CREATE OR REPLACE TRIGGER search_rungs_keep_columns BEFORE UPDATE ON hopper.search_rungs
    FOR EACH ROW EXECUTE FUNCTION hopper.keep_columns('run_id', 'bracket', 'rung');
GRANT SELECT, INSERT, UPDATE, DELETE ON hopper.search_rungs TO PUBLIC;

ALTER TABLE hopper.search_rungs ENABLE ROW LEVEL SECURITY;
CREATE POLICY search_rungs_read ON hopper.search_rungs FOR SELECT USING (true);
CREATE POLICY search_rungs_owner ON hopper.search_rungs
    USING (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = search_rungs.run_id AND hopper.may_modify(r.owner)))
    WITH CHECK (EXISTS (SELECT 1 FROM hopper.run_records r WHERE r.run_id = search_rungs.run_id AND hopper.may_modify(r.owner)));
SELECT pg_catalog.pg_extension_config_dump('hopper.search_rungs', '');
