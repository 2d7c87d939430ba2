#!/usr/bin/env bash
# Runs one libFuzzer target of tests/fuzz for a while:
#   scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]
# TARGET: parser, npy, safetensors, interpret, differential, onnx or code_record; SECONDS
# defaults to 60.
# Installs clang-19 and libfuzzer-19-dev (and the libraries graphjit needs) with apt-get
# if missing, builds the target with ASan + UBSan in build-fuzz/ (its own build dir;
# GRAPHJIT_FUZZ_BUILD_DIR overrides), and fuzzes from the committed corpus
# (tests/fuzz/corpus/TARGET, read only) into build-fuzz/corpus/TARGET. A crash is saved as
# build-fuzz/artifacts/TARGET/crash-*: fix it, then copy it into the committed corpus as a
# regression (the fuzz.replay_TARGET test replays it in every ctest run).
set -euo pipefail
cd "$(dirname "$0")/.."

TARGETS=(parser npy safetensors interpret differential onnx code_record)
if (($# < 1)) || [[ ! " ${TARGETS[*]} " == *" $1 "* ]]; then
  echo "usage: scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]" >&2
  echo "TARGET: ${TARGETS[*]}" >&2
  exit 2
fi
target=$1
seconds=${2:-60}
shift $(($# >= 2 ? 2 : 1))
if ! [[ $seconds =~ ^[0-9]+$ ]]; then
  echo "fuzz.sh: SECONDS must be a number, got '$seconds'" >&2
  exit 2
fi

PACKAGES=(clang-19 libfuzzer-19-dev ninja-build ccache llvm-19-dev libopenblas-dev libabsl-dev
          nlohmann-json3-dev libxxhash-dev libonnx-dev libprotobuf-dev)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "fuzz.sh: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

BUILD_DIR="${GRAPHJIT_FUZZ_BUILD_DIR:-build-fuzz}"
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER=clang++-19 -DGRAPHJIT_FUZZ=ON \
    -DGRAPHJIT_BUILD_TESTS=OFF -DGRAPHJIT_BUILD_BENCHMARKS=OFF >/dev/null
fi
nice -n 19 cmake --build "$BUILD_DIR" --target "fuzz_$target" -j"${GRAPHJIT_JOBS:-2}"

work="$BUILD_DIR/corpus/$target"
artifacts="$BUILD_DIR/artifacts/$target"
mkdir -p "$work" "$artifacts"
# LeakSanitizer checks every input, except for the differential target: the process-wide
# JIT keeps code and LLVM its global state (target machines, pass registries) alive past
# one input by design, which libFuzzer would report as leaks.
leaks=1
[[ $target == differential ]] && leaks=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=$leaks:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
exec nice -n 19 "$BUILD_DIR/bin/fuzz_$target" -max_total_time="$seconds" -timeout=60 \
  -rss_limit_mb=4096 -print_final_stats=1 -dict="tests/fuzz/dict/$target.dict" \
  -artifact_prefix="$artifacts/" "$@" "$work" "tests/fuzz/corpus/$target"
