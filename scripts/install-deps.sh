#!/usr/bin/env bash
# Installs hopper's build and test dependencies from Debian 12's archive (idempotent). Extra
# package names given as arguments are installed too (the demo adds dataset-fashion-mnist).
#   postgresql-15, postgresql-server-dev-15  the server and the headers the extension builds against
#   libpq-dev                                 the parameter-server C++ client talks to PostgreSQL with it
#   libeigen3-dev                             float32 matrices and small products in the training core
#   libdnnl-dev                               oneDNN: the core's large float32 matrix products (src/core/gemm.h)
#   nlohmann-json3-dev                        parsing architectures and parameters (JSON)
#   zlib1g-dev                                reading gzipped idx files; CRC-32 without ISA-L
#   libisal-dev                               ISA-L: CRC-32 checksums of model states (8.6x zlib's speed)
#   googletest (libgtest-dev)                 the core's unit tests
#   postgresql-15-pgtap, libtap-parser-sourcehandler-pgtap-perl   pgTAP tests and pg_prove
#   cmake, g++, clang, libclang-rt-14-dev     building; clang for libFuzzer and sanitizer runs
#   clang-format                              the format gate (test/structure/format.sh, .clang-format)
#   libonnx-dev, libprotobuf-dev, protobuf-compiler   ONNX export and import (src/core/onnx_*.cpp): the
#                                             ONNX protobuf classes (libonnx_proto) over libprotobuf
#   python3-torch                             test/scripts/onnx_roundtrip.sh exports PyTorch models to import
#   nodejs, npm (unless npm is there)         test/scripts/onnx_roundtrip.sh runs exported models in ONNX
#                                             Runtime (npm's onnxruntime-node, installed by the test), and
#                                             scripts/datasets.sh fetches real tables from npm packages
#                                             (vega-datasets) for test/scripts/tabular_penguins.sh
#   chromium                                  test/scripts/plot_render.sh draws learning_curves_svg's pictures
#                                             in it (headless; 122 MB download, ~1.5 min; the test skips without)
#   m4, postgresql-plpython3-15, python3-dill  test/scripts/madlib_yardstick.sh: MADlib's test files are m4
#                                             input, and their custom-function setup pickles Python
#                                             functions with dill in PL/Python (docs/madlib.md)
set -euo pipefail
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

need=()
for p in postgresql-15 postgresql-server-dev-15 libpq-dev libeigen3-dev libdnnl-dev nlohmann-json3-dev zlib1g-dev libisal-dev \
         libgtest-dev postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl cmake g++ make clang \
         libclang-rt-14-dev clang-format libonnx-dev libprotobuf-dev protobuf-compiler python3-torch chromium m4 \
         postgresql-plpython3-15 python3-dill "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
# An npm that came with another Node.js (the image's nodejs package ships one, and NodeSource's
# conflicts with Debian's npm package) is kept; without any, Debian's nodejs and npm.
command -v npm >/dev/null || need+=(nodejs npm)
if [ ${#need[@]} -eq 0 ]; then
  echo "all dependencies are installed"
  exit 0
fi
echo "installing: ${need[*]}"
$SUDO apt-get update -q
# Keep the server-dev and PL/Python packages at the installed server's version where the archive still has it
# (otherwise apt may upgrade server and libpq too); fall back to the candidate.
server_version=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null || true)
pinned=()
for p in "${need[@]}"; do
  if { [ "$p" = postgresql-server-dev-15 ] || [ "$p" = postgresql-plpython3-15 ]; } && [ -n "$server_version" ] &&
     apt-cache madison "$p" | grep -q " $server_version "; then
    pinned+=("$p=$server_version")
  else
    pinned+=("$p")
  fi
done
$SUDO apt-get install -y -q --no-install-recommends "${pinned[@]}"
