// Learning curves as pictures: hopper.learning_curves_svg (an SVG of a run's curves) and
// hopper.sparkline (a curve as one line of text for psql). The drawing is the core's (plot.h).
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hopper/error.h"
#include "hopper/plot.h"
#include "pg/common/datum.h"
#include "pg/common/guard.h"
#include "pg/common/spi.h"
#include "pg/runtime/scoped_settings.h"

extern "C" {
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
}

using namespace hopper;
using namespace hopper::pg;

namespace {

// Metrics where a smaller value is better, when the metric is not the run's searcher metric (whose
// direction the run records).
bool smaller_is_better(const std::string& metric) { return metric == "loss" || metric == "mse" || metric == "mae"; }

}  // namespace

// learning_curves_svg(run_id bigint, metric text DEFAULT NULL, split text DEFAULT NULL) -> text:
// one line per configuration of the run, the metric per evaluated iteration; the configuration with
// the best last value is highlighted. metric defaults to the run's searcher metric, split to
// validation when the run has validation metrics, else training.
HOPPER_FUNCTION(learning_curves_svg) {
    require_not_null(fcinfo, 0, "run_id");
    const int64_t run_id = arg_int(fcinfo, 0, "run_id");
    std::optional<std::string> metric, split;
    if (PG_NARGS() > 1 && !PG_ARGISNULL(1)) metric = arg_text(fcinfo, 1, "metric");
    if (PG_NARGS() > 2 && !PG_ARGISNULL(2)) split = arg_text(fcinfo, 2, "split");
    if (split && *split != "training" && *split != "validation")
        fail(ErrorKind::InvalidParameter, "split must be \"training\" or \"validation\", not \"" + *split + "\"");

    Spi spi;
    SafeSearchPath path;
    path.enter();
    spi.execute(
        "SELECT r.name, r.searcher_metric, r.smaller_is_better,"
        " EXISTS (SELECT 1 FROM hopper.learning_curves l WHERE l.run_id = r.run_id AND l.split = 'validation')"
        " FROM hopper.runs r WHERE r.run_id = $1",
        {SqlParam::int8(run_id)});
    if (spi.rows() == 0) fail(ErrorKind::UndefinedObject, "training run " + std::to_string(run_id) + " does not exist");
    const std::string name = spi.is_null(0, 0) ? "" : spi.text(0, 0);
    // The searcher metric is recorded with its split: validation_loss, training_accuracy, ...
    std::string searcher = spi.is_null(0, 1) ? "loss" : spi.text(0, 1), searcher_split;
    for (const char* prefix : {"validation_", "training_"})
        if (searcher.rfind(prefix, 0) == 0) {
            searcher_split = std::string(prefix, std::strlen(prefix) - 1);
            searcher = searcher.substr(std::strlen(prefix));
        }
    const bool searcher_smaller = spi.is_null(0, 2) ? true : spi.boolean(0, 2);
    if (!split)
        split = !metric && !searcher_split.empty() ? searcher_split : spi.boolean(0, 3) ? "validation" : "training";
    if (!metric) metric = searcher;
    const bool smaller = *metric == searcher ? searcher_smaller : smaller_is_better(*metric);

    spi.execute(
        "SELECT l.mst_key, l.iteration, l.value, t.model_config::pg_catalog.text"
        " FROM hopper.learning_curves l JOIN hopper.trials t ON t.trial_id = l.trial_id"
        " WHERE l.run_id = $1 AND l.split = $2 AND l.metric = $3 ORDER BY l.mst_key, l.iteration",
        {SqlParam::int8(run_id), SqlParam::text_copy(*split), SqlParam::text_copy(*metric)});
    if (spi.rows() == 0) {
        spi.execute(
            "SELECT pg_catalog.string_agg(DISTINCT l.metric, ', ' ORDER BY l.metric) FROM hopper.learning_curves l"
            " WHERE l.run_id = $1 AND l.split = $2",
            {SqlParam::int8(run_id), SqlParam::text_copy(*split)});
        const std::string known = spi.is_null(0, 0) ? "" : spi.text(0, 0);
        if (known.empty())
            fail(ErrorKind::InvalidParameter,
                 "training run " + std::to_string(run_id) + " has no " + *split + " metrics",
                 "Metrics are recorded at the iterations where they are computed (metrics_compute_frequency).");
        fail(ErrorKind::InvalidParameter,
             "training run " + std::to_string(run_id) + " has no " + *split + " metric \"" + *metric + "\"",
             "Its " + *split + " metrics: " + known + ".");
    }
    std::map<int64_t, Curve> by_key;
    std::map<int64_t, std::string> configs;  // model_config: architecture, compile and fit parameters
    for (uint64_t r = 0; r < spi.rows(); ++r) {
        const int64_t key = spi.integer(r, 0);
        if (!configs.count(key)) configs[key] = spi.text(r, 3);
        by_key[key].points.push_back({double(spi.integer(r, 1)), spi.is_null(r, 2) ? std::nan("") : spi.number(r, 2)});
    }
    // The legend names what tells the configurations apart (the learning rate, the optimizer, ...).
    std::vector<std::string> settings;
    for (const auto& [key, config] : configs) settings.push_back(config);
    const std::vector<std::string> differences = distinguishing_labels(settings);
    std::size_t k = 0;
    for (auto& [key, c] : by_key) {
        c.label = "mst_key " + std::to_string(key) + (differences[k].empty() ? "" : ": " + differences[k]);
        ++k;
    }
    std::vector<Curve> curves;
    std::optional<std::size_t> best;
    double best_value = 0;
    for (auto& [key, c] : by_key) {
        double last = std::nan("");
        for (const CurvePoint& p : c.points)
            if (std::isfinite(p.y)) last = p.y;
        if (std::isfinite(last) && (!best || (smaller ? last < best_value : last > best_value))) {
            best = curves.size();
            best_value = last;
        }
        curves.push_back(std::move(c));
    }
    if (best) curves[*best].highlight = true;
    const std::string title =
        "run " + std::to_string(run_id) + (name.empty() ? "" : " (" + name + ")") + ": " + *split + " " + *metric;
    PG_RETURN_DATUM(string_to_text(learning_curves_svg(curves, {title, "iteration", *split + " " + *metric})));
}

// sparkline(curve float8[]) -> text: one block character per value, scaled between the smallest and
// the largest; NULL, NaN and infinite values leave a space.
HOPPER_FUNCTION(sparkline) {
    std::vector<double> values;
    call([&] {
        ArrayType* a = PG_GETARG_ARRAYTYPE_P(0);
        if (ARR_NDIM(a) > 1)
            ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("curve must be a one-dimensional array")));
        Datum* elems;
        bool* nulls;
        int n;
        deconstruct_array(a, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
        for (int i = 0; i < n; ++i) {
            if (i % 4096 == 0) CHECK_FOR_INTERRUPTS();
            values.push_back(nulls[i] ? std::numeric_limits<double>::quiet_NaN() : DatumGetFloat8(elems[i]));
        }
    });
    PG_RETURN_DATUM(string_to_text(sparkline(values)));
}
