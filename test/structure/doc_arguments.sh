#!/usr/bin/env bash
# The named arguments the documentation shows hopper's functions and procedures taking exist: each
# `name(..., arg => ...)` (with or without hopper.) in README.md and docs/*.md, where the SQL object source of that name
# declares it, names one of its parameters. (README once said fit resumes with warm_start_run, which
# only fit_multiple takes.)
set -euo pipefail
cd "$(dirname "$0")/../.."
fail=0
checked=0
while IFS=: read -r file call; do
  name=$(sed -E 's/^(hopper\.)?([a-z_0-9]+)\(.*/\2/' <<<"$call")
  arg=$(sed -E 's/.*, ([a-z_0-9]+) =>$/\1/' <<<"$call")
  obj=sql/objects/$name.sql
  [ -f "$obj" ] || continue
  checked=$((checked + 1))
  if ! grep -qE "(^|[(,])[[:space:]]*$arg[[:space:]]+[a-z]" "$obj"; then
    echo "doc_arguments: $file shows $name(..., $arg => ...), but $obj declares no parameter $arg" >&2
    fail=1
  fi
done < <(grep -oHE '(hopper\.)?[a-z_0-9]+\(\.\.\.,[[:space:]]*[a-z_0-9]+ =>' README.md docs/*.md | sed -E 's/,[[:space:]]+/, /')
[ $fail = 0 ] && echo "doc_arguments: $checked named arguments shown in the documentation exist"
exit $fail
