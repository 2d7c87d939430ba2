#!/usr/bin/env bash
# The command-line tools: IR round trips and their bad-input paths (each must exit
# non-zero with one clear line on stderr). Usage: tools_test.sh BIN_DIR
set -u
bin="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $1"; }
fail() { echo "FAILED: $1"; failures=$((failures + 1)); }

# expect_error NAME EXPECTED_SUBSTRING COMMAND...
expect_error() {
  local name="$1" want="$2"
  shift 2
  local err
  err="$("$@" 2>&1 >/dev/null)"
  local rc=$?
  if [[ $rc -ne 0 && "$err" == *"$want"* && $(printf '%s\n' "$err" | wc -l) -eq 1 ]]; then
    pass "$name"
  else
    fail "$name (rc=$rc, stderr: $err)"
  fi
}

# graphjit-dump output is valid IR that graphjit-dump reads back unchanged.
for stage in traced optimized; do
  "$bin/graphjit-dump" decode --stage=$stage > "$work/$stage.gir" &&
    "$bin/graphjit-dump" "$work/$stage.gir" --stage=traced > "$work/$stage.again.gir" &&
    cmp -s "$work/$stage.gir" "$work/$stage.again.gir" && pass "dump $stage round trip" ||
    fail "dump $stage round trip"
done
"$bin/graphjit-dump" decode --stage=kernels | grep -q "matmul(axpy)" && pass "dump kernels" ||
  fail "dump kernels"
"$bin/graphjit-dump" decode --dim S=64 --stage=llvm-opt | grep -q "<4 x double>" &&
  pass "dump llvm-opt is vectorized" || fail "dump llvm-opt is vectorized"

expect_error "dump unknown stage" "unknown --stage 'bogus'" "$bin/graphjit-dump" decode --stage=bogus
expect_error "dump unknown model" "valid models:" "$bin/graphjit-dump" gpt9
expect_error "dump missing file" "cannot open" "$bin/graphjit-dump" "$work/none.gir"
printf 'graph g {\n  %%0 = input {name="x"} : f64[2, S+]\n' > "$work/bad.gir"
expect_error "dump malformed IR" "bad.gir:2:" "$bin/graphjit-dump" "$work/bad.gir"
expect_error "dump unknown flag" "Unknown command line flag 'bogus'" "$bin/graphjit-dump" decode --bogus
expect_error "dump unknown pass" "no pass 'nope'" "$bin/graphjit-dump" decode --print-after=nope

# graphjit-run: eager and interpreter agree bitwise; the JIT runs; bad inputs are named.
"$bin/graphjit-run" decode --dim S=16 --bind P=15 --mode=eager --output-dir "$work/eager" >/dev/null &&
  "$bin/graphjit-run" decode --dim S=16 --bind P=15 --mode=interp --output-dir "$work/interp" \
    >/dev/null && cmp -s "$work/eager/output0.npy" "$work/interp/output0.npy" &&
  pass "run eager == interp" || fail "run eager == interp"
"$bin/graphjit-run" decode --dim S=16 --bind P=15 --mode=jit --output-dir "$work/jit" >/dev/null &&
  [[ -s "$work/jit/output2.npy" ]] && pass "run jit" || fail "run jit"
# Feed an output back in as an input file: a valid .npy of the right type.
"$bin/graphjit-run" decode --dim S=16 --input "x=@$work/eager/output0.npy" >/dev/null &&
  pass "run reads its own .npy" || fail "run reads its own .npy"
head -c 200 "$work/eager/output0.npy" > "$work/trunc.npy"
expect_error "run truncated npy" "trunc.npy: data has" "$bin/graphjit-run" decode --dim S=16 --input "x=@$work/trunc.npy"
expect_error "run wrong shape" "input 'k_cache'" "$bin/graphjit-run" decode --dim S=16 --input "k_cache=@$work/eager/output0.npy"
expect_error "run missing file" "cannot open" "$bin/graphjit-run" decode --input "x=@$work/none.npy"
expect_error "run unknown mode" "unknown mode 'fast'" "$bin/graphjit-run" decode --mode=fast
expect_error "run eager on IR" "needs a model spec" "$bin/graphjit-run" "$work/traced.gir" --mode=eager
expect_error "run missing params" "parameter 'attn_norm'" "$bin/graphjit-run" "$work/traced.gir" --param-dir "$work"

# A policy runs through the compile cache (padded to the bucket) and matches plain jit.
"$bin/graphjit-run" decode --dim S=16 --bind P=15 --mode=jit --policy=pow2 --output-dir "$work/pow2" \
  >/dev/null && [[ -s "$work/pow2/output0.npy" ]] && pass "run --policy" || fail "run --policy"
expect_error "run unknown policy" "unknown shape policy 'best'" "$bin/graphjit-run" decode --policy=best
"$bin/graphjit-dump" decode --policy=pow2 --dim S=100 --stage=traced | grep -q 'kmask.*f64\[1, 1, 128\]' &&
  pass "dump --policy" || fail "dump --policy"
"$bin/graphjit-dump" tinygpt:L=2,d=64,T=32,V=21,B=2 --stats | grep -q "training FLOPs 41410560" &&
  pass "dump --stats training FLOPs" || fail "dump --stats training FLOPs"

# GRAPHJIT_DUMP_DIR: every compile writes its stages.
GRAPHJIT_DUMP_DIR="$work/dump" "$bin/graphjit-run" decode --dim S=8 >/dev/null &&
  grep -q "kv_write" "$work/dump/0.decode.1-optimized.txt" &&
  grep -q "define" "$work/dump/0.decode.4-llvm-opt.txt" && pass "GRAPHJIT_DUMP_DIR" ||
  fail "GRAPHJIT_DUMP_DIR"
"$bin/graphjit-dump" decode --stats | grep -q "FLOPs (matmul, 2 per multiply-add): 512\*S+346112" &&
  pass "dump --stats FLOPs" || fail "dump --stats FLOPs"

# graphjit-study on a short run: every JSON key, and compile counts the key functions
# predict for S = 101..140 (pow2 and mult128: buckets 128 and 256).
"$bin/graphjit-study" --steps 40 --json "$work/study.json" >"$work/study.txt" 2>&1 &&
  python3 - "$work/study.json" <<'PY' && pass "study --json" || fail "study --json ($(tail -3 "$work/study.txt"))"
import json, sys
d = json.load(open(sys.argv[1]))
for key in ("policies", "symbolic", "graph_breaks", "overhead", "flops", "machine"):
    assert key in d, key
for p in d["policies"]:
    for key in ("policy", "compiles", "compile_seconds", "padding_ratio", "run_seconds", "max_abs_diff"):
        assert key in p, key
    assert len(p["step_seconds"]) == 40
    assert p["max_abs_diff"] < 1e-12, p
compiles = {p["policy"]: p["compiles"] for p in d["policies"]}
assert compiles == {"exact": 40, "pow2": 2, "mult128": 2, "symbolic": 1, "auto": 2}, compiles
assert d["graph_breaks"]["final_graph_empty"] is True
for key in ("cpu", "cores", "llvm"):
    assert key in d["machine"], key
PY
expect_error "study unknown section" "unknown section 'nope'" "$bin/graphjit-study" --only=nope
expect_error "study bad dtype" "--dtype: expected f32 or f64" "$bin/graphjit-study" --dtype=f16 --only=breaks
expect_error "study non-decode model" "the studies run a decode layer" "$bin/graphjit-study" --model=linear --only=breaks

echo "$((32 - failures)) passed, $failures failed"
[[ $failures -eq 0 ]]
