CREATE OR REPLACE FUNCTION hopper.train_segment_transition(internal, bytea, real[], real[], integer, integer)
RETURNS internal
AS 'MODULE_PATHNAME', 'train_segment_transition' LANGUAGE C VOLATILE PARALLEL SAFE
-- Training a buffer is expensive; telling the planner so makes it run segments in parallel.
COST 1000000;
COMMENT ON FUNCTION hopper.train_segment_transition(internal, bytea, real[], real[], integer, integer) IS
'transition function of hopper.train_segment: trains the model on one packed buffer';

CREATE OR REPLACE FUNCTION hopper.train_segment_final(internal) RETURNS bytea
AS 'MODULE_PATHNAME', 'train_segment_final' LANGUAGE C VOLATILE PARALLEL SAFE;
COMMENT ON FUNCTION hopper.train_segment_final(internal) IS
'final function of hopper.train_segment: returns the trained model state';

-- No combine function: training is sequential SGD, two halves of a segment cannot be trained apart
-- and merged. Segments run in parallel as whole per-partition aggregates instead.
CREATE OR REPLACE AGGREGATE hopper.train_segment(model_state bytea, independent_var real[], dependent_var real[],
                                      mst_key integer, dist_key integer) (
    SFUNC = hopper.train_segment_transition,
    STYPE = internal,
    FINALFUNC = hopper.train_segment_final,
    FINALFUNC_MODIFY = READ_WRITE,
    PARALLEL = SAFE
);
COMMENT ON AGGREGATE hopper.train_segment(bytea, real[], real[], integer, integer) IS
'trains model_state on the packed buffers of one segment, in scan order, and returns the new model state (weights, optimizer state, counters)';
