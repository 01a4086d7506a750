// What a call throws, for tests of error branches: its kind (a test failure if it throws nothing)
// and its message, hint and detail ("" if nothing).
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "hopper/error.h"

namespace hopper::test {

template <typename F>
ErrorKind kind_of(F&& f) {
    try {
        f();
    } catch (const Error& e) { return e.kind(); }
    ADD_FAILURE() << "no error";
    return ErrorKind::Internal;
}

// The part `get` takes of the Error `f` throws ("" if it throws none).
template <typename F, typename Get>
std::string error_part(F&& f, Get get) {
    try {
        f();
    } catch (const Error& e) { return get(e); }
    return "";
}

template <typename F>
std::string message_of(F&& f) {
    return error_part(f, [](const Error& e) { return e.message(); });
}
template <typename F>
std::string hint_of(F&& f) {
    return error_part(f, [](const Error& e) { return e.hint(); });
}
template <typename F>
std::string detail_of(F&& f) {
    return error_part(f, [](const Error& e) { return e.detail(); });
}

}  // namespace hopper::test
