// What a call throws, for tests of error branches: its kind (a test failure if it throws nothing)
// and its message ("" if nothing).
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

template <typename F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const Error& e) { return e.message(); }
    return "";
}

}  // namespace hopper::test
