// Shared by the libFuzzer targets: what counts as a finding.
//
// A parser may refuse its input only with hopper::Error (which the PostgreSQL port turns into a
// SQLSTATE). Any other exception would reach SQL as XX000 "internal error", so it is a bug: the
// target aborts, and libFuzzer records the input. Crashes, leaks and undefined behaviour are
// reported by ASan/UBSan, which the fuzz build enables for the core and the targets.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "hopper/error.h"

namespace hopper_fuzz {

[[noreturn]] inline void finding(const char* what, const std::string& detail = {}) {
    std::fprintf(stderr, "FUZZ FINDING: %s %s\n", what, detail.c_str());
    std::abort();
}

// Runs f; hopper::Error is an accepted refusal (returns false), anything else a finding.
template <typename F>
bool accepts(F&& f) {
    try {
        f();
        return true;
    } catch (const hopper::Error&) { return false; } catch (const std::exception& e) {
        finding("non-hopper exception escaped:", e.what());
    } catch (...) { finding("unknown exception escaped"); }
}

inline void require(bool ok, const char* what, const std::string& detail = {}) {
    if (!ok) finding(what, detail);
}

}  // namespace hopper_fuzz
