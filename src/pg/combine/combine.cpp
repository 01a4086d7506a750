// hopper.plan_combine and hopper.hierarchical_combine: topologies read from tables, the insertion
// rule's decision, and the 2- or 3-level query that merges per-segment partial states.
//
// The query, for kind K, partial states in a temporary table P(dist_key, state) and the topology
// passed as arrays G(dist_key, grp) (grp: the group's position in byte order of names):
//   2 levels: SELECT hopper.K_final(p.state ORDER BY p.dist_key) FROM P p JOIN G g USING (dist_key)
//   3 levels: SELECT hopper.K_final(i.state ORDER BY i.grp) FROM (
//               SELECT g.grp, hopper.K_intermediate(p.state ORDER BY p.dist_key) AS state
//               FROM P p JOIN G g USING (dist_key) GROUP BY g.grp) i
// The ORDER BYs fix the merge order (the order of the core's combine_two_level/_three_level), so
// float states are reproducible; the same query also measures the bytes of the states that cross
// group boundaries (sent from outside the coordinator's group).
#include "pg/combine/combine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "hopper/error.h"
#include "hopper/run_settings.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/names.h"
#include "pg/engine/engine.h"
#include "pg/runtime/scoped_settings.h"

namespace hopper::pg {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Adds where a topology came from to a core error's detail.
[[noreturn]] void rethrow_in(const Error& e, const std::string& where) {
    if (where.empty()) throw e;
    std::string detail = e.detail().empty() ? where : e.detail() + " " + where;
    throw Error(e.kind(), e.message(), detail, e.hint());
}

}  // namespace

Topology read_topology(Spi& spi, const std::string& topology_text, const std::string& link_cost_text,
                       std::string* topology_display) {
    std::vector<SegmentPlacement> segments;
    std::vector<LinkCost> links;
    std::string where;
    if (!topology_text.empty()) {
        TableName t = resolve_input_table(topology_text, "topology table");
        for (const char* c : {"dist_key", "node", "node_group"}) require_column(t, c, "topology table");
        where = "Topology table: " + t.display() + ".";
        if (topology_display) *topology_display = t.display();
        spi.execute("SELECT dist_key::pg_catalog.int8, node::pg_catalog.text, node_group::pg_catalog.text FROM " +
                    t.quoted());
        for (uint64_t r = 0; r < spi.rows(); ++r) {
            if (spi.is_null(r, 0) || spi.is_null(r, 1) || spi.is_null(r, 2))
                fail(ErrorKind::NullValue,
                     "topology table " + t.display() + " has a NULL dist_key, node or node_group");
            const int64_t k = spi.integer(r, 0);
            if (k < INT32_MIN || k > INT32_MAX)
                fail(ErrorKind::InvalidParameter, "topology table " + t.display() + " has dist_key " +
                                                      std::to_string(k) + ", outside the integer range");
            segments.push_back({int32_t(k), spi.text(r, 1), spi.text(r, 2)});
        }
    }
    if (!link_cost_text.empty()) {
        TableName l = resolve_input_table(link_cost_text, "link cost table");
        for (const char* c : {"group_a", "group_b", "cost"}) require_column(l, c, "link cost table");
        spi.execute("SELECT group_a::pg_catalog.text, group_b::pg_catalog.text, cost::pg_catalog.float8 FROM " +
                    l.quoted());
        for (uint64_t r = 0; r < spi.rows(); ++r) {
            if (spi.is_null(r, 0) || spi.is_null(r, 1) || spi.is_null(r, 2))
                fail(ErrorKind::NullValue, "link cost table " + l.display() + " has a NULL group_a, group_b or cost");
            links.push_back({spi.text(r, 0), spi.text(r, 1), spi.number(r, 2)});
        }
        where += (where.empty() ? "" : " ") + std::string("Link cost table: ") + l.display() + ".";
    }
    try {
        return Topology::build(std::move(segments), std::move(links));
    } catch (const Error& e) { rethrow_in(e, where); }
}

CombineOutcome run_hierarchical_combine(Spi& spi, const CombineSource& source, const CombineSettings& settings) {
    // A temporary table per nesting level (temporary tables are per session, so no other session
    // can collide; the name is the same in every run, so messages are too). Where the partial states
    // live and how the intermediate level runs is the engine's (engine.h: CombineStore).
    static int depth = 0;
    struct Nesting {
        Nesting() { ++depth; }
        ~Nesting() { --depth; }
    } nesting;
    const std::unique_ptr<Engine> engine = detect_engine(spi);
    const std::unique_ptr<CombineStore> store =
        engine->combine_store(spi, source.table, source.dist_key_column, "__hopper_combine_" + std::to_string(depth));
    std::string partials;
    const std::string K = to_string(source.kind);
    CombineOutcome out;
    // No topology given: the engine's placement of the source's segments (Citus: group = node).
    CombineSettings engine_settings;
    if (settings.topology.empty() && source.table) {
        std::vector<SegmentPlacement> placed = engine->default_topology(spi, *source.table, source.dist_key_column);
        if (!placed.empty()) {
            engine_settings = settings;
            engine_settings.topology = Topology::build(std::move(placed), {});
        }
    }
    const CombineSettings& used = engine_settings.topology.empty() ? settings : engine_settings;

    // Partial level: one state per segment, in parallel where the plan allows.
    auto t0 = Clock::now();
    std::string args;
    for (std::size_t i = 0; i < source.args.size(); ++i) args += (i ? ", " : "") + source.args[i];
    {
        // The states are stored compressed (they compress: the high bytes of small sums are all 0 or
        // all 1); lz4 where the server has it -- pglz took 4x longer than the whole partial level.
        Lz4Compression lz4;
        lz4.enter();
        partials = store->create("SELECT (" + source.dist_key_sql + ")::pg_catalog.int4 AS dist_key, hopper." + K +
                                     "_partial(" + args + ") AS state FROM " + source.from_sql + " GROUP BY 1",
                                 source.params);
        lz4.leave();
    }
    out.partial_seconds = seconds_since(t0);

    spi.execute("SELECT dist_key, pg_catalog.octet_length(state) FROM " + partials +
                " WHERE state IS NOT NULL ORDER BY dist_key");
    std::vector<int32_t> producers;
    uint64_t state_bytes = 0;
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        if (spi.is_null(r, 0))
            fail(ErrorKind::NullValue, "rows with a NULL dist_key cannot be combined",
                 "Every row must belong to a segment.");
        producers.push_back(int32_t(spi.integer(r, 0)));
        state_bytes = std::max<uint64_t>(state_bytes, uint64_t(spi.integer(r, 1)));
    }
    out.producers = int(producers.size());

    // The decision, with the measured state size.
    try {
        out.decision = plan_combine(used.topology, producers, state_bytes, used.policy);
    } catch (const Error& e) {
        rethrow_in(e, used.topology_name.empty() ? "" : "Topology table: " + used.topology_name + ".");
    }
    out.levels = used.levels.value_or(out.decision.levels);

    // Groups as positions in byte order of their names (the core's order), and the coordinator's.
    std::map<std::string, int32_t> group_index;
    for (const auto& [k, g] : out.decision.group_of) group_index.emplace(g, 0);
    int32_t next = 0;
    for (auto& [g, i] : group_index) i = next++;
    int32_t coordinator = -1;
    if (used.policy.coordinator_group) {
        auto it = group_index.find(*used.policy.coordinator_group);
        if (it != group_index.end()) coordinator = it->second;
    }
    std::vector<int32_t> keys, groups;
    for (const auto& [k, g] : out.decision.group_of) {
        keys.push_back(k);
        groups.push_back(group_index.at(g));
    }
    const std::string topology_rows =
        "ROWS FROM (pg_catalog.unnest($1::pg_catalog.int4[]), pg_catalog.unnest($2::pg_catalog.int4[])) AS g(dist_key, grp)";
    const std::string join =
        partials + " AS p JOIN " + topology_rows + " ON g.dist_key OPERATOR(pg_catalog.=) p.dist_key";
    const bool model = source.kind == CombineKind::ModelAverage;
    auto final_expr = [&](const std::string& inner) {
        std::string e = "hopper." + K + "_final(" + inner + ")";
        return model ? e : "pg_catalog.to_jsonb(" + e + ")::pg_catalog.text";
    };
    const std::string crossing = " FILTER (WHERE %.grp OPERATOR(pg_catalog.<>) " + std::to_string(coordinator) + ")";
    auto crossing_of = [&](const std::string& alias) {
        std::string c = crossing;
        c.replace(c.find('%'), 1, alias);
        return c;
    };
    std::string sql;
    if (out.levels == 2)
        sql = "SELECT " + final_expr("p.state ORDER BY p.dist_key") +
              ", pg_catalog.sum(pg_catalog.octet_length(p.state))" + crossing_of("g") + " FROM " + join;
    else
        sql = "SELECT " + final_expr("i.state ORDER BY i.grp") + ", pg_catalog.sum(pg_catalog.octet_length(i.state))" +
              crossing_of("i") + " FROM " + store->intermediate(K, keys, groups) + " AS i";
    auto t1 = Clock::now();
    spi.execute(sql, {SqlParam::int4_array(keys), SqlParam::int4_array(groups)});
    out.combine_seconds = seconds_since(t1);
    if (spi.rows() != 1)
        fail(ErrorKind::Internal, "the combine query returned " + std::to_string(spi.rows()) + " rows");
    if (!spi.is_null(0, 0)) out.result = model ? spi.bytes(0, 0) : spi.text(0, 0);
    out.bytes_crossing = spi.is_null(0, 1) ? 0 : spi.integer(0, 1);
    store->drop();
    return out;
}

}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

namespace {

CombinePolicy policy_args(FunctionCallInfo fcinfo, int coordinator, int cost_factor, int bytes_factor, int min_saved) {
    CombinePolicy p;
    if (!PG_ARGISNULL(coordinator)) p.coordinator_group = text_to_string(PG_GETARG_DATUM(coordinator));
    p.cost_factor = arg_float8_or(fcinfo, cost_factor, p.cost_factor);
    p.bytes_factor = arg_float8_or(fcinfo, bytes_factor, p.bytes_factor);
    const int64_t saved = arg_int_or(fcinfo, min_saved, int64_t(p.min_bytes_saved));
    if (saved < 0)
        fail(ErrorKind::InvalidParameter, "min_bytes_saved must not be negative",
             "It is " + std::to_string(saved) + ".");
    p.min_bytes_saved = uint64_t(saved);
    return p;
}

// A summary of an averaged model state, for hierarchical_combine's result column.
std::string model_summary_json(const std::string& state) {
    StateSummary s = inspect_state(state);
    return "{\"bytes\": " + std::to_string(s.bytes) + ", \"num_params\": " + std::to_string(s.num_params) +
           ", \"architecture\": \"" + s.config.arch.shape_string() +
           "\", \"steps\": " + std::to_string(s.counters.steps) +
           ", \"samples_seen\": " + std::to_string(s.counters.samples_seen) +
           ", \"visits\": " + std::to_string(s.counters.visits) +
           ", \"diverged\": " + (s.counters.diverged ? "true" : "false") + "}";
}

}  // namespace

// plan_combine(state_bytes bigint, dist_keys int[], topology_table text, link_cost_table text,
//              coordinator_group text, cost_factor float8, bytes_factor float8, min_bytes_saved bigint) -> jsonb
HOPPER_FUNCTION(plan_combine) {
    const int64_t state_bytes = arg_int(fcinfo, 0, "state_bytes");
    if (state_bytes < 0)
        fail(ErrorKind::InvalidParameter, "state_bytes must not be negative",
             "It is " + std::to_string(state_bytes) + ".");
    std::optional<std::vector<int64_t>> dist_keys;
    if (!PG_ARGISNULL(1)) dist_keys = int_array_to_vector(PG_GETARG_DATUM(1), "dist_keys");
    const std::string topology_text = arg_text_or(fcinfo, 2, "");
    const std::string link_text = arg_text_or(fcinfo, 3, "");
    CombinePolicy policy = policy_args(fcinfo, 4, 5, 6, 7);
    std::string json;
    {
        Spi spi;
        std::string display;
        Topology topology = read_topology(spi, topology_text, link_text, &display);
        std::vector<int32_t> producers;
        if (dist_keys) {
            for (int64_t k : *dist_keys) {
                if (k < INT32_MIN || k > INT32_MAX)
                    fail(ErrorKind::InvalidParameter,
                         "dist_key " + std::to_string(k) + " is outside the integer range");
                producers.push_back(int32_t(k));
            }
        } else {
            for (const SegmentPlacement& s : topology.segments()) producers.push_back(s.dist_key);
        }
        try {
            json = plan_combine(topology, producers, uint64_t(state_bytes), policy).to_json();
        } catch (const Error& e) { rethrow_in(e, display.empty() ? "" : "Topology table: " + display + "."); }
    }
    PG_RETURN_DATUM(string_to_jsonb(json));
}

// hierarchical_combine(source_table, kind, arguments text[], model_state bytea, levels int,
//                      topology_table, link_cost_table, coordinator_group, cost_factor, bytes_factor,
//                      min_bytes_saved, dist_key_column) -> hopper.combine_outcome
HOPPER_FUNCTION(hierarchical_combine) {
    const std::string source_text = arg_text(fcinfo, 0, "source_table");
    const CombineKind kind = parse_combine_kind(arg_text(fcinfo, 1, "kind"));
    require_not_null(fcinfo, 2, "arguments");
    const std::vector<std::string> columns = text_array_to_vector(PG_GETARG_DATUM(2), "arguments");
    const bool has_model = !PG_ARGISNULL(3);
    std::optional<int> levels;
    if (!PG_ARGISNULL(4)) {
        check_combine_levels(PG_GETARG_INT32(4), "levels");
        levels = PG_GETARG_INT32(4);
    }
    const std::string topology_text = arg_text_or(fcinfo, 5, "");
    const std::string link_text = arg_text_or(fcinfo, 6, "");
    CombinePolicy policy = policy_args(fcinfo, 7, 8, 9, 10);
    const std::string dist_key_column = arg_text_or(fcinfo, 11, "dist_key");

    // What each kind takes: columns of the source table, and for metrics the model to evaluate.
    struct Shape {
        std::size_t columns;
        const char* described;
        std::vector<const char*> casts;
        std::vector<std::vector<Oid>> types;  // accepted column types per argument
        std::vector<const char*> wanted;      // the same, for messages
    };
    const std::vector<Oid> numeric_arrays = {FLOAT8ARRAYOID, FLOAT4ARRAYOID, INT2ARRAYOID,
                                             INT4ARRAYOID,   INT8ARRAYOID,   NUMERICARRAYOID};
    const std::vector<Oid> integers = {INT2OID, INT4OID, INT8OID};
    const std::vector<Oid> float_arrays = {FLOAT4ARRAYOID, FLOAT8ARRAYOID};
    const Shape shape =
        kind == CombineKind::VectorSum
            ? Shape{1, "a vector column", {"pg_catalog.float8[]"}, {numeric_arrays}, {"a numeric array"}}
        : kind == CombineKind::ModelAverage ? Shape{2,
                                                    "a model state column and a weight column",
                                                    {"pg_catalog.bytea", "pg_catalog.int8"},
                                                    {{BYTEAOID}, integers},
                                                    {"bytea", "an integer type"}}
                                            : Shape{2,
                                                    "an independent_var column and a dependent_var column",
                                                    {"pg_catalog.float4[]", "pg_catalog.float4[]"},
                                                    {float_arrays, float_arrays},
                                                    {"real[]", "real[]"}};
    if (columns.size() != shape.columns)
        fail(ErrorKind::InvalidParameter,
             std::string("kind ") + to_string(kind) + " takes " + std::to_string(shape.columns) + " argument" +
                 (shape.columns == 1 ? "" : "s") + ", got " + std::to_string(columns.size()),
             std::string("Its arguments are ") + shape.described + " of the source table.");
    if (kind == CombineKind::Metrics && !has_model)
        fail(ErrorKind::NullValue, "model_state must not be NULL for kind metrics", "It is the model to evaluate.");
    if (kind != CombineKind::Metrics && has_model)
        fail(ErrorKind::InvalidParameter, std::string("kind ") + to_string(kind) + " takes no model_state",
             "Only kind metrics evaluates a model given apart from the rows.");
    std::string model_state;
    if (has_model) model_state = bytea_to_string(PG_GETARG_DATUM(3));

    struct Result {
        CombineOutcome outcome;
    } result;
    {
        Spi spi;
        const TableName source = resolve_source_table(source_text, "source table");
        const Oid key_type = require_column(source, dist_key_column, "source table");
        if (key_type != INT2OID && key_type != INT4OID && key_type != INT8OID)
            fail(ErrorKind::WrongType,
                 "dist_key column \"" + dist_key_column + "\" of " + source.display() + " must be an integer column");
        CombineSource src;
        src.kind = kind;
        src.from_sql = source.quoted() + " AS t";
        src.dist_key_sql = "t." + quote_ident(dist_key_column);
        src.table = source;
        src.dist_key_column = dist_key_column;
        if (kind == CombineKind::Metrics) {
            src.args.push_back("$1::pg_catalog.bytea");
            src.params.push_back(SqlParam::bytea(model_state));
        }
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const Oid type = require_column(source, columns[i], "source table");
            const std::vector<Oid>& ok = shape.types[i];
            if (std::find(ok.begin(), ok.end(), type) == ok.end())
                fail(ErrorKind::WrongType,
                     "column \"" + columns[i] + "\" of " + source.display() + " has type " +
                         std::string(call([&] { return format_type_be(type); })) + ", not " + shape.wanted[i],
                     std::string("It is argument ") + std::to_string(i + 1) + " of kind " + to_string(kind) + ".");
            src.args.push_back("t." + quote_ident(columns[i]) + "::" + shape.casts[i]);
        }
        CombineSettings settings;
        settings.topology = read_topology(spi, topology_text, link_text, &settings.topology_name);
        settings.policy = policy;
        settings.levels = levels;
        StatementSettings statement_settings;
        statement_settings.enter();
        result.outcome = run_hierarchical_combine(spi, src, settings);
        statement_settings.leave();
    }
    const CombineOutcome& o = result.outcome;
    const bool model = kind == CombineKind::ModelAverage;
    const bool empty = o.result.empty();
    return make_record(fcinfo,
                       {Int32GetDatum(o.levels), string_to_jsonb(o.decision.to_json()), Int32GetDatum(o.producers),
                        Int64GetDatum(o.bytes_crossing), Float8GetDatum(o.partial_seconds),
                        Float8GetDatum(o.combine_seconds),
                        empty ? (Datum)0 : string_to_jsonb(model ? model_summary_json(o.result) : o.result),
                        empty || !model ? (Datum)0 : bytes_to_bytea(o.result)},
                       {false, false, false, false, false, false, empty, empty || !model});
}
