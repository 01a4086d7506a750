#!/usr/bin/env bash
# Paths named in the tree's code, comments and docs exist: a file that moves or goes away takes its
# mentions with it. A path here is a word that starts with one of the top-level folders; globs
# (test/unit/*.cpp) must match something. Names that are not the repository's own files (system
# paths, generated files, placeholders such as NAME) are listed in ALLOWED.
set -euo pipefail
cd "$(dirname "$0")/../.."
ALLOWED='^(src/ports|include/eigen3|include/dnnl|src/test/regress/pg_regress|bench/results/tmp|sql/(releases/|updates/)?hopper|sql//|test/data/\.)|NN_|NAME|OLD|NEW|<|/$'
top='src|include|test|sql|bench|docs|demo|scripts|cmake|client|tools|examples'
missing=0
while IFS= read -r path; do
  [[ "$path" =~ $ALLOWED ]] && continue
  if [[ "$path" == *'*'* ]]; then
    compgen -G "$path" >/dev/null || { echo "paths: $path matches nothing"; missing=1; }
  elif [ ! -e "$path" ] && [ ! -e "$path.cpp" ]; then  # a program is named by its source
    echo "paths: $path does not exist, named in: $(git grep -lF -- "$path" -- ':!bench/results' | head -3 | tr '\n' ' ')"
    missing=1
  fi
done < <(git ls-files -z | grep -zvE '^(bench/results|test/fuzz/corpus|test/data/.*\.hex)' |
         xargs -0 grep -ohE "(^|[^A-Za-z0-9_./-])($top)/[A-Za-z0-9_./*<>-]*[A-Za-z0-9_*>]" 2>/dev/null |
         sed -E 's/^[^A-Za-z]//' | sort -u)
[ $missing = 0 ] && echo "paths: every path the tree names exists"
exit $missing
