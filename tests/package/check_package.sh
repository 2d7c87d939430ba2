#!/usr/bin/env bash
# Installs graphjit from BUILD_DIR into a scratch prefix, then configures, builds and runs
# the standalone project in examples/ against it: proves find_package(graphjit) works.
# examples/ocr runs only when scripts/fetch_models.sh has fetched the recognizer.
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

# The OCR example reads a rendered line with the fetched recognizer; without the model
# (scripts/fetch_models.sh) or PIL to render the line it is built but not run.
repo_dir="$(cd "$src_dir/../.." && pwd)"
fetch_dir="${GRAPHJIT_FETCH_DIR:-$repo_dir/third_party/fetched}"
text="Hello graphjit 2026"
if [[ ! -f $fetch_dir/ocr-models/ch_PP-OCRv4_rec_infer.onnx ]]; then
  echo "ocr: skipped, no recognizer in $fetch_dir: run scripts/fetch_models.sh"
elif ! /usr/bin/python3 "$repo_dir/scripts/render_text_line.py" "$text" "$work/line.ppm"; then
  echo "ocr: skipped, scripts/render_text_line.py failed (python3-pil missing?)"
else
  got="$("$work/consumer/ocr" "$work/line.ppm" "$fetch_dir")"
  if [[ $got != "$text" ]]; then
    echo "ocr: read '$got', expected '$text'" >&2
    exit 1
  fi
  echo "ocr: read '$got'"
fi
