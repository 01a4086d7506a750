-- Hierarchical combine: partial -> intermediate -> final aggregation of mergeable states (vector
-- sums, model averaging, metrics), the topology that says where segments sit, the insertion rule
-- (hopper.plan_combine), the 2- or 3-level query (hopper.hierarchical_combine) and data-parallel
-- training by model averaging (hopper.fit_data_parallel).
--
-- For each kind K: hopper.K_partial(rows) -> bytea state (per segment), hopper.K_intermediate(bytea)
-- -> bytea state (per node group), hopper.K_final(bytea) -> result, and the two-level form
-- hopper.K(rows) -> result. All share K's support functions, declare combine and
-- serialize/deserialize functions and are PARALLEL SAFE. Support functions are IMMUTABLE: their
-- results depend on their arguments only.

#include "objects/vector_total.sql"
#include "objects/metrics_total.sql"
#include "objects/combine_outcome.sql"

-- ---------------------------------------------------------------------------------------------
#include "objects/vector_sum.sql"

-- ---------------------------------------------------------------------------------------------
#include "objects/model_average.sql"

-- ---------------------------------------------------------------------------------------------
#include "objects/metrics.sql"

-- ---------------------------------------------------------------------------------------------
-- Topology: where segments sit, and measured link costs. Empty: one group (never 3 levels).

CREATE TABLE hopper.combine_topology (
    dist_key integer NOT NULL,
    node text NOT NULL,
    node_group text NOT NULL);
COMMENT ON TABLE hopper.combine_topology IS
'where segments sit: each dist_key on one node, each node in one group (a rack, a region); empty: every segment in one group';
CREATE TABLE hopper.combine_link_costs (
    group_a text NOT NULL,
    group_b text NOT NULL,
    cost double precision NOT NULL);
COMMENT ON TABLE hopper.combine_link_costs IS
'measured relative cost per byte of the links between two groups (or, group_a = group_b, within one), symmetric';
-- Rows users add are kept by pg_dump.
SELECT pg_catalog.pg_extension_config_dump('hopper.combine_topology', '');
SELECT pg_catalog.pg_extension_config_dump('hopper.combine_link_costs', '');
GRANT SELECT ON hopper.combine_topology TO PUBLIC;
GRANT SELECT ON hopper.combine_link_costs TO PUBLIC;
#include "objects/plan_combine.sql"
#include "objects/hierarchical_combine.sql"
#include "objects/fit_data_parallel.sql"
