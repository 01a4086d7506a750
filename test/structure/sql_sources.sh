#!/usr/bin/env bash
# One source per SQL object (docs/DEVELOPING.md "A release"): every file of sql/objects is taken
# into the install script exactly once, every #include names a file that exists, and no upgrade
# script source (sql/updates) writes a function, procedure, aggregate, view, type, table, trigger or
# policy itself -- it includes the object's one source, so an upgrade cannot drift from a fresh
# install. (test/scripts/upgrade.sh then checks that the updated catalog equals a fresh install's.)
set -euo pipefail
cd "$(dirname "$0")/../.."
fail=0
complain() { echo "sql_sources: $*" >&2; fail=1; }

for obj in sql/objects/*.sql; do
  name=${obj#sql/}
  n=$(cat sql/ext/*.sql | grep -cFx "#include \"$name\"" || true)
  [ "$n" = 1 ] || complain "$obj is included $n times by sql/ext/*.sql (must be once)"
done
while IFS=: read -r file _ line; do
  target=sql/$(sed -E 's/^#include "(.*)"$/\1/' <<<"$line")
  [ -s "$target" ] || complain "$file includes $target, which does not exist"
  case "$target" in sql/objects/*.sql) ;; *) complain "$file includes $target: only sql/objects/*.sql are included" ;; esac
done < <(grep -n '^#include' sql/ext/*.sql sql/updates/*.sql sql/objects/*.sql /dev/null)
grep -l '^#include' sql/objects/*.sql /dev/null && complain "an object file includes another (objects are leaves)"
if grep -nEi '^[[:space:]]*CREATE[[:space:]]+(OR[[:space:]]+REPLACE[[:space:]]+)?(FUNCTION|PROCEDURE|AGGREGATE|VIEW|TYPE|TABLE|TRIGGER|POLICY)\b' \
     sql/updates/*.sql; then
  complain "an upgrade script source defines an object itself: put it in sql/objects and #include it"
fi
[ $fail = 0 ] && echo "sql_sources: $(ls sql/objects/*.sql | wc -l) objects, each included once; upgrade sources define nothing themselves"
exit $fail
