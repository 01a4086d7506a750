#include "pg/common/schema_version.h"

#include "pg/common/guard.h"

extern "C" {
#include "catalog/namespace.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/lsyscache.h"
}

namespace hopper::pg {

namespace {
bool hopper_relation_exists(const char* name) {
    return call([&] {
        const Oid nsp = get_namespace_oid("hopper", true);
        return OidIsValid(nsp) && OidIsValid(get_relname_relid(name, nsp));
    });
}
bool hopper_function_exists(const char* name) {
    return call([&] {
        List* qualified = list_make2(makeString(pstrdup("hopper")), makeString(pstrdup(name)));
        return OidIsValid(LookupFuncName(qualified, -1, nullptr, true));
    });
}
}  // namespace

SchemaFeatures schema_features() {
    SchemaFeatures f;
    f.output_tables = hopper_relation_exists("output_tables");
    f.run_records = hopper_relation_exists("run_records");
    f.evaluate_models_sums = hopper_function_exists("evaluate_models_sums");
    static bool warned = false;
    if ((!f.output_tables || !f.run_records) && !warned) {
        warned = true;
        warning("the hopper objects in this database are older than its library",
                "Tables hopper created are not recorded, so warm starts cannot replace them, and training runs read "
                "ACTIVE until hopper.mark_interrupted_runs() is called.",
                "Run ALTER EXTENSION hopper UPDATE.");
    }
    return f;
}

}  // namespace hopper::pg
