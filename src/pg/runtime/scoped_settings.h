// Settings applied like a function's SET clause: entered for hopper's own statements and undone
// when hopper is done with them (leave(), the destructor), at a commit, or when the transaction
// aborts, so they never leak into the caller's later statements. One class; its uses:
//   SafeSearchPath     search_path = pg_catalog, pg_temp for the registry's statements, so that no
//                      object in the caller's search_path can stand in for an operator or function
//                      hopper uses (resolve the caller's table names before entering);
//   StatementSettings  the planner settings hopper's training and evaluation statements need;
//   Lz4Compression     lz4 for the values a statement stores (model states and combine states);
//   (Citus) the settings sent to the worker nodes with SET LOCAL (engine/citus.cpp).
#pragma once

#include <functional>
#include <string>

namespace hopper::pg {

class ScopedSettings {
public:
    using Apply = std::function<void()>;  // sets the settings (set_in_scope, or SET LOCAL through SPI)
    explicit ScopedSettings(Apply apply) : apply_(std::move(apply)) {}
    ScopedSettings(const ScopedSettings&) = delete;
    ScopedSettings& operator=(const ScopedSettings&) = delete;
    ~ScopedSettings();

    void enter();  // applies the settings (no-op if already applied)
    void leave();  // restores the caller's settings

private:
    Apply apply_;
    int level_ = -1;
};

void apply_safe_search_path();
void apply_statement_settings();
void apply_lz4_compression();

struct SafeSearchPath : ScopedSettings {
    SafeSearchPath() : ScopedSettings(apply_safe_search_path) {}
};
struct StatementSettings : ScopedSettings {
    StatementSettings() : ScopedSettings(apply_statement_settings) {}
};
struct Lz4Compression : ScopedSettings {
    Lz4Compression() : ScopedSettings(apply_lz4_compression) {}
};

// Sets one setting inside an entered scope (undone with the scope).
void set_in_scope(const char* name, const std::string& value);

// How many processes the next statements (inside a StatementSettings scope) may use, capped by the
// hopper.parallel_segments setting: 1 is a serial plan; n > 1 is n parallel workers, with
// parallel_leader_participation off (the leader only gathers).
void set_parallel_workers(int wanted);

}  // namespace hopper::pg
