#!/usr/bin/env bash
# Installs graphjit from BUILD_DIR into a scratch prefix, then configures, builds and runs
# the standalone project in examples/ against it: proves find_package(graphjit) works.
set -euo pipefail
build_dir="$1"
src_dir="$(cd "$(dirname "$0")" && pwd)"
work="$build_dir/package-test"
rm -rf "$work"
cmake --install "$build_dir" --prefix "$work/prefix" > "$work.install.log"
cmake -S "$src_dir/../../examples" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" > /dev/null
cmake --build "$work/consumer" > /dev/null
"$work/consumer/jit_function"
"$work/consumer/decode_with_cache"
