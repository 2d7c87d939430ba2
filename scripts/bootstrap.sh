#!/usr/bin/env bash
# Installs the Debian packages graphjit needs (only the missing ones), configures the
# Ninja build in build/ (once) and builds it. Safe and fast to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3 only runs a test's JSON check (tools/plot_study.py also wants python3-matplotlib).
# libhiredis-dev: the remote code cache's client; redis-server (with redis-cli): its tests.
# clang-format-19: the format check (scripts/check_format.sh), pinned to one version.
# libonnx-dev + libprotobuf-dev: ONNX import (onnx/); libonnx-testdata: the ONNX node
# tests that tests/onnx runs the importer on (skipped without it).
PACKAGES=(ninja-build ccache llvm-19-dev libopenblas-dev libabsl-dev libgtest-dev
          libgmock-dev libbenchmark-dev nlohmann-json3-dev libxxhash-dev libhiredis-dev
          redis-server python3 clang-format-19 libonnx-dev libprotobuf-dev libonnx-testdata)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# GRAPHJIT_BOOTSTRAP_PACKAGES_ONLY=1: only the packages (scripts/sanitize.sh builds elsewhere).
[[ -n ${GRAPHJIT_BOOTSTRAP_PACKAGES_ONLY:-} ]] && exit 0

BUILD_DIR="${GRAPHJIT_BUILD_DIR:-build}"
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD_DIR" -j"$(nproc)"
