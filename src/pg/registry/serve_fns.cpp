// Scoring one row by model name: hopper.predict_class, predict_proba and predict_value.
//
// Fast because nothing is done twice per backend:
//  * the resolution of (model name, version or alias) to a checkpoint and its input scaling is
//    cached per backend and dropped when the registry changes. The registry's tables have statement
//    triggers (hopper.registry_cache_invalidate) that queue a relcache invalidation of the changed
//    table; PostgreSQL sends it to every backend when the change commits (and applies it locally at
//    the end of the command, and again when the transaction rolls back), and a relcache callback
//    here bumps a generation counter that every cached resolution is checked against;
//  * deserialized models are cached per backend by checkpoint (uuid and checksum: a checkpoint's
//    payload never changes), least recently used first out, within hopper.model_cache_mb.
// One statement resolves each name once (fn_extra) and answers from that for all its rows, so a
// statement sees one version even if the registry changes while it runs.
// In a parallel query (COST 1000 makes large scans parallel) the leader and each worker resolve
// and load for themselves, reading the registry read-only in the query's snapshot, so all of them
// see the same version; such resolutions are not cached (fresh_snapshot).
#include <algorithm>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hopper/error.h"
#include "pg/common/datum.h"
#include "pg/common/owned.h"
#include "pg/common/settings.h"
#include "pg/registry/checkpoint_store.h"
#include "pg/registry/model_versions.h"
#include "pg/runtime/scoped_settings.h"
#include "pg/serving/row_features.h"
#include "pg/serving/scoring.h"
#include "pg/training/preprocess.h"

extern "C" {
#include "funcapi.h"
#include "miscadmin.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "commands/trigger.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
}

namespace hopper::pg {
namespace {

// ---- invalidation ------------------------------------------------------------------------------

// The registry tables whose changes can change a resolution (their triggers invalidate them).
const char* const kWatchedTables[] = {"models", "model_versions", "model_aliases", "checkpoints", "run_records"};
std::vector<Oid> watched_relids;
uint64_t registry_generation = 1;
bool callback_registered = false;

void on_relcache_invalidation(Datum, Oid relid) {
    // InvalidOid: every relation (the invalidation queue overflowed).
    if (relid == InvalidOid || std::find(watched_relids.begin(), watched_relids.end(), relid) != watched_relids.end())
        ++registry_generation;
}

// Brings the generation up to date with the changes committed so far. Before a resolution reads
// the registry: a change that its snapshot misses commits later, and so bumps the generation later.
uint64_t current_generation() {
    call([] {
        if (!callback_registered) {
            CacheRegisterRelcacheCallback(on_relcache_invalidation, (Datum)0);
            callback_registered = true;
        }
        // The relids, again on every resolution: a dropped and recreated extension has new ones (and
        // dropping the old tables invalidated them).
        watched_relids.clear();
        const Oid ns = get_namespace_oid("hopper", true);
        if (OidIsValid(ns))
            for (const char* t : kWatchedTables) {
                const Oid rel = get_relname_relid(t, ns);
                if (OidIsValid(rel)) watched_relids.push_back(rel);
            }
        AcceptInvalidationMessages();
    });
    return registry_generation;
}

// ---- resolution --------------------------------------------------------------------------------

struct Resolved {
    std::string model_name;
    int32_t version = 0;
    std::string uuid, checksum;
    std::string response_type;  // classification, regression, or empty (the checkpoint says nothing)
    std::vector<std::string> class_values;
    bool class_values_null = true;
    FeatureScaling scaling;
    std::string feature_recipe;       // JSON, for a model trained on a table's own columns; else ""
    std::string independent_varname;  // as packed: an array column, or numeric columns packed as numbers
};

struct ResolutionEntry {
    uint64_t generation = 0;
    std::shared_ptr<const Resolved> resolved;
};
std::unordered_map<std::string, ResolutionEntry> resolutions;
// Names are few; a session cycling through many drops them all rather than keeping an LRU.
constexpr std::size_t kMaxResolutions = 1024;

std::shared_ptr<const Resolved> read_resolution(const std::string& model_name, std::optional<int32_t> version,
                                                const std::optional<std::string>& alias) {
    auto r = std::make_shared<Resolved>();
    Spi spi;
    spi.set_read_only(IsInParallelMode());
    SafeSearchPath path;
    path.enter();
    const ModelRow m = find_model(spi, model_name, false);
    const VersionRef v = resolve_version(spi, m, version, alias);
    spi.execute(
        "SELECT e.checkpoint_uuid::pg_catalog.text, c.checksum, e.response_type, e.class_values,"
        " e.normalizing_const, e.feature_center::pg_catalog.float8[], e.feature_spread::pg_catalog.float8[],"
        " e.feature_recipe::pg_catalog.text, x.data OPERATOR(pg_catalog.->>) 'independent_varname'"
        " FROM hopper.model_versions_expanded e JOIN hopper.checkpoints c ON c.checkpoint_id = e.checkpoint_id"
        " JOIN hopper.checkpoints_expanded x ON x.checkpoint_id = e.checkpoint_id WHERE e.version_id = $1",
        {SqlParam::int8(v.version_id)});
    if (spi.rows() != 1)
        fail(ErrorKind::UndefinedObject,
             "version " + std::to_string(v.version) + " of model \"" + m.name + "\" has no checkpoint");
    r->model_name = m.name;
    r->version = v.version;
    r->uuid = spi.text(0, 0);
    r->checksum = spi.is_null(0, 1) ? "" : spi.text(0, 1);
    r->response_type = spi.is_null(0, 2) ? "" : spi.text(0, 2);
    r->class_values_null = spi.is_null(0, 3);
    if (!r->class_values_null) r->class_values = spi.text_array(0, 3);
    // Exactly what hopper.predict gives model_forward (the summary's float8 values, as float32).
    if (!spi.is_null(0, 4)) r->scaling.normalizing_const = spi.number(0, 4);
    for (double c : spi.float8_array(0, 5)) r->scaling.center.push_back(float(c));
    for (double s : spi.float8_array(0, 6)) r->scaling.spread.push_back(float(s));
    if (!spi.is_null(0, 7)) r->feature_recipe = spi.text(0, 7);
    if (!spi.is_null(0, 8)) r->independent_varname = spi.text(0, 8);
    path.leave();
    return r;
}

// Whether a resolution read now may answer later statements: only if its snapshot was taken after
// current_generation() looked. Under READ COMMITTED the registry statements take a new snapshot;
// a transaction snapshot (REPEATABLE READ, SERIALIZABLE) or a parallel operation's may be older.
bool fresh_snapshot() { return !IsolationUsesXactSnapshot() && !IsInParallelMode(); }

std::shared_ptr<const Resolved> resolve(const std::string& key, const std::string& model_name,
                                        std::optional<int32_t> version, const std::optional<std::string>& alias) {
    const uint64_t generation = current_generation();
    auto it = resolutions.find(key);
    if (it != resolutions.end() && it->second.generation == generation) return it->second.resolved;
    std::shared_ptr<const Resolved> r = read_resolution(model_name, version, alias);
    if (fresh_snapshot()) {
        if (resolutions.size() >= kMaxResolutions) resolutions.clear();
        resolutions[key] = ResolutionEntry{generation, r};
    } else if (it != resolutions.end()) {
        resolutions.erase(it);
    }
    return r;
}

// ---- models --------------------------------------------------------------------------------------

struct CachedScorer {
    std::string key;
    std::shared_ptr<RowScorer> scorer;
    std::size_t bytes = 0;
};
std::list<CachedScorer> lru;  // most recently used first
std::unordered_map<std::string, std::list<CachedScorer>::iterator> scorers;
std::size_t cached_bytes = 0;

std::size_t cache_budget() { return std::size_t(setting_model_cache_mb) * 1024 * 1024; }

void evict_beyond(std::size_t budget) {
    while (cached_bytes > budget && !lru.empty()) {
        cached_bytes -= lru.back().bytes;
        scorers.erase(lru.back().key);
        lru.pop_back();
    }
}

std::shared_ptr<RowScorer> load_model(const Resolved& r) {
    const std::string key = r.uuid + "/" + r.checksum;
    auto it = scorers.find(key);
    if (it != scorers.end()) {
        lru.splice(lru.begin(), lru, it->second);
        std::shared_ptr<RowScorer> scorer = it->second->scorer;
        evict_beyond(cache_budget());  // the budget may have been lowered since (it may go too)
        return scorer;
    }
    std::string state;
    {
        Spi spi;
        spi.set_read_only(IsInParallelMode());
        state = load_checkpoint(spi, r.uuid).state;
    }
    auto scorer = std::make_shared<RowScorer>(load_frozen_model(state));
    const std::size_t bytes = scorer->memory_bytes();
    // A model larger than the whole budget serves its statement uncached.
    if (bytes <= cache_budget()) {
        evict_beyond(cache_budget() - bytes);
        lru.push_front(CachedScorer{key, scorer, bytes});
        scorers[key] = lru.begin();
        cached_bytes += bytes;
    }
    return scorer;
}

// ---- one call site -------------------------------------------------------------------------------

enum class Answer { Class, Proba, Value };

// What a call site (fn_extra) holds for its statement: the last name it resolved and its model.
struct CallSite {
    std::string key;
    std::shared_ptr<const Resolved> resolved;
    std::shared_ptr<RowScorer> scorer;
    std::shared_ptr<RowFeatures> row;  // when the features are a table's row: its recipe statement
    bool row_form = false;             // the call's features argument is a row (fixed per call site)
    bool warned_not_finite = false;    // a WARNING said so once in this statement
};

std::string describe(const Resolved& r) {
    return "version " + std::to_string(r.version) + " of model \"" + r.model_name + "\"";
}

// Checks that the model can give `answer`, once per statement and model.
void check_model(const Resolved& r, const RowScorer& s, Answer answer) {
    const Architecture& arch = s.model.config.arch;
    if (r.response_type.empty())
        fail(ErrorKind::ObjectNotInPrerequisiteState, describe(r) + " does not describe the data it was trained on",
             "Its checkpoint " + r.uuid + " has no response type, class values or feature scaling.",
             "Score it with hopper.model_forward and hopper.model_version_state.");
    const bool classifier = r.response_type == "classification";
    if (answer == Answer::Value && classifier)
        fail(ErrorKind::InvalidParameter, describe(r) + " is a classifier", "",
             "Use hopper.predict_class or hopper.predict_proba.");
    if (answer != Answer::Value && !classifier)
        fail(ErrorKind::InvalidParameter, describe(r) + " is not a classifier",
             "Its response type is " + r.response_type + ".", "Use hopper.predict_value.");
    if (classifier) check_class_values(r.class_values, r.class_values_null, arch.output_dim(), describe(r));
    r.scaling.validate(arch.input_dim);
}

CallSite& call_site(FunctionCallInfo fcinfo, const std::string& key, const std::string& model_name,
                    std::optional<int32_t> version, const std::optional<std::string>& alias, Answer answer) {
    auto* site = static_cast<CallSite*>(fcinfo->flinfo->fn_extra);
    if (site && site->key == key) return *site;
    std::shared_ptr<const Resolved> r = resolve(key, model_name, version, alias);
    std::shared_ptr<RowScorer> scorer = load_model(*r);
    check_model(*r, *scorer, answer);
    if (!site) {
        site = own_in_context(fcinfo->flinfo->fn_mcxt, std::make_unique<CallSite>());
        site->row_form = call([&] { return type_is_rowtype(get_fn_expr_argtype(fcinfo->flinfo, 1)); });
        fcinfo->flinfo->fn_extra = site;
    }
    site->key = key;
    site->resolved = std::move(r);
    site->scorer = std::move(scorer);
    site->row.reset();
    return *site;
}

// A row given to a model packed from numbers (an array column, or numeric columns without NULLs):
// there is no recipe to read the row with, and the way out names the model's own columns (the
// message said "not trained on a table's columns" of a model trained on a table's columns, and the
// Citus hint's `predict_class('m', r)` failed so for an array model: two sweeps).
[[noreturn]] void refuse_row_without_recipe(const Resolved& r, Answer answer) {
    const std::string& columns = r.independent_varname;
    const bool list = columns.find(',') != std::string::npos;
    const char* fn = answer == Answer::Class   ? "predict_class"
                     : answer == Answer::Proba ? "predict_proba"
                                               : "predict_value";
    const std::string call = "hopper." + std::string(fn) + "(" + quote_literal(r.model_name) + ", " +
                             (list ? "ARRAY[" + columns + "]" : "t." + columns) + ")";
    fail(ErrorKind::InvalidParameter, describe(r) + " has no feature recipe to read a row with",
         columns.empty() ? "It was packed from numbers, not from a table's columns by a recipe."
         : list          ? "It was packed from the numbers of columns " + columns +
                      ", not by a recipe (numeric columns without NULLs or per-column options are packed as numbers)."
                : "It was packed from the numbers of array column " + columns + ", not by a recipe.",
         columns.empty() ? "Pass the row's features as an array."
                         : "Pass " + std::string(list ? "them as an array" : "that column") + ", e.g. " + call +
                               " FROM t; or pack the table with independent_varname => '*' (and exclude_columns), "
                               "which gives a recipe that reads rows.");
}

Datum predict_by_name(FunctionCallInfo fcinfo, Answer answer) {
    const std::string model_name = arg_text(fcinfo, 0, "model_name");
    // No features, no prediction, as hopper.predict's table has it: the unmatched side of a LEFT
    // JOIN passes a NULL row, which an error would turn into the whole statement's failure.
    if (PG_ARGISNULL(1)) PG_RETURN_NULL();
    std::optional<int32_t> version;
    if (PG_NARGS() > 2 && !PG_ARGISNULL(2)) version = PG_GETARG_INT32(2);
    std::optional<std::string> alias;
    if (PG_NARGS() > 3 && !PG_ARGISNULL(3)) alias = text_to_string(PG_GETARG_DATUM(3));
    if (version && alias) fail(ErrorKind::InvalidParameter, "give a version or an alias, not both");
    // The role is part of the key: what one role resolved is never another's answer.
    const std::string key = std::to_string(GetUserId()) + '\x1f' + model_name + '\x1f' +
                            (version ? std::to_string(*version) : "") + '\x1f' + (alias ? "a" + *alias : "");
    CallSite& site = call_site(fcinfo, key, model_name, version, alias, answer);
    RowScorer& s = *site.scorer;
    bool finite = false;
    if (site.row_form) {
        // A table's row (the record form): its features by the model's recipe, as predict reads them.
        const Datum row = PG_GETARG_DATUM(1);
        if (site.resolved->feature_recipe.empty()) refuse_row_without_recipe(*site.resolved, answer);
        const RowType row_type = row_type_of(row);
        if (!site.row || site.row->row_type() != row_type)
            site.row = row_features_for(row_type, site.resolved->feature_recipe);
        const Datum features = site.row->features(row);
        finite = score_row(s, features, site.resolved->scaling, ErrorKind::InvalidParameter);
    } else {
        finite = score_row(s, PG_GETARG_DATUM(1), site.resolved->scaling, ErrorKind::InvalidParameter);
    }
    if (!finite) {
        // A made-up answer never: NULL, and a WARNING once per statement (not one per row of a table).
        if (!site.warned_not_finite)
            warning(describe(*site.resolved) + " gave outputs that are not finite numbers",
                    "Such rows' predictions are NULL.", "A model whose outputs overflow needs training again.");
        site.warned_not_finite = true;
        PG_RETURN_NULL();
    }
    const int n = int(s.output.rows());
    if (answer == Answer::Class) {
        const int best = argmax_index(s.output.data(), n);
        if (best < 0) PG_RETURN_NULL();
        PG_RETURN_DATUM(string_to_text(site.resolved->class_values[std::size_t(best)]));
    }
    PG_RETURN_DATUM(make_float4_array(s.output.data(), {n}));
}

}  // namespace
}  // namespace hopper::pg

using namespace hopper;
using namespace hopper::pg;

// predict_class(model_name, features real[] | float8[] | integer[] | numeric[] | smallint[] | bigint[]
//               | a table's row, version, alias) -> text
HOPPER_FUNCTION(predict_class) { return predict_by_name(fcinfo, Answer::Class); }

// predict_proba(model_name, features, version, alias) -> real[]: class probabilities, class_values order
HOPPER_FUNCTION(predict_proba) { return predict_by_name(fcinfo, Answer::Proba); }

// predict_value(model_name, features, version, alias) -> real[]: a regressor's outputs
HOPPER_FUNCTION(predict_value) { return predict_by_name(fcinfo, Answer::Value); }

// registry_cache_invalidate() -> trigger: statement trigger of the tables a resolution reads.
HOPPER_FUNCTION(registry_cache_invalidate) {
    if (!CALLED_AS_TRIGGER(fcinfo))
        fail(ErrorKind::ObjectNotInPrerequisiteState, "hopper.registry_cache_invalidate must be called as a trigger");
    TriggerData* td = (TriggerData*)fcinfo->context;
    // Sent to every backend at commit, applied here at the end of the command and at a rollback.
    call([&] { CacheInvalidateRelcache(td->tg_relation); });
    return PointerGetDatum(nullptr);
}
