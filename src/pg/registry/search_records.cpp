// The registry records of an adaptive search (search_records.h).
#include "pg/registry/search_records.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "hopper/error.h"
#include "hopper/state_format.h"
#include "pg/common/datum.h"
#include "pg/common/schema_version.h"
#include "pg/registry/checkpoint_store.h"
#include "pg/registry/registry.h"
#include "pg/runtime/run_lock.h"
#include "pg/runtime/scoped_settings.h"

namespace hopper::pg {

using nlohmann::json;

namespace {

SqlParam text_or_null(const std::string& s) { return s.empty() ? SqlParam::null(TEXTOID) : SqlParam::text(s); }

SqlParam float_or_null(const std::optional<double>& v) { return v ? SqlParam::float8(*v) : SqlParam::null(FLOAT8OID); }

std::string run_text(int64_t run_id) { return "training run " + std::to_string(run_id); }

}  // namespace

int64_t record_new_search(Spi& spi, const SearchSettings& s, const SearchPlan& plan, const SearcherMetric& searcher,
                          const std::vector<ModelSpec>& models, const std::string& data_facts,
                          const std::string& started_at, std::map<int32_t, int64_t>& trial_ids) {
    SafeSearchPath path;
    path.enter();
    spi.execute("SELECT hopper.mark_interrupted_runs()");
    const int64_t run_id = spi.scalar_int(
        "INSERT INTO hopper.run_records (method, name, description, source_table, validation_table,"
        " model_output_table, model_selection_table, num_iterations, metrics_compute_frequency,"
        " checkpoint_frequency, searcher_metric, smaller_is_better, data, start_time, backend_pid, backend_start)"
        " VALUES ('fit_automl', $1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $10, $11::pg_catalog.jsonb,"
        " $12::pg_catalog.timestamptz, pg_catalog.pg_backend_pid(), (SELECT a.backend_start FROM"
        " pg_catalog.pg_stat_activity a WHERE a.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()))"
        " RETURNING run_id",
        {text_or_null(s.name), text_or_null(s.description), SqlParam::text(s.packed), text_or_null(s.validation),
         SqlParam::text(s.output), SqlParam::text(s.mst_table), SqlParam::int4(int32_t(s.budget.max_iterations)),
         SqlParam::int4(s.metrics_frequency), SqlParam::text(searcher.name),
         SqlParam::boolean(searcher.smaller_is_better), SqlParam::text(data_facts), SqlParam::text(started_at)});
    hold_run_lock(run_id);  // the run reads as ACTIVE while this session runs it
    spi.execute(
        "INSERT INTO hopper.searches (run_id, automl_method, max_iterations, eta, skip_last, num_brackets,"
        " num_configs, model_iterations, model_arch_table, model_id_list, compile_params_grid, fit_params_grid,"
        " search_type, random_state, pack_brackets, bracket_rule)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::pg_catalog.jsonb, $12::pg_catalog.jsonb, $13, $14, $15,"
        " $16)",
        {SqlParam::int8(run_id), SqlParam::text(to_string(s.budget.method)),
         SqlParam::int4(int32_t(s.budget.max_iterations)), SqlParam::int4(int32_t(s.budget.eta)),
         SqlParam::int4(int32_t(s.budget.skip_last)), SqlParam::int4(int32_t(plan.brackets.size())),
         SqlParam::int4(plan.num_trials()), SqlParam::int8(plan.model_iterations()), SqlParam::text(s.arch_table),
         SqlParam::int4_array(s.model_ids), SqlParam::text(s.compile_space), SqlParam::text(s.fit_space),
         SqlParam::text(to_string(s.search_type)),
         s.random_state ? SqlParam::int8(*s.random_state) : SqlParam::null(INT8OID), SqlParam::boolean(s.pack_brackets),
         SqlParam::text(to_string(s.budget.rule))});
    std::vector<int32_t> brackets, rungs, configs, iterations, promoted;
    for (const BracketPlan& b : plan.brackets)
        for (std::size_t i = 0; i < b.rungs.size(); ++i) {
            brackets.push_back(b.s);
            rungs.push_back(int32_t(i));
            configs.push_back(b.rungs[i].num_configs);
            iterations.push_back(b.rungs[i].iterations);
            promoted.push_back(b.rungs[i].num_promoted);
        }
    spi.execute(
        "INSERT INTO hopper.search_rungs (run_id, bracket, rung, num_configs, iterations, num_promoted)"
        " SELECT $6, b, r, n, i, p FROM " +
            rows_from({"int4", "int4", "int4", "int4", "int4"}) + " AS t(b, r, n, i, p)",
        {SqlParam::int4_array(brackets), SqlParam::int4_array(rungs), SqlParam::int4_array(configs),
         SqlParam::int4_array(iterations), SqlParam::int4_array(promoted), SqlParam::int8(run_id)});
    for (const BracketPlan& b : plan.brackets) {
        std::vector<int32_t> keys;
        for (int k = 0; k < b.num_trials; ++k) keys.push_back(b.first_key + k);
        spi.execute("UPDATE hopper.search_rungs SET mst_keys = $3 WHERE run_id = $1 AND bracket = $2 AND rung = 0",
                    {SqlParam::int8(run_id), SqlParam::int4(b.s), SqlParam::int4_array(keys)});
    }
    for (const ModelSpec& m : models) {
        json config = json::parse(m.config.to_json());
        json hparams = {{"compile", config["compile"]}, {"fit", config["fit"]}};
        // Two statements: the trials row's security policy must see the task row.
        const int64_t task_id = spi.scalar_int(
            "INSERT INTO hopper.tasks (task_type, description, start_time)"
            " VALUES ('TRAINING', $1, $2::pg_catalog.timestamptz) RETURNING task_id",
            {SqlParam::text_copy("fit_automl run " + std::to_string(run_id) + ", mst_key " + std::to_string(m.mst_key)),
             SqlParam::text(started_at)});
        spi.execute(
            "INSERT INTO hopper.trials (trial_id, run_id, mst_key, model_id, model_arch, compile_params, fit_params,"
            " model_config, hparams, status)"
            " VALUES ($1, $2, $3, $4, $5::pg_catalog.jsonb, $6, $7, $8::pg_catalog.jsonb, $9::pg_catalog.jsonb, 'pending')",
            {SqlParam::int8(task_id), SqlParam::int8(run_id), SqlParam::int4(m.mst_key),
             m.model_id ? SqlParam::int4(*m.model_id) : SqlParam::null(INT4OID), SqlParam::text(m.arch_json),
             SqlParam::text(m.compile_text), SqlParam::text(m.fit_text), SqlParam::text_copy(m.config.to_json()),
             SqlParam::text_copy(hparams.dump())});
        trial_ids[m.mst_key] = task_id;
    }
    path.leave();
    return run_id;
}

RecordedSearch read_search(Spi& spi, int64_t run_id) {
    SafeSearchPath path;
    path.enter();
    RecordedSearch out;
    out.run_id = run_id;
    spi.execute(
        "SELECT r.method, r.state, hopper.may_modify(r.owner), r.owner::pg_catalog.text, r.source_table,"
        " r.validation_table, r.model_output_table, r.model_selection_table, r.metrics_compute_frequency,"
        " r.searcher_metric, r.smaller_is_better, r.name, r.description, hopper.run_is_live(r.run_id)"
        " FROM hopper.run_records r WHERE r.run_id = $1",
        {SqlParam::int8(run_id)});
    if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, run_text(run_id) + " does not exist");
    if (spi.text(0, 0) != "fit_automl")
        fail(ErrorKind::InvalidParameter, run_text(run_id) + " is not an adaptive search",
             "It was made by " + spi.text(0, 0) + ".", "Continue fit and fit_multiple runs with warm_start_run.");
    if (!spi.boolean(0, 2))
        fail(ErrorKind::Privilege, "permission denied for " + run_text(run_id),
             "It belongs to role " + spi.text(0, 3) + ".");
    if (spi.text(0, 1) == "COMPLETED")
        fail(ErrorKind::ObjectNotInPrerequisiteState, run_text(run_id) + " is completed",
             "Its results are in " + spi.text(0, 6) + " and hopper.search_trials.");
    if (spi.boolean(0, 13))
        fail(ErrorKind::ObjectInUse, run_text(run_id) + " is being run by another session",
             "A session holds the run's lock (hopper.runs shows it ACTIVE).", "Wait for it to end, or cancel it.");
    SearchSettings& s = out.settings;
    s.packed = spi.text(0, 4);
    s.validation = spi.is_null(0, 5) ? "" : spi.text(0, 5);
    s.output = spi.text(0, 6);
    s.mst_table = spi.text(0, 7);
    s.metrics_frequency = int(spi.integer(0, 8));
    out.searcher.name = spi.text(0, 9);
    out.searcher.smaller_is_better = spi.boolean(0, 10);
    s.name = spi.is_null(0, 11) ? "" : spi.text(0, 11);
    s.description = spi.is_null(0, 12) ? "" : spi.text(0, 12);

    spi.execute(
        "SELECT automl_method, max_iterations, eta, skip_last, num_brackets, num_configs, model_arch_table,"
        " model_id_list, compile_params_grid::pg_catalog.text, fit_params_grid::pg_catalog.text, search_type,"
        " random_state, pack_brackets, bracket_rule FROM hopper.searches WHERE run_id = $1",
        {SqlParam::int8(run_id)});
    if (spi.rows() == 0)
        fail(ErrorKind::Data, run_text(run_id) + " has no row in hopper.searches", "Its search settings were deleted.");
    s.budget.method = parse_automl_method(spi.text(0, 0));
    s.budget.max_iterations = spi.integer(0, 1);
    s.budget.eta = spi.integer(0, 2);
    s.budget.skip_last = spi.integer(0, 3);
    if (s.budget.method == AutomlMethod::Hyperband) s.budget.num_brackets = spi.integer(0, 4);
    else s.budget.num_configs = spi.integer(0, 5);
    s.arch_table = spi.text(0, 6);
    for (int64_t id : spi.int_array(0, 7)) s.model_ids.push_back(int32_t(id));
    s.compile_space = spi.text(0, 8);
    s.fit_space = spi.text(0, 9);
    s.search_type = parse_search_type(spi.text(0, 10));
    if (!spi.is_null(0, 11)) s.random_state = spi.integer(0, 11);
    s.pack_brackets = spi.boolean(0, 12);
    s.budget.rule = parse_bracket_rule(spi.text(0, 13));

    spi.execute(
        "SELECT bracket, rung, num_configs, iterations, num_promoted FROM hopper.search_rungs WHERE run_id = $1"
        " ORDER BY bracket DESC, rung",
        {SqlParam::int8(run_id)});
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        out.rung_keys.emplace_back(int(spi.integer(r, 0)), int(spi.integer(r, 1)));
        out.rung_plans.push_back(RungPlan{int(spi.integer(r, 3)), int(spi.integer(r, 2)), int(spi.integer(r, 4))});
    }
    spi.execute("SELECT mst_key, trial_id FROM hopper.trials WHERE run_id = $1 ORDER BY mst_key",
                {SqlParam::int8(run_id)});
    for (uint64_t r = 0; r < spi.rows(); ++r) out.trial_ids[int32_t(spi.integer(r, 0))] = spi.integer(r, 1);
    spi.execute(
        "SELECT x.bracket, x.rung, t.mst_key, x.promoted, t.status, x.checkpoint_id FROM hopper.trial_rungs x"
        " JOIN hopper.trials t ON t.trial_id = x.trial_id WHERE x.run_id = $1"
        " ORDER BY x.bracket DESC, x.rung, x.rank",
        {SqlParam::int8(run_id)});
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        const int bracket = int(spi.integer(r, 0)), rung = int(spi.integer(r, 1));
        if (out.decisions.empty() || out.decisions.back().bracket != bracket || out.decisions.back().rung != rung)
            out.decisions.push_back(RecordedRung{bracket, rung, {}, {}, {}});
        RecordedRung& d = out.decisions.back();
        const int32_t key = int32_t(spi.integer(r, 2));
        d.ranking.order.push_back(key);
        if (spi.boolean(r, 3)) d.ranking.promoted.push_back(key);
        if (spi.text(r, 4) == "diverged") d.diverged.push_back(key);
        if (spi.is_null(r, 5))
            fail(ErrorKind::Data, run_text(run_id) + " lost the checkpoint of mst_key " + std::to_string(key) +
                                      " at rung " + std::to_string(rung) + " of bracket " + std::to_string(bracket));
        d.checkpoints[key] = spi.integer(r, 5);
    }
    spi.execute(
        "SELECT pg_catalog.max(m.elapsed_seconds) FROM hopper.trial_metrics m"
        " JOIN hopper.trials t ON t.trial_id = m.trial_id WHERE t.run_id = $1",
        {SqlParam::int8(run_id)});
    if (!spi.is_null(0, 0)) out.elapsed_seconds = spi.number(0, 0);
    path.leave();
    return out;
}

void reopen_search(Spi& spi, int64_t run_id, const std::map<int64_t, int>& restart_iteration) {
    if (!try_hold_run_lock(run_id))
        fail(ErrorKind::ObjectInUse, run_text(run_id) + " is being run by another session",
             "A session holds the run's lock (hopper.runs shows it ACTIVE).", "Wait for it to end, or cancel it.");
    SafeSearchPath path;
    path.enter();
    spi.execute("SELECT hopper.mark_interrupted_runs()");
    spi.execute(
        "UPDATE hopper.run_records SET state = 'ACTIVE', end_time = NULL, backend_pid = pg_catalog.pg_backend_pid(),"
        " backend_start = (SELECT a.backend_start FROM pg_catalog.pg_stat_activity a"
        " WHERE a.pid OPERATOR(pg_catalog.=) pg_catalog.pg_backend_pid()) WHERE run_id = $1",
        {SqlParam::int8(run_id)});
    std::vector<int64_t> trials;
    std::vector<int32_t> from;
    for (const auto& [trial, it] : restart_iteration) {
        trials.push_back(trial);
        from.push_back(it);
    }
    spi.execute("DELETE FROM hopper.trial_metrics m USING " + rows_from({"int8", "int4"}) +
                    " AS r(trial_id, restart) WHERE m.trial_id = r.trial_id AND m.iteration > r.restart",
                {SqlParam::int8_array(trials), SqlParam::int4_array(from)});
    path.leave();
}

void record_rung_start(Spi& spi, int64_t run_id, int bracket, int rung, const std::vector<int32_t>& mst_keys,
                       const std::map<int32_t, int64_t>& trial_ids) {
    SafeSearchPath path;
    path.enter();
    spi.execute(
        "UPDATE hopper.search_rungs SET state = 'TRAINING', mst_keys = $4, start_time = pg_catalog.clock_timestamp()"
        " WHERE run_id = $1 AND bracket = $2 AND rung = $3",
        {SqlParam::int8(run_id), SqlParam::int4(bracket), SqlParam::int4(rung), SqlParam::int4_array(mst_keys)});
    std::vector<int64_t> ids;
    for (int32_t k : mst_keys) ids.push_back(trial_ids.at(k));
    spi.execute("UPDATE hopper.trials SET status = 'training' WHERE trial_id = ANY ($1) AND status = 'pending'",
                {SqlParam::int8_array(ids)});
    path.leave();
}

std::map<int32_t, int64_t> record_rung_end(Spi& spi, int64_t run_id, int bracket, int rung, int budget,
                                           const std::vector<RungMember>& members, const RungRanking& ranking,
                                           const std::vector<std::pair<int32_t, TrialStatus>>& statuses,
                                           bool smaller_is_better, const std::vector<int>& skipped_rungs) {
    std::map<int32_t, const RungMember*> by_key;
    for (const RungMember& m : members) by_key[m.mst_key] = &m;
    std::set<int32_t> promoted(ranking.promoted.begin(), ranking.promoted.end());
    std::map<int32_t, int64_t> checkpoints;
    SafeSearchPath path;
    path.enter();
    const std::string metadata =
        json{{"hopper_version", HOPPER_VERSION}, {"iteration", budget}, {"bracket", bracket}, {"rung", rung}}.dump();
    for (std::size_t rank = 0; rank < ranking.order.size(); ++rank) {
        const RungMember& m = *by_key.at(ranking.order[rank]);
        const int64_t checkpoint = store_training_checkpoint(spi, m.trial_id, *m.state, m.iteration, m.searcher_value,
                                                             smaller_is_better, metadata);
        spi.execute(
            "INSERT INTO hopper.trial_rungs (trial_id, run_id, bracket, rung, iteration, searcher_value, rank,"
            " promoted, checkpoint_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            {SqlParam::int8(m.trial_id), SqlParam::int8(run_id), SqlParam::int4(bracket), SqlParam::int4(rung),
             SqlParam::int4(m.iteration), float_or_null(m.searcher_value), SqlParam::int4(int32_t(rank + 1)),
             SqlParam::boolean(promoted.count(m.mst_key) > 0), SqlParam::int8(checkpoint)});
        checkpoints[m.mst_key] = checkpoint;
    }
    for (const auto& [key, status] : statuses) {
        const int64_t trial = by_key.at(key)->trial_id;
        spi.execute("UPDATE hopper.trials SET status = $2 WHERE trial_id = $1",
                    {SqlParam::int8(trial), SqlParam::text(to_string(status))});
        if (status != TrialStatus::Training)
            spi.execute(
                "UPDATE hopper.tasks SET state = 'COMPLETED', end_time = pg_catalog.clock_timestamp()"
                " WHERE task_id = $1 AND state = 'ACTIVE'",
                {SqlParam::int8(trial)});
    }
    spi.execute(
        "UPDATE hopper.search_rungs SET state = 'COMPLETED', end_time = pg_catalog.clock_timestamp()"
        " WHERE run_id = $1 AND bracket = $2 AND rung = $3",
        {SqlParam::int8(run_id), SqlParam::int4(bracket), SqlParam::int4(rung)});
    if (!skipped_rungs.empty())
        spi.execute(
            "UPDATE hopper.search_rungs SET state = 'SKIPPED', mst_keys = '{}'"
            " WHERE run_id = $1 AND bracket = $2 AND rung = ANY ($3)",
            {SqlParam::int8(run_id), SqlParam::int4(bracket), SqlParam::int4_array(skipped_rungs)});
    path.leave();
    return checkpoints;
}

std::optional<std::pair<int32_t, std::string>> record_search_end(Spi& spi, int64_t run_id,
                                                                 const std::vector<int64_t>& trial_ids) {
    SafeSearchPath path;
    path.enter();
    std::optional<std::pair<int32_t, std::string>> best;
    spi.execute(
        "SELECT t.mst_key, c.checkpoint_id, c.uuid::pg_catalog.text FROM hopper.trial_rungs x"
        " JOIN hopper.trials t ON t.trial_id = x.trial_id"
        " JOIN hopper.checkpoint_training ct ON ct.checkpoint_id = x.checkpoint_id"
        " JOIN hopper.checkpoints c ON c.checkpoint_id = x.checkpoint_id"
        " WHERE x.run_id = $1 AND ct.signed_searcher_value IS NOT NULL"
        " ORDER BY ct.signed_searcher_value, x.iteration DESC, t.mst_key LIMIT 1",
        {SqlParam::int8(run_id)});
    std::optional<int64_t> checkpoint;
    if (spi.rows() == 1) {
        best = std::make_pair(int32_t(spi.integer(0, 0)), spi.text(0, 2));
        checkpoint = spi.integer(0, 1);
    }
    spi.execute("UPDATE hopper.searches SET best_mst_key = $2, best_checkpoint_id = $3 WHERE run_id = $1",
                {SqlParam::int8(run_id), best ? SqlParam::int4(best->first) : SqlParam::null(INT4OID),
                 checkpoint ? SqlParam::int8(*checkpoint) : SqlParam::null(INT8OID)});
    spi.execute(
        "UPDATE hopper.tasks SET state = 'COMPLETED', end_time = pg_catalog.clock_timestamp()"
        " WHERE task_id = ANY ($1) AND state = 'ACTIVE'",
        {SqlParam::int8_array(trial_ids)});
    spi.execute(
        "UPDATE hopper.run_records SET state = 'COMPLETED', end_time = pg_catalog.clock_timestamp() WHERE run_id = $1",
        {SqlParam::int8(run_id)});
    path.leave();
    return best;
}

std::string checkpoint_payload(Spi& spi, int64_t checkpoint_id) {
    SafeSearchPath path;
    path.enter();
    std::string state = read_payload(spi, find_checkpoint_by_id(spi, checkpoint_id));
    path.leave();
    return state;
}

std::map<int32_t, std::string> final_trial_states(Spi& spi, int64_t run_id) {
    SafeSearchPath path;
    path.enter();
    spi.execute(
        "SELECT DISTINCT ON (t.mst_key) t.mst_key, x.checkpoint_id FROM hopper.trial_rungs x"
        " JOIN hopper.trials t ON t.trial_id = x.trial_id WHERE x.run_id = $1 ORDER BY t.mst_key, x.rung DESC",
        {SqlParam::int8(run_id)});
    std::vector<std::pair<int32_t, int64_t>> found;
    for (uint64_t r = 0; r < spi.rows(); ++r) found.emplace_back(int32_t(spi.integer(r, 0)), spi.integer(r, 1));
    std::map<int32_t, std::string> out;
    for (const auto& [key, id] : found) out[key] = read_payload(spi, find_checkpoint_by_id(spi, id));
    path.leave();
    return out;
}

std::map<int32_t, ModelHistory> trial_histories(Spi& spi, int64_t run_id,
                                                const std::map<int32_t, std::vector<Metric>>& metrics,
                                                bool validation) {
    SafeSearchPath path;
    path.enter();
    std::map<int32_t, ModelHistory> out;
    spi.execute("SELECT mst_key, status FROM hopper.trials WHERE run_id = $1", {SqlParam::int8(run_id)});
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        const int32_t key = int32_t(spi.integer(r, 0));
        ModelHistory& h = out[key];
        h.status = spi.text(r, 1);
        auto m = metrics.find(key);
        const std::size_t k = m == metrics.end() ? 0 : m->second.size();
        h.training_metrics.resize(k);
        h.validation_metrics.resize(k);
    }
    spi.execute(
        "SELECT t.mst_key, m.iteration, m.elapsed_seconds, m.training_metrics::pg_catalog.text,"
        " m.validation_metrics::pg_catalog.text FROM hopper.trial_metrics m JOIN hopper.trials t ON t.trial_id = m.trial_id"
        " WHERE t.run_id = $1 ORDER BY t.mst_key, m.iteration",
        {SqlParam::int8(run_id)});
    auto value = [](const json& j, const std::string& name) {
        return j.contains(name) && j[name].is_number() ? j[name].get<double>() : std::nan("");
    };
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        const int32_t key = int32_t(spi.integer(r, 0));
        ModelHistory& h = out[key];
        const std::vector<Metric>& names = metrics.at(key);
        h.iterations.push_back(int(spi.integer(r, 1)));
        h.elapsed.push_back(spi.is_null(r, 2) ? std::nan("") : spi.number(r, 2));
        // The role's own rows, which it may have edited: what does not parse (a number beyond
        // double's range) reads as missing values, not an internal error.
        const json t = json::parse(spi.text(r, 3), nullptr, false);
        h.training_loss.push_back(value(t, "loss"));
        for (std::size_t i = 0; i < names.size(); ++i) h.training_metrics[i].push_back(value(t, to_string(names[i])));
        if (validation) {
            const json v = spi.is_null(r, 4) ? json::object() : json::parse(spi.text(r, 4), nullptr, false);
            h.validation_loss.push_back(value(v, "loss"));
            for (std::size_t i = 0; i < names.size(); ++i)
                h.validation_metrics[i].push_back(value(v, to_string(names[i])));
        }
    }
    path.leave();
    return out;
}

}  // namespace hopper::pg
