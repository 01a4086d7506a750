#!/usr/bin/env bash
# Sanitizer run of the extension itself. A documented command, not in test/suites: a cold build of
# 10.7 CPU-minutes and 4 to 5.5 minutes of tests on 2 cores exceed CI's budget (docs/reliability.md).
# Builds hopper.so (core and port) with AddressSanitizer and UndefinedBehaviorSanitizer in a copy
# of the tree (build/sanitize-ext, never mixed with the normal build's objects), installs it into a private copy of PostgreSQL (test/private-install.sh),
# starts a throwaway cluster whose server runs with the ASan runtime preloaded, and runs the
# pg_regress suite (test/regress/sql/*.sql vs test/regress/expected/*.out) there. Fails on any regression difference and on
# any ASan or UBSan report in the server's processes.
#   REGRESS="fit registry" to run only those files; SANITIZE_CXX the compiler (gcc's, default g++;
#   "ccache g++" keeps rebuilds short);
#   SANITIZE_EXT_BUILD_DIR the build copy; HOPPER_TEST_PORT (default 54393).
# In the sanitizer build, SPI's procedure context hands out each chunk as its own malloc
# (src/pg/common/spi.cpp), so a value read after SPI_finish freed it is reported too.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
BUILD=$(realpath -m "${SANITIZE_EXT_BUILD_DIR:-build/sanitize-ext}")
CXX_SAN=${SANITIZE_CXX:-g++}
JOBS=${JOBS:-2}
[ "$JOBS" -gt 2 ] && JOBS=2
start=$SECONDS

# PostgreSQL's binaries are not instrumented: the runtime has to be the first library of the server
# process, hence LD_PRELOAD (gcc links the shared runtime by default).
runtime=$(${CXX_SAN##* } -print-file-name=libasan.so)
[ -f "$runtime" ] || { echo "sanitizers_extension.sh: no libasan.so for $CXX_SAN"; exit 1; }

echo "-- building hopper.so with ASan+UBSan in $BUILD"
mkdir -p "$BUILD"
# The sources, copied when they differ (the copy gets a new time, so make rebuilds what depends on
# it); files deleted from the tree go here too. Objects stay, for the next build.
while IFS= read -r f; do
  if ! cmp -s "$f" "$BUILD/$f"; then mkdir -p "$BUILD/$(dirname "$f")"; cp "$f" "$BUILD/$f"; fi
done < <(find Makefile hopper.control hopper_madlib.control include src sql tools test/regress -type f \
           ! -name '*.o' ! -name '*.so' ! -name '*.bc' ! -path 'sql/hopper--*')
(cd "$BUILD" && find include src sql tools test/regress -type f ! -name '*.o' ! -name '*.so' ! -path 'sql/hopper--*') \
  | while IFS= read -r f; do [ -e "$f" ] || rm -f "$BUILD/$f"; done
# -O1 -g: readable reports and a bearable build. UBSan reports and goes on.
san="-fsanitize=address,undefined"
make -C "$BUILD" -j"$JOBS" CXX="$CXX_SAN" PG_CONFIG="$PG_CONFIG" \
  HOPPER_OPT="-O1 -g -fno-omit-frame-pointer $san" PG_LDFLAGS="$san" >"$BUILD.build.log" 2>&1 \
  || { tail -60 "$BUILD.build.log"; echo "sanitizers_extension.sh: FAILED to build"; exit 1; }

# ASan initializes at the first intercepted call; in PostgreSQL's process that is a malloc inside
# bindtextdomain, run by libgpg-error's constructor while it holds glibc's locale lock, and ASan's
# initialization takes that lock again: the server hangs before main. A tiny library that the
# loader initializes before every other (-z initfirst) initializes ASan first.
printf '%s\n' 'void __asan_init(void);' \
  '__attribute__((constructor)) static void asan_init_first(void) { __asan_init(); }' >"$BUILD/asan_init_first.c"
${CXX_SAN##* } -x c -shared -fPIC -Wl,-z,initfirst -o "$BUILD/asan_init_first.so" "$BUILD/asan_init_first.c"
built=$SECONDS

pg_bin=$(HOPPER_BUILD_DIR="$BUILD" bash test/private-install.sh "$BUILD.pg")
eval "$pg_bin"
CLUSTER=$(mktemp -d /tmp/hopper-sanitize-ext.XXXXXX)
logs="$BUILD.logs"
rm -rf "$logs"
trap 'bash "$ROOT/test/cluster.sh" stop "$CLUSTER"' EXIT
# detect_leaks=0: PostgreSQL frees a backend's memory by exiting. halt_on_error=0: a report from an
# intercepted call (PostgreSQL's memcpy reading hopper's freed memory) lets the backend go on, where
# an exit would restart the server and fail every later test; reports from hopper's own code still
# end the process. Reports go to files in the cluster directory, one per process (kept in $logs).
opts="halt_on_error=0:detect_leaks=0:log_path=$CLUSTER/sanitizer"
cluster_env=$(HOPPER_TEST_PORT=${HOPPER_TEST_PORT:-54393} \
  HOPPER_SERVER_ENV="LD_PRELOAD=$runtime:$BUILD/asan_init_first.so ASAN_OPTIONS=$opts UBSAN_OPTIONS=print_stacktrace=1:$opts" \
  bash test/cluster.sh start "$CLUSTER")
eval "$cluster_env"
export PGHOST PGPORT PGUSER PGDATABASE

echo "-- pg_regress against the sanitized server"
set +e
make -C "$BUILD" installcheck PG_CONFIG="$PG_CONFIG" ${REGRESS:+REGRESS="$REGRESS"} >"$BUILD.regress.log" 2>&1
regress_rc=$?
set -e
grep -E '^(ok|not ok|test |[[:space:]]+[a-z_]+ +\.\.\.)|tests (passed|failed)' "$BUILD.regress.log" || true

mkdir -p "$logs"
cp "$CLUSTER"/server.log "$CLUSTER"/sanitizer.* "$logs/" 2>/dev/null || true
reports=$(grep -lE 'ERROR: AddressSanitizer|runtime error:' "$logs"/* 2>/dev/null || true)
echo "sanitizers_extension.sh: build $((built - start)) s, install and regression $((SECONDS - built)) s"
if [ -n "$reports" ]; then
  for f in $reports; do
    echo "---- $f"
    grep -E -A40 'ERROR: AddressSanitizer|runtime error:' "$f" | head -80
  done
fi
if [ $regress_rc -ne 0 ]; then
  [ -f "$BUILD/regression.diffs" ] && head -100 "$BUILD/regression.diffs"
fi
if [ -n "$reports" ] || [ $regress_rc -ne 0 ]; then
  echo "sanitizers_extension.sh: FAILED ($(echo "$reports" | grep -c . || true) files with sanitizer reports in $logs; pg_regress exit $regress_rc$([ $regress_rc -ne 0 ] && echo ", diffs in $BUILD/regression.diffs"))"
  exit 1
fi
echo "sanitizers_extension.sh: pg_regress clean under ASan+UBSan"
