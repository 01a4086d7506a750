// Packed-buffer checks the port applies before training and evaluation (hopper/buffer_check.h).
#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "error_helpers.h"
#include "hopper/buffer_check.h"
#include "hopper/error.h"

using namespace hopper;
using hopper::test::kind_of;
using hopper::test::message_of;

TEST(BufferCheck, Shapes) {
    int d2[2] = {3, 4};
    BufferShape s = buffer_shape(2, d2, 12, "x");
    EXPECT_EQ(s.rows, 3);
    EXPECT_EQ(s.cols, 4);
    int d1[1] = {5};
    s = buffer_shape(1, d1, 5, "x");
    EXPECT_EQ(s.rows, 1);
    EXPECT_EQ(s.cols, 5);
    s = buffer_shape(0, nullptr, 0, "x");
    EXPECT_EQ(s.rows, 0);
    EXPECT_EQ(s.cols, 0);
}

TEST(BufferCheck, RefusesBadShapes) {
    int d3[3] = {1, 2, 3};
    EXPECT_EQ(kind_of([&] { buffer_shape(3, d3, 6, "x"); }), ErrorKind::Data);
    int neg[2] = {-1, -4};
    EXPECT_EQ(kind_of([&] { buffer_shape(2, neg, 4, "x"); }), ErrorKind::Data);
    int d2[2] = {3, 4};
    EXPECT_EQ(kind_of([&] { buffer_shape(2, d2, 11, "x"); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([&] { buffer_shape(0, nullptr, 1, "x"); }), ErrorKind::Data);
    int big[2] = {1 << 30, 1 << 30};  // product overflows 32 bits
    EXPECT_EQ(kind_of([&] { buffer_shape(2, big, 0, "x"); }), ErrorKind::Data);
}

TEST(BufferCheck, TrainingPairs) {
    check_training_buffers({4, 3}, {4, 2}, 3, 2);
    EXPECT_EQ(kind_of([] { check_training_buffers({4, 3}, {5, 2}, 3, 2); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([] { check_training_buffers({0, 0}, {0, 0}, 3, 2); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([] { check_training_buffers({4, 2}, {4, 2}, 3, 2); }), ErrorKind::Data);
    EXPECT_EQ(kind_of([] { check_training_buffers({4, 3}, {4, 3}, 3, 2); }), ErrorKind::Data);
}

TEST(BufferCheck, Finite) {
    std::vector<float> v = {1, 2, 3, 4, 5, 6};
    check_finite_buffer(v.data(), {2, 3}, "x");
    v[4] = std::numeric_limits<float>::quiet_NaN();
    try {
        check_finite_buffer(v.data(), {2, 3}, "x");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Data);
        EXPECT_EQ(e.detail(), "Row 2, column 2 is NaN.");
    }
    v[4] = -std::numeric_limits<float>::infinity();
    EXPECT_EQ(kind_of([&] { check_finite_buffer(v.data(), {2, 3}, "x"); }), ErrorKind::Data);
}
