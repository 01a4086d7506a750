#!/usr/bin/env bash
# Fuzzing suite: builds the libFuzzer targets (cmake/fuzz.cmake: clang, ASan + UBSan, libFuzzer
# coverage) in build/fuzz and runs each for a bounded time on its seed corpus
# (test/fuzz/corpus/<target>, plus seeds generated from the current state format). Fails on any
# crash, sanitizer report, leak, timeout or non-hopper exception (see test/fuzz/fuzz_common.h).
#
#   FUZZ_SECONDS=30 (per target)   FUZZ_TARGETS="state buffer" (default: all)
#   FUZZ_KEEP=DIR: keep the grown corpora and logs in DIR (default: a temporary directory)
# Longer runs: docs/reliability.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
SECONDS_PER_TARGET=${FUZZ_SECONDS:-30}
TARGETS=${FUZZ_TARGETS:-"architecture compile_params fit_params model_config state buffer recipe onnx"}
BUILD=${FUZZ_BUILD_DIR:-build/fuzz}
CC_BIN=${FUZZ_CC:-clang-14}
CXX_BIN=${FUZZ_CXX:-clang++-14}
JOBS=${JOBS:-2}
[ "$JOBS" -gt 2 ] && JOBS=2

command -v "$CXX_BIN" >/dev/null || { echo "fuzz.sh: $CXX_BIN not found (install clang and libclang-rt-14-dev)" >&2; exit 1; }

echo "-- building fuzz targets in $BUILD"
CC=$CC_BIN CXX=$CXX_BIN cmake -S . -B "$BUILD" -DHOPPER_FUZZ=ON -DCMAKE_BUILD_TYPE=Release \
  -DHOPPER_OPT="-O1 -g" >"$BUILD.configure.log" 2>&1 || { cat "$BUILD.configure.log"; exit 1; }
cmake --build "$BUILD" --target hopper_fuzzers -j"$JOBS" >"$BUILD.build.log" 2>&1 || { tail -50 "$BUILD.build.log"; exit 1; }

WORK=${FUZZ_KEEP:-$(mktemp -d /tmp/hopper-fuzz.XXXXXX)}
mkdir -p "$WORK"
"$BUILD/hopper_fuzz_seeds" "$WORK/generated" >/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

failed=0
printf '%-16s %8s %12s %10s %8s %8s\n' target seconds executions exec/s corpus result
for t in $TARGETS; do
  corpus="$WORK/corpus_$t"
  mkdir -p "$corpus" "$WORK/artifacts_$t"
  seeds=("test/fuzz/corpus/$t")
  [ -d "$WORK/generated/$t" ] && seeds+=("$WORK/generated/$t")
  log="$WORK/$t.log"
  set +e
  "$BUILD/fuzz_$t" -max_total_time="$SECONDS_PER_TARGET" -max_len=16384 -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$WORK/artifacts_$t/" "$corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  size=$(ls "$corpus" | wc -l)
  if [ $rc -eq 0 ] && ! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|FUZZ FINDING' "$log"; then
    result=ok
  else
    result=FAILED
    failed=1
  fi
  printf '%-16s %8s %12s %10s %8s %8s\n' "$t" "$SECONDS_PER_TARGET" "${execs:-?}" "${rate:-?}" "$size" "$result"
  if [ "$result" = FAILED ]; then
    echo "---- $t: last 60 lines of $log ----"
    tail -60 "$log"
    ls -l "$WORK/artifacts_$t" || true
  fi
done
if [ $failed -ne 0 ]; then
  echo "fuzz.sh: FAILED (inputs that reproduce are in $WORK/artifacts_*; run build/fuzz/fuzz_<target> FILE)"
  exit 1
fi
[ -z "${FUZZ_KEEP:-}" ] && rm -rf "$WORK"
echo "fuzz.sh: all targets ran clean"
