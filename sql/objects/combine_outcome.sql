CREATE TYPE hopper.combine_outcome AS (
    levels integer,                  -- levels that ran: 2 (partial -> final) or 3 (partial -> intermediate -> final)
    decision jsonb,                  -- the insertion rule's record (hopper.plan_combine) for the measured state size
    producers integer,               -- segments that produced a partial state
    bytes_crossing_groups bigint,    -- measured: bytes of the states sent across group boundaries
    partial_seconds double precision,
    combine_seconds double precision,
    result jsonb,                    -- the final result (model_average: a summary of the averaged model)
    model_state bytea);              -- model_average: the averaged model state
COMMENT ON TYPE hopper.combine_outcome IS 'what hopper.hierarchical_combine ran, why, what crossed group boundaries, and the result';
