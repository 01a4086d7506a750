#!/usr/bin/env bash
# test/private-install.sh DIR: copies the PostgreSQL 15 installation into DIR and installs this
# build of hopper into the copy. PostgreSQL finds its share and lib directories relative to its own
# binaries, so a cluster started with PG_BIN=DIR/usr/lib/postgresql/15/bin (test/cluster.sh honours
# PG_BIN) loads this build's library and extension script and nobody else's: engineers sharing one
# machine can test their own builds side by side. Prints the PG_BIN export to eval.
# HOPPER_BUILD_DIR installs the build made in that directory instead (a copy of the tree built with
# other flags, as test/sanitizers_extension.sh does).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(realpath -m "${1:?usage: test/private-install.sh DIR}")
PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
libroot=$(dirname "$($PG_CONFIG --bindir)")     # /usr/lib/postgresql/15
shareroot=$($PG_CONFIG --sharedir)               # /usr/share/postgresql/15
if [ ! -x "$dir$libroot/bin/postgres" ]; then
  mkdir -p "$dir$(dirname "$libroot")" "$dir$(dirname "$shareroot")"
  cp -a "$libroot" "$dir$(dirname "$libroot")/"
  cp -a "$shareroot" "$dir$(dirname "$shareroot")/"
  chmod -R a+rX "$dir"
fi
make -s -C "${HOPPER_BUILD_DIR:-.}" install PG_CONFIG="$PG_CONFIG" DESTDIR="$dir" >/dev/null
echo "export PG_BIN='$dir$libroot/bin'"
