#!/usr/bin/env bash
# graphjit-study --only=ocr: without the models it says how to fetch them and exits 0;
# with them (scripts/fetch_models.sh) a short run's JSON has every policy for the
# recognizer and the detector, each compiling at least once, the compile counts the
# policies predict, and the same-text and same-boxes facts.
# Usage: study_ocr_test.sh BIN_DIR   (exit 77, skipped, without the model or without PIL)
set -u
bin="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $1"; }
fail() {
  echo "FAILED: $1"
  failures=$((failures + 1))
}

# No model: a message naming the fetch script, exit 0, and the JSON says it was skipped.
"$bin/graphjit-study" --only=ocr --ocr_fetch_dir "$work/none" --json "$work/none.json" \
  >"$work/none.txt" 2>&1 && grep -q "run scripts/fetch_models.sh" "$work/none.txt" &&
  python3 -c 'import json, sys; assert "fetch_models.sh" in json.load(open(sys.argv[1]))["ocr"]["skipped"]' \
    "$work/none.json" &&
  python3 -c 'import json, sys; assert "fetch_models.sh" in json.load(open(sys.argv[1]))["ocr_pages"]["skipped"]' \
    "$work/none.json" && pass "ocr without the model says how to fetch it" ||
  fail "ocr without the model says how to fetch it ($(cat "$work/none.txt"))"
"$bin/graphjit-study" --only=ocr --ocr_lines=0 >/dev/null 2>"$work/zero.txt"
[[ $? -ne 0 ]] && grep -q "^graphjit-study: --ocr_lines: expected 1 or more, got 0$" "$work/zero.txt" &&
  pass "ocr --ocr_lines=0 is refused" || fail "ocr --ocr_lines=0 is refused ($(cat "$work/zero.txt"))"
"$bin/graphjit-study" --only=ocr --ocr_pages=0 >/dev/null 2>"$work/zero.txt"
[[ $? -ne 0 ]] && grep -q "^graphjit-study: --ocr_pages: expected 1 or more, got 0$" "$work/zero.txt" &&
  pass "ocr --ocr_pages=0 is refused" || fail "ocr --ocr_pages=0 is refused ($(cat "$work/zero.txt"))"

fetch="${GRAPHJIT_FETCH_DIR:-$(dirname "$0")/../../third_party/fetched}"
if [[ ! -s "$fetch/ocr-models/ch_PP-OCRv4_rec_infer.onnx" || ! -s "$fetch/ocr-models/ch_PP-OCRv4_det_infer.onnx" ]]; then
  echo "skipped: no PP-OCRv4 recognizer or detector in $fetch/ocr-models (run scripts/fetch_models.sh)"
  [[ $failures -eq 0 ]] && exit 77
  exit 1
fi
if ! /usr/bin/python3 -c "import PIL" 2>/dev/null; then
  echo "skipped: /usr/bin/python3 has no PIL to render the lines (apt-get install python3-pil)"
  [[ $failures -eq 0 ]] && exit 77
  exit 1
fi

# Four lines of distinct widths: exact compiles four times, symbolic once, auto twice
# (exact first, then symbolic), the buckets at least once each; nothing loaded (cold).
# Three pages of distinct sizes: the same for the detector, whose symbolic entry finds
# exact's boxes.
"$bin/graphjit-study" --only=ocr --ocr_lines=4 --ocr_pages=3 --ocr_fetch_dir "$fetch" --json "$work/ocr.json" \
  >"$work/ocr.txt" 2>&1 && python3 - "$work/ocr.json" <<'PY' && pass "ocr --json" ||
import json, sys
d = json.load(open(sys.argv[1]))["ocr"]
assert "skipped" not in d, d
assert d["lines"] == 4 and len(d["widths"]) == 4, d
assert d["distinct_widths"] == 4, d["widths"]
rows = {p["policy"]: p for p in d["policies"]}
assert sorted(rows) == ["auto", "exact", "mult128", "pow2", "symbolic"], sorted(rows)
for name, p in rows.items():
    assert p["compiles"] >= 1, p
    assert p["kernels_loaded"] == 0, p
    assert isinstance(p["same_text_as_exact"], bool), p
    assert p["same_text_as_exact"] == (p["lines_text_changed"] == 0), p
    assert p["padded_columns"] >= p["real_columns"] == sum(d["widths"]), p
assert rows["exact"]["compiles"] == 4 and rows["exact"]["max_abs_diff"] == 0, rows["exact"]
assert rows["exact"]["same_text_as_exact"] and rows["exact"]["padding_ratio"] == 0
assert rows["symbolic"]["compiles"] == 1 and rows["auto"]["compiles"] == 2, rows
for name in ("pow2", "mult128"):
    assert rows[name]["padding_ratio"] > 0, rows[name]
d = json.load(open(sys.argv[1]))["ocr_pages"]
assert "skipped" not in d and d["pages"] == 3, d
rows = {p["policy"]: p for p in d["policies"]}
assert sorted(rows) == ["auto", "exact", "mult128", "pow2", "symbolic"], sorted(rows)
for name, p in rows.items():
    assert p["compiles"] >= 1 and p["padded_pixels"] >= p["real_pixels"] > 0, p
assert rows["exact"]["compiles"] == 3 and rows["exact"]["boxes"] > 0, rows["exact"]
assert rows["symbolic"]["compiles"] == 1 and rows["auto"]["compiles"] == 2, rows
assert rows["symbolic"]["max_abs_diff"] < 1e-4, rows["symbolic"]
assert rows["symbolic"]["pages_boxes_changed"] == 0, rows["symbolic"]
for name in ("pow2", "mult128"):
    assert rows[name]["padding_ratio"] > 0, rows[name]
PY
  fail "ocr --json ($(tail -5 "$work/ocr.txt"))"
grep -q "same text" "$work/ocr.txt" && grep -q "^  pow2 " "$work/ocr.txt" &&
  grep -q "pages with other boxes" "$work/ocr.txt" &&
  pass "ocr prints its table" || fail "ocr prints its table"

[[ $failures -eq 0 ]]
