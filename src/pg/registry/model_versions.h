// Finding models and their versions by name, version number or alias: shared by the registry's
// SQL functions (model_fns.cpp) and scoring by name (serve_fns.cpp), so both answer alike.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "pg/common/spi.h"

namespace hopper::pg {

struct ModelRow {
    int64_t id = 0;
    std::string name, owner;
    bool archived = false;
    bool may_modify = false;
};

struct VersionRef {
    int32_t version = 0;
    int64_t version_id = 0;
    int64_t checkpoint_id = 0;
};

// The model of that name (case-insensitive); 42704 when there is none, 42501 when for_change and
// the caller may not modify it. Call under SafeSearchPath.
ModelRow find_model(Spi& spi, const std::string& name, bool for_change);
// The version named by number, by alias, or the latest (the highest number) when both are
// nullopt; 42704 naming what does not exist. Call under SafeSearchPath.
VersionRef resolve_version(Spi& spi, const ModelRow& m, std::optional<int32_t> version,
                           std::optional<std::string> alias);

}  // namespace hopper::pg
