#!/usr/bin/env bash
# benchmarks/ort_compare/ort_run.js --profile: ONNX Runtime's per-node medians on the
# PP-OCRv4 recognizer (every node named with its op, one time per call, the sum in the
# report), and the bad-input paths: --profile without --repeat, an unwritable file.
# Usage: ort_run_profile_test.sh SOURCE_DIR   (exit 77, skipped, without node, ONNX
# Runtime or the model: scripts/fetch_models.sh)
set -u
src="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $1"; }
fail() {
  echo "FAILED: $1"
  failures=$((failures + 1))
}
run="$src/benchmarks/ort_compare/ort_run.js"
fetch="${GRAPHJIT_FETCH_DIR:-$src/third_party/fetched}"
model="$fetch/ocr-models/ch_PP-OCRv4_rec_infer.onnx"
if ! command -v node >/dev/null || [[ ! -d "$fetch/onnxruntime-node" || ! -s "$model" ]]; then
  echo "skipped: needs node, $fetch/onnxruntime-node and $model (run scripts/fetch_models.sh)"
  exit 77
fi
/usr/bin/python3 -c 'import numpy, sys; numpy.save(sys.argv[1], numpy.full((1, 3, 48, 64), 0.25, numpy.float32))' \
  "$work/x.npy" || { echo "FAILED: writing x.npy with numpy"; exit 1; }

node "$run" "$model" --input x=@"$work/x.npy" --profile "$work/p.json" >"$work/no_repeat.txt" 2>&1
[[ $? -eq 1 ]] && grep -q -- "--profile needs --repeat N" "$work/no_repeat.txt" &&
  pass "--profile without --repeat is refused" ||
  fail "--profile without --repeat is refused ($(cat "$work/no_repeat.txt"))"

node "$run" "$model" --input x=@"$work/x.npy" --repeat 3 --profile "$work/p.json" \
  >"$work/report.json" 2>"$work/err.txt" && python3 - "$work/report.json" "$work/p.json" <<'PY' &&
import json, sys
report = json.load(open(sys.argv[1]))
profile = json.load(open(sys.argv[2]))
nodes = profile["nodes"]
assert len(nodes) > 10, nodes
assert all(n["name"] and n["op"] for n in nodes), nodes
assert all(n["calls"] == 4 and n["median_us"] >= 0 for n in nodes), nodes  # warm-up + 3
assert "Conv" in {n["op"] for n in nodes}, nodes
assert abs(profile["total_us"] - sum(n["median_us"] for n in nodes)) < 1e-6, profile["total_us"]
assert report["profile"] == sys.argv[2] and report["profile_total_ms"] > 0, report
PY
  pass "--profile writes each node's median and their sum" ||
  fail "--profile writes each node's median and their sum ($(cat "$work/err.txt"))"

node "$run" "$model" --input x=@"$work/x.npy" --repeat 1 --profile "$work/no/such/dir/p.json" \
  >/dev/null 2>"$work/unwritable.txt"
[[ $? -eq 1 ]] && grep -q -- "--profile $work/no/such/dir/p.json" "$work/unwritable.txt" &&
  pass "an unwritable --profile file is named" ||
  fail "an unwritable --profile file is named ($(cat "$work/unwritable.txt"))"

[[ $failures -eq 0 ]]
