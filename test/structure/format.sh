#!/usr/bin/env bash
# The C++ sources are formatted as .clang-format says, and each file's includes come in the project's
# order (docs/DEVELOPING.md "Formatting"): its own header, the C++ standard library, system and
# third-party headers, the core (hopper/ and the core's own headers), the port (pg/), PostgreSQL last.
# clang-format sorts includes only inside a blank-line-separated block; the order of the blocks is
# checked here. Fails listing the files to fix; reformat them with
#   clang-format -i $(bash test/structure/format.sh --list)
# Arguments: files to check (default: every C++ source of the tree).
set -euo pipefail
cd "$(dirname "$0")/../.."
list_only=0
if [ "${1:-}" = --list ]; then list_only=1; shift; fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files -- src include test/unit test/fuzz client examples 'bench/*.cpp' tools |
                       grep -E '\.(cpp|h|hpp)$')
fi
[ $list_only = 1 ] && { printf '%s\n' "${files[@]}"; exit 0; }

bad=0
# Include order across blocks: the rank of each #include never goes down in a file.
for f in "${files[@]}"; do
  awk -v file="$f" '
    function rank(inc, own) {
      if (inc == own) return 0
      if (inc ~ /^<[a-z_0-9]+>$/) return 1
      if (inc ~ /^<([a-z_0-9-]+\.h|sys\/.*)>$/) return 2
      if (inc ~ /^</) return 3
      if (inc ~ /^"pg\//) return 5
      if (inc ~ /^"(postgres|fmgr|funcapi|miscadmin|pgstat)\.h"$/ ||
          inc ~ /^"(access|catalog|commands|common|executor|lib|nodes|optimizer|parser|port|postmaster|rewrite|storage|tcop|utils)\//) return 6
      return 4
    }
    BEGIN { n = split(file, parts, "/"); base = parts[n]; sub(/\.[a-z]+$/, "", base); last = 0 }
    /^#include / {
      inc = $2
      own = ""
      if (file ~ /\.cpp$/ && (inc ~ ("/" base "\\.h\"$") || inc == ("\"" base ".h\""))) own = inc
      r = rank(inc, own)
      if (r < last) { printf "format: %s:%d: %s comes after %s (own header, C++ standard, C and system, third-party, core, port, PostgreSQL)\n", file, FNR, inc, prev; bad = 1; exit 1 }
      last = r; prev = inc
    }' "$f" || bad=1
done

if ! command -v clang-format >/dev/null; then
  echo "format: clang-format is not installed (scripts/install-deps.sh installs it): formatting not checked"
  exit $bad
fi
unformatted=()
for f in "${files[@]}"; do
  clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "format: ${#unformatted[@]} files differ from .clang-format; reformat with: clang-format -i ${unformatted[*]}"
  bad=1
fi
[ $bad = 0 ] && echo "format: ${#files[@]} files formatted as .clang-format says, includes in the project's order"
exit $bad
