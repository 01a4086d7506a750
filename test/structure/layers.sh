#!/usr/bin/env bash
# The port's folders are layers (docs/DEVELOPING.md "Layers"): a file includes headers of its own
# folder and of the folders below it, never of one above. The core (include/hopper, src/core)
# includes no PostgreSQL header and nothing of the port. Fails naming every include that climbs.
set -euo pipefail
cd "$(dirname "$0")/../.."
# Bottom to top.
LAYERS=(common runtime engine combine training serving registry ps procedures module)
rank() {
  local i
  for i in "${!LAYERS[@]}"; do [ "${LAYERS[$i]}" = "$1" ] && { echo "$i"; return; }; done
  echo "-1"
}
bad=0
for dir in src/pg/*/; do
  layer=$(basename "$dir")
  r=$(rank "$layer")
  [ "$r" -ge 0 ] || { echo "layers: src/pg/$layer is not in the layer list (test/structure/layers.sh, docs/DEVELOPING.md)"; bad=1; continue; }
  while IFS=: read -r file line inc; do
    target=$(sed -E 's#.*"pg/([a-z_]+)/.*#\1#' <<<"$inc")
    t=$(rank "$target")
    if [ "$t" -gt "$r" ]; then
      echo "layers: $file:$line includes $(sed -E 's/.*"(.*)".*/\1/' <<<"$inc"): $layer must not include ${LAYERS[$t]} (a layer above it)"
      bad=1
    fi
  done < <(grep -nE '^#include "pg/[a-z_]+/' "$dir"*.h "$dir"*.cpp 2>/dev/null || true)
done
if grep -nE '^#include ("pg/|<postgres|"postgres|"(utils|access|catalog|executor|nodes|storage|fmgr|funcapi)[/.])' include/hopper/*.h src/core/*.cpp src/core/*.h 2>/dev/null; then
  echo "layers: the core includes a PostgreSQL or port header"
  bad=1
fi
[ $bad = 0 ] && echo "layers: no include climbs (${LAYERS[*]}, bottom to top); the core includes nothing of PostgreSQL"
exit $bad
