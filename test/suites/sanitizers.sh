#!/usr/bin/env bash
# Sanitizer suite: builds the core and its GoogleTest suite with AddressSanitizer,
# UndefinedBehaviorSanitizer (-DHOPPER_SANITIZE=ON; UB aborts, no recovery) and LeakSanitizer in
# build/sanitize, and runs ctest. Any sanitizer report fails the suite.
#   SANITIZE_CXX=clang++-14 to build with clang instead of the default compiler.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SANITIZE_BUILD_DIR:-build/sanitize}
JOBS=${JOBS:-2}
[ "$JOBS" -gt 2 ] && JOBS=2
cxx_args=()
[ -n "${SANITIZE_CXX:-}" ] && cxx_args=(-DCMAKE_CXX_COMPILER="$SANITIZE_CXX")

echo "-- building the core and unit tests with ASan+UBSan in $BUILD"
# -O1 keeps the build and the run short; the unit tests run the same code paths as -O3.
cmake -S . -B "$BUILD" -DHOPPER_SANITIZE=ON -DCMAKE_BUILD_TYPE=Release -DHOPPER_OPT="-O1 -g" "${cxx_args[@]}" \
  >"$BUILD.configure.log" 2>&1 || { cat "$BUILD.configure.log"; exit 1; }
cmake --build "$BUILD" --target hopper_unit_tests -j"$JOBS" >"$BUILD.build.log" 2>&1 || { tail -60 "$BUILD.build.log"; exit 1; }

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
log="$BUILD.ctest.log"
set +e
(cd "$BUILD" && ctest --output-on-failure --no-tests=error -j"$JOBS") >"$log" 2>&1
rc=$?
set -e
tail -4 "$log"
if [ $rc -ne 0 ] || grep -qE 'runtime error:|ERROR: (AddressSanitizer|LeakSanitizer)' "$log"; then
  grep -E -B2 -A30 'runtime error:|ERROR: (AddressSanitizer|LeakSanitizer)|Failed|FAILED' "$log" | head -150
  echo "sanitizers.sh: FAILED (full log: $log)"
  exit 1
fi
echo "sanitizers.sh: $(grep -c 'Test *#' "$log") tests clean under ASan+UBSan+LSan"
