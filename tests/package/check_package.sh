#!/usr/bin/env bash
# Installs graphjit from BUILD_DIR into a scratch prefix, then configures, builds and runs
# the standalone project in examples/ against it: proves find_package(graphjit) works.
# examples/ocr and examples/vad run only when scripts/fetch_models.sh has fetched their
# models.
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
  # A page of two lines: the detector, the angle classifier and the recognizer.
  /usr/bin/python3 "$repo_dir/scripts/render_text_line.py" --page "30,20,32,$text" \
    --page "60,90,24,reads a whole page" --page-size 400,160 "$work/page.ppm"
  page="$("$work/consumer/ocr" --page "$work/page.ppm" "$fetch_dir" | cut -d' ' -f5-)"
  if [[ $page != "$text"$'\n'"reads a whole page" ]]; then
    echo "ocr --page: read '$page'" >&2
    exit 1
  fi
  echo "ocr --page: read $(echo "$page" | wc -l) lines"
fi

# The VAD example finds a sentence spoken by espeak-ng between two silences (sox pads it,
# without dither): one segment, starting about a second in. Skipped without the model,
# libsndfile (then the example is not built), espeak-ng or sox.
if [[ ! -f $fetch_dir/silero-vad/silero_vad.onnx ]]; then
  echo "vad: skipped, no Silero VAD in $fetch_dir: run scripts/fetch_models.sh"
elif [[ ! -x $work/consumer/vad ]]; then
  echo "vad: skipped, not built (libsndfile1-dev missing)"
elif ! command -v espeak-ng > /dev/null || ! command -v sox > /dev/null; then
  echo "vad: skipped, espeak-ng or sox missing (apt-get install espeak-ng sox)"
else
  espeak-ng -w "$work/s.wav" "graphjit finds the speech in this sentence"
  sox -D "$work/s.wav" -r 16000 -c 1 -b 16 "$work/s16.wav" pad 1.0 1.2
  got="$("$work/consumer/vad" "$work/s16.wav" --probs "$work/probs.npy" "$fetch_dir")"
  if ! awk 'NR == 1 && $1 >= 0.7 && $1 <= 1.3 && $3 > $1 + 1 { ok = 1 } END { exit !(ok && NR == 1) }' \
    <<< "$got" || [[ ! -s $work/probs.npy ]]; then
    echo "vad: found '$got', expected one segment from about 1.0 s (and probs.npy)" >&2
    exit 1
  fi
  echo "vad: speech at $got"
fi
