CREATE OR REPLACE FUNCTION hopper.plan_combine(
    state_bytes bigint,
    dist_keys integer[] DEFAULT NULL,
    topology_table text DEFAULT 'hopper.combine_topology',
    link_cost_table text DEFAULT 'hopper.combine_link_costs',
    coordinator_group text DEFAULT NULL,
    cost_factor double precision DEFAULT 10,
    bytes_factor double precision DEFAULT 1.5,
    min_bytes_saved bigint DEFAULT 1048576)
RETURNS jsonb
AS 'MODULE_PATHNAME', 'plan_combine' LANGUAGE C STABLE;
COMMENT ON FUNCTION hopper.plan_combine(bigint, integer[], text, text, text, double precision, double precision, bigint) IS
'whether an intermediate combine level (one merge per node group) pays for states of state_bytes produced by dist_keys (NULL: every segment of the topology), with the figures behind the decision: groups, producers per group, bytes crossing group boundaries with 2 and 3 levels, link cost ratio, each check and its threshold';
