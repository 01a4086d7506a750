#include "pg/registry/listing.h"

#include <vector>

extern "C" {
#include "access/detoast.h"
}

namespace hopper::pg {

std::string order_clause(const SortKey& key, bool descending, int metric_param) {
    std::string expr;
    switch (key.kind) {
        case SortKey::Steps: expr = "e.steps_completed"; break;
        case SortKey::ReportTime: expr = "e.report_time"; break;
        case SortKey::SearcherMetric: expr = "e.signed_searcher_value"; break;
        // Other roles' checkpoints are listed too: a value that is not a number sorts last instead
        // of failing everyone's listing (hopper.json_float8 never raises).
        case SortKey::TrainingMetric:
            expr = "hopper.json_float8(e.training_metrics -> $" + std::to_string(metric_param) + ")";
            break;
        case SortKey::ValidationMetric:
            expr = "hopper.json_float8(e.validation_metrics -> $" + std::to_string(metric_param) + ")";
            break;
        case SortKey::Version: expr = "e.version"; break;
        case SortKey::CreationTime: expr = "e.creation_time"; break;
    }
    const char* dir = descending ? " DESC" : " ASC";
    return " ORDER BY " + expr + dir + " NULLS LAST";
}

void put_result_rows(Spi& spi, FunctionCallInfo fcinfo) {
    ReturnSetInfo* rsinfo = (ReturnSetInfo*)fcinfo->resultinfo;
    const int n = spi.columns();
    std::vector<Datum> values(n);
    std::vector<bool> nulls_v(n);
    bool* nulls = new bool[n];
    try {
        for (uint64_t r = 0; r < spi.rows(); ++r) {
            for (int c = 0; c < n; ++c) {
                bool isnull = false;
                values[c] = spi.datum(r, c, &isnull);
                nulls[c] = isnull;
                if (!isnull && TupleDescAttr(rsinfo->setDesc, c)->attlen == -1) {
                    Datum d = values[c];
                    values[c] = call([&] {
                        struct varlena* v = (struct varlena*)DatumGetPointer(d);
                        return VARATT_IS_EXTERNAL(v) ? PointerGetDatum(detoast_external_attr(v)) : d;
                    });
                }
            }
            call([&] { tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values.data(), nulls); });
        }
    } catch (...) {
        delete[] nulls;
        throw;
    }
    delete[] nulls;
}

}  // namespace hopper::pg
