#!/usr/bin/env bash
# The command-line tools: IR round trips and their bad-input paths (each must exit
# non-zero with one clear line on stderr). Usage: tools_test.sh BIN_DIR
set -u
bin="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
passes=0
pass() { echo "ok: $1"; passes=$((passes + 1)); }
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

# A graph with a loop round-trips as text and dumps each compiled piece's kernels; it is not
# profiled kernel by kernel (one line saying so).
cat > "$work/loop.gir" <<'EOF_LOOP'
graph loop {
  %0 = input {name="x"} : f32[4]
  %1 = while(%0) {carried=1, max_trips=3} : f32[4]
    region graph cond {
      %0 = input {name="x"} : f32[4]
      %1 = full {value=1.0} : bool[]
      return %1
    }
    region graph body {
      %0 = input {name="x"} : f32[4]
      %1 = tanh(%0) : f32[4]
      return %1
    }
  return %1
}
EOF_LOOP
"$bin/graphjit-dump" "$work/loop.gir" --stage=traced | cmp -s - "$work/loop.gir" &&
  pass "dump a loop round trip" || fail "dump a loop round trip"
"$bin/graphjit-dump" "$work/loop.gir" --stage=kernels | grep -q "^# while %1 body" &&
  pass "dump a loop's kernels" || fail "dump a loop's kernels"
expect_error "dump --profile of a loop" "compiled as pieces that are not profiled" \
  "$bin/graphjit-dump" "$work/loop.gir" --profile
"$bin/graphjit-dump" decode --dim S=64 --stage=llvm-opt | grep -qE "<(4|8) x double>" &&
  pass "dump llvm-opt is vectorized" || fail "dump llvm-opt is vectorized"

# The baseline tier compiles the same graph with its own pipeline (still vectorized), and
# the run tool's outputs agree with O2's to rounding.
GRAPHJIT_CACHE_DIR=off "$bin/graphjit-dump" decode --stats --tier=baseline |
  grep -q "^# compile (ms, tier baseline)" && pass "dump --tier=baseline --stats" ||
  fail "dump --tier=baseline --stats"
# A loop the baseline marks for vectorizing but LLVM cannot vectorize (attention over
# one position) compiles quietly: LLVM's warnings never reach the user's terminal.
err="$(GRAPHJIT_CACHE_DIR=off "$bin/graphjit-dump" decode --dim S=1 --stats --tier=baseline 2>&1 >/dev/null)"
[[ -z "$err" ]] && pass "dump --tier=baseline is quiet on stderr" ||
  fail "dump --tier=baseline is quiet on stderr (stderr: $err)"
mkdir -p "$work/o2" "$work/baseline"
if "$bin/graphjit-run" decode --output-dir "$work/o2" >/dev/null &&
  "$bin/graphjit-run" decode --tier=baseline --output-dir "$work/baseline" >/dev/null &&
  cmp -s "$work/o2/output1.npy" "$work/baseline/output1.npy" &&
  [[ -s "$work/baseline/output0.npy" ]]; then
  pass "run --tier=baseline"
else
  fail "run --tier=baseline"
fi
# The step's phases on two threads: wq's halves with wk and wv beside them in one phase;
# on one thread, nothing leaves the caller.
GRAPHJIT_CACHE_DIR=off GRAPHJIT_NUM_THREADS=2 "$bin/graphjit-dump" decode --dim S=64 --stats |
  grep -Eq '^# step on 2 threads: [0-9]+ phases leave the caller: \[k2_matmul@t0 k2_matmul\[64:\]@t1 k3_matmul@t0 k4_matmul@t1\]' &&
  GRAPHJIT_CACHE_DIR=off GRAPHJIT_NUM_THREADS=1 "$bin/graphjit-dump" decode --dim S=64 --stats |
  grep -q '^# step on 1 thread$' &&
  pass "dump --stats step phases" || fail "dump --stats step phases"
GRAPHJIT_CACHE_DIR=off "$bin/graphjit-dump" decode --stats |
  grep -Eq "^# module 1 \(k0_reduce_mean, .*\): IR instructions [0-9]+ -> [0-9]+, llvm passes" &&
  pass "dump --stats per module" || fail "dump --stats per module"
expect_error "dump unknown tier" "unknown code tier 'O3' (expected o2 or baseline)" \
  "$bin/graphjit-dump" decode --stats --tier=O3
expect_error "run tiered without a Jit" "--tier=tiered needs --policy" \
  "$bin/graphjit-run" decode --tier=tiered
# Tiered, the one call is a miss the interpreter serves: the interpreter's bits.
"$bin/graphjit-run" decode --policy=auto --tier=tiered --output-dir "$work/tiered" >/dev/null &&
  "$bin/graphjit-run" decode --mode=interp --output-dir "$work/interp_run" >/dev/null &&
  cmp -s "$work/interp_run/output0.npy" "$work/tiered/output0.npy" &&
  pass "run --tier=tiered" || fail "run --tier=tiered"
expect_error "run unknown tier" "--tier: unknown code tier 'fast'" \
  "$bin/graphjit-run" decode --tier=fast
expect_error "study unknown tier" "--tier: unknown code tier 'o3'" \
  "$bin/graphjit-study" --only=flops --tier=o3
expect_error "dump unknown stage" "unknown --stage 'bogus'" "$bin/graphjit-dump" decode --stage=bogus
expect_error "dump unknown model" "valid models:" "$bin/graphjit-dump" gpt9
expect_error "dump missing file" "cannot open" "$bin/graphjit-dump" "$work/none.gir"
printf 'graph g {\n  %%0 = input {name="x"} : f64[2, S+]\n' > "$work/bad.gir"
expect_error "dump malformed IR" "bad.gir:2:" "$bin/graphjit-dump" "$work/bad.gir"
expect_error "dump unknown flag" "Unknown command line flag 'bogus'" "$bin/graphjit-dump" decode --bogus
expect_error "dump unknown pass" "no pass 'nope'" "$bin/graphjit-dump" decode --print-after=nope
expect_error "dump --passes unknown pass" "unknown pass 'nope'; passes: unroll_scans, hoist_loop_invariants, decompose" \
  "$bin/graphjit-dump" decode --passes=cse,nope
# --passes replaces the pipeline: without decompose the composite ops stay in the graph.
"$bin/graphjit-dump" decode --passes=cse,dce | grep -q "rmsnorm(" &&
  ! "$bin/graphjit-dump" decode | grep -q "rmsnorm(" && pass "dump --passes" ||
  fail "dump --passes"
# Lowering's steps print like passes: the kernel program after build_kernels has no fused
# attention yet, after fuse_attention it has.
"$bin/graphjit-dump" decode --print-after=build_kernels,fuse_attention > "$work/steps.txt" &&
  awk '/^# kernels after build_kernels/ { s = 1 } /^# kernels after fuse_attention/ { s = 2 }
    /attention over/ { if (s == 1) bad = 1; if (s == 2) ok = 1 } END { exit !(ok && !bad) }' \
    "$work/steps.txt" && pass "dump --print-after a lowering step" ||
  fail "dump --print-after a lowering step"
"$bin/graphjit-dump" decode --print-after-all > "$work/all.txt" &&
  grep -q "^# IR after dce" "$work/all.txt" &&
  grep -q "^# kernels after simplify_indices" "$work/all.txt" &&
  pass "dump --print-after-all passes and lowering steps" ||
  fail "dump --print-after-all passes and lowering steps"
expect_error "dump unknown name lists the lowering steps" "lowering steps: build_kernels" \
  "$bin/graphjit-dump" decode --print-after=nope
expect_error "dump print after a step turned off" "no lowering step 'fuse_attention'" \
  "$bin/graphjit-dump" decode --fuse_attention=false --print-after=fuse_attention

# The per-kernel profiler: graphjit-dump --profile and GRAPHJIT_PROFILE=1 name the kernels.
# It says how many threads the kernels ran on.
GRAPHJIT_NUM_THREADS=3 "$bin/graphjit-dump" decode --dim S=16 --profile --profile-calls=5 \
  > "$work/profile.txt" &&
  grep -q "^# profile of decode: 16 kernels, 5 calls" "$work/profile.txt" &&
  grep -Eq "^# target: [a-z0-9_-]+, LLVM 19\.[0-9.]+, kernels on 3 threads$" "$work/profile.txt" &&
  grep -q "^  k2_matmul " "$work/profile.txt" && pass "dump --profile" || fail "dump --profile"
cat > "$work/matvec.gir" <<'GIR'
graph matvec {
  %0 = input {name="x"} : f64[1, N]
  %1 = input {name="w"} : f64[N, 40]
  %2 = matmul(%0, %1) : f64[1, 40]
  return %2
}
GIR
"$bin/graphjit-dump" "$work/matvec.gir" --bind N=9 --profile --profile-calls=3 |
  grep -q "matmul" && pass "dump --profile of an IR file" || fail "dump --profile of an IR file"
expect_error "dump --profile unbound symbol" "input 'x' has shape [1, N]" \
  "$bin/graphjit-dump" "$work/matvec.gir" --profile
expect_error "dump --profile zero calls" "calls must be >= 1" \
  "$bin/graphjit-dump" decode --dim S=4 --profile --profile-calls=0
# --compile-steps: a row for the empty module and for each compiled module, and the
# passes of the tier asked for (the baseline's -O0 machine code allocates registers with
# the greedy allocator, not the fast one: AllocateRegistersAtO0).
GRAPHJIT_CACHE_DIR=off "$bin/graphjit-dump" "$work/matvec.gir" --compile-steps \
  --compile-steps-runs=1 --compile-steps-top=1000 --tier=baseline > "$work/compile_steps.txt" &&
  grep -q "^# empty module " "$work/compile_steps.txt" &&
  grep -q "^# 1: k0_matmul " "$work/compile_steps.txt" &&
  grep -q "greedy" "$work/compile_steps.txt" &&
  ! grep -q "regallocfast" "$work/compile_steps.txt" && pass "dump --compile-steps" ||
  fail "dump --compile-steps"
expect_error "dump --compile-steps zero runs" "runs must be >= 1" \
  "$bin/graphjit-dump" "$work/matvec.gir" --compile-steps --compile-steps-runs=0
GRAPHJIT_PROFILE=1 "$bin/graphjit-run" decode --dim S=16 --bind P=15 --mode=jit \
  --output-dir "$work/profiled" 2>&1 >/dev/null | grep -q "^# profile of decode" &&
  pass "GRAPHJIT_PROFILE=1 prints the table" || fail "GRAPHJIT_PROFILE=1 prints the table"

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

# A policy runs through the compile cache (padded to the bucket) and matches plain jit.
"$bin/graphjit-run" decode --dim S=16 --bind P=15 --mode=jit --policy=pow2 --output-dir "$work/pow2" \
  >/dev/null && [[ -s "$work/pow2/output0.npy" ]] && pass "run --policy" || fail "run --policy"
expect_error "run unknown policy" "unknown shape policy 'best'" "$bin/graphjit-run" decode --policy=best
"$bin/graphjit-dump" decode --policy=pow2 --dim S=100 --stage=traced | grep -q 'kmask.*f64\[1, 1, 128\]' &&
  pass "dump --policy" || fail "dump --policy"
"$bin/graphjit-dump" tinygpt:L=2,d=64,T=32,V=21,B=2 --stats | grep -q "training FLOPs 41410560" &&
  pass "dump --stats training FLOPs" || fail "dump --stats training FLOPs"

# --weights DIR|FILE.safetensors (graphjit-run's --param-dir is its old name). decode:seed=3's
# weights, saved as a .npy directory and as a .safetensors file, are what every mode and
# policy computes decode with: all agree with decode:seed=3 itself (eager and interp
# bitwise, compiled code within rounding) and differ from decode's own seeded weights.
# npy_check OP TOL REF DIR...: every outputI.npy of each DIR against REF's, max |diff| OP
# TOL (le: the same within TOL; gt: different by more than TOL). Parses .npy without numpy.
npy_check() {
  python3 - "$@" <<'PY'
import ast, glob, os, struct, sys

def load(path):
    b = open(path, "rb").read()
    assert b[:6] == b"\x93NUMPY", path
    n_len, fmt_len = (2, "<H") if b[6] == 1 else (4, "<I")
    (hlen,) = struct.unpack(fmt_len, b[8:8 + n_len])
    start = 8 + n_len + hlen
    h = ast.literal_eval(b[8 + n_len:start].decode("latin1"))
    assert not h["fortran_order"], path
    code = {"<f8": "d", "<f4": "f", "<i8": "q", "|b1": "?"}[h["descr"]]
    n = 1
    for d in h["shape"]:
        n *= d
    size = n * struct.calcsize(code)
    return tuple(h["shape"]), struct.unpack("<%d%s" % (n, code), b[start:start + size])

op, tol, ref, dirs = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ref, "output*.npy")))
assert names, ref
ok = True
for d in dirs:
    diff = 0.0
    for name in names:
        (sa, a), (sb, b) = load(os.path.join(ref, name)), load(os.path.join(d, name))
        assert sa == sb, (d, name, sa, sb)
        diff = max([diff] + [abs(x - y) for x, y in zip(a, b)])
    if not (diff <= tol if op == "le" else diff > tol):
        print("%s vs %s: max |diff| %g, want %s %g" % (d, ref, diff, op, tol))
        ok = False
sys.exit(0 if ok else 1)
PY
}
run_dims=(--dim S=16 --bind P=15)
"$bin/graphjit-run" decode:seed=3 --save-weights "$work/w3" >/dev/null &&
  "$bin/graphjit-run" decode:seed=3 --save-weights "$work/w3.safetensors" >/dev/null &&
  [[ -s "$work/w3/wq.npy" && -s "$work/w3.safetensors" ]] && pass "run --save-weights" ||
  fail "run --save-weights"
"$bin/graphjit-run" decode:seed=3 "${run_dims[@]}" --mode=eager --output-dir "$work/seed3" >/dev/null &&
  npy_check gt 1e-6 "$work/eager" "$work/seed3" && pass "seed=3 differs from the default weights" ||
  fail "seed=3 differs from the default weights"
for w in w3 w3.safetensors; do
  ok=1 exact_dirs=() close_dirs=()
  for m in eager interp jit exact pow2 symbolic auto; do
    case $m in
      eager | interp | jit) flags=(--mode=$m) ;;
      *) flags=(--mode=jit --policy=$m) ;;
    esac
    out="$work/run.$w.$m"
    "$bin/graphjit-run" decode "${run_dims[@]}" "${flags[@]}" --weights "$work/$w" --output-dir "$out" \
      >/dev/null || { ok=0; echo "graphjit-run decode --weights $w ${flags[*]} failed"; }
    if [[ $m == eager || $m == interp ]]; then exact_dirs+=("$out"); else close_dirs+=("$out"); fi
  done
  [[ $ok -eq 1 ]] && npy_check le 0 "$work/seed3" "${exact_dirs[@]}" &&
    npy_check le 1e-9 "$work/seed3" "${close_dirs[@]}" &&
    npy_check gt 1e-6 "$work/eager" "${exact_dirs[@]}" "${close_dirs[@]}" &&
    pass "run --weights $w: every mode and policy uses them" ||
    fail "run --weights $w: every mode and policy uses them"
done
# The old bug: --param-dir was ignored by --mode=eager and by --policy.
"$bin/graphjit-run" decode "${run_dims[@]}" --mode=eager --param-dir "$work/w3" \
  --output-dir "$work/pd.eager" >/dev/null &&
  "$bin/graphjit-run" decode "${run_dims[@]}" --policy=auto --param-dir "$work/w3" \
    --output-dir "$work/pd.auto" >/dev/null &&
  npy_check le 0 "$work/seed3" "$work/pd.eager" && npy_check le 1e-9 "$work/seed3" "$work/pd.auto" &&
  pass "run --param-dir is --weights" || fail "run --param-dir is --weights"
# An IR file's params come from --weights too, checked against its param nodes. Inputs:
# earlier outputs of the right types, and rotary cos/sin written here.
python3 - "$work" <<'PY'
import math, os, struct, sys
for name, f in (("cos", math.cos), ("sin", math.sin)):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 16), }"
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    data = struct.pack("<16d", *(f(0.3 * i) for i in range(16)))
    with open(os.path.join(sys.argv[1], name + ".npy"), "wb") as out:
        out.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data)
PY
gir_inputs=(--input "x=@$work/eager/output0.npy" --input "k_cache=@$work/eager/output1.npy"
  --input "v_cache=@$work/eager/output2.npy" --input "cos=@$work/cos.npy"
  --input "sin=@$work/sin.npy" --bind P=15)
"$bin/graphjit-run" decode "${gir_inputs[@]}" --mode=eager --weights "$work/w3.safetensors" \
  --output-dir "$work/gir.ref" >/dev/null &&
  "$bin/graphjit-run" "$work/traced.gir" "${gir_inputs[@]}" --mode=interp --weights "$work/w3" \
    --output-dir "$work/gir.interp" >/dev/null &&
  "$bin/graphjit-run" "$work/traced.gir" "${gir_inputs[@]}" --mode=jit \
    --param-dir "$work/w3.safetensors" --output-dir "$work/gir.jit" >/dev/null &&
  npy_check le 0 "$work/gir.ref" "$work/gir.interp" &&
  npy_check le 1e-9 "$work/gir.ref" "$work/gir.jit" &&
  "$bin/graphjit-run" decode "${gir_inputs[@]}" --mode=eager --output-dir "$work/gir.default" \
    >/dev/null && npy_check gt 1e-6 "$work/gir.default" "$work/gir.ref" &&
  pass "run IR file --weights" || fail "run IR file --weights"
# Bad weights: one line naming the file and the tensor, exit non-zero, in every tool.
mkdir -p "$work/wmiss" "$work/wshape" "$work/wextra"
cp "$work/w3"/*.npy "$work/wmiss/" && rm "$work/wmiss/wq.npy"
cp "$work/w3"/*.npy "$work/wshape/" && cp "$work/w3/wk.npy" "$work/wshape/wq.npy"
cp "$work/w3"/*.npy "$work/wextra/" && cp "$work/w3/wk.npy" "$work/wextra/extra.npy"
"$bin/graphjit-run" decode:f=172 --save-weights "$work/wf172.safetensors" >/dev/null
"$bin/graphjit-run" decode:dtype=f32 --save-weights "$work/wf32.safetensors" >/dev/null
head -c 1000 "$work/w3.safetensors" > "$work/trunc.safetensors"
printf 'not a safetensors file' > "$work/junk.safetensors"
for m in eager interp jit; do
  expect_error "run --weights missing tensor ($m)" \
    "wmiss: weights: missing 'wq' (expected f64[128, 128])" \
    "$bin/graphjit-run" decode --mode=$m --weights "$work/wmiss"
done
expect_error "run --policy --weights missing tensor" "wmiss: weights: missing 'wq'" \
  "$bin/graphjit-run" decode --policy=pow2 --weights "$work/wmiss"
expect_error "run --weights wrong shape" \
  "wshape: weights: 'wq' has f64[128, 32], expected f64[128, 128]" \
  "$bin/graphjit-run" decode --mode=eager --weights "$work/wshape"
expect_error "run --weights wrong shape (safetensors)" \
  "wf172.safetensors: weights: 'w_down' has f64[172, 128], expected f64[344, 128]" \
  "$bin/graphjit-run" decode --mode=eager --weights "$work/wf172.safetensors"
expect_error "run --weights wrong dtype" \
  "wf32.safetensors: weights: 'attn_norm' has f32[128], expected f64[128]" \
  "$bin/graphjit-run" decode --mode=interp --weights "$work/wf32.safetensors"
expect_error "run --weights extra tensor" "wextra: weights: unexpected tensor 'extra'" \
  "$bin/graphjit-run" decode --weights "$work/wextra"
expect_error "run --weights truncated safetensors" "trunc.safetensors: tensor 'attn_norm'" \
  "$bin/graphjit-run" decode --mode=eager --weights "$work/trunc.safetensors"
expect_error "run --weights junk safetensors" "junk.safetensors: " \
  "$bin/graphjit-run" decode --policy=auto --weights "$work/junk.safetensors"
expect_error "run --weights not found" "none.safetensors: not found" \
  "$bin/graphjit-run" decode --weights "$work/none.safetensors"
expect_error "run --weights and --param-dir" "give one of them, not both" \
  "$bin/graphjit-run" decode --weights "$work/w3" --param-dir "$work/w3"
expect_error "run IR file missing params" "wmiss: weights: missing 'wq'" \
  "$bin/graphjit-run" "$work/traced.gir" --param-dir "$work/wmiss"
expect_error "run --save-weights of an IR file" "no weights to save" \
  "$bin/graphjit-run" "$work/traced.gir" --save-weights "$work/none"
# graphjit-dump compiles with them (an IR file's norm weights fold only given values);
# graphjit-study checks them before any study runs, and runs on them.
"$bin/graphjit-dump" "$work/traced.gir" --weights "$work/w3.safetensors" --stats |
  grep -Eq '^# dce +71 ' && ! "$bin/graphjit-dump" "$work/traced.gir" --stats | grep -Eq '^# dce +71 ' &&
  "$bin/graphjit-dump" decode --weights "$work/w3" --stage=kernels >/dev/null &&
  pass "dump --weights" || fail "dump --weights"
expect_error "dump --weights wrong shape" "wshape: weights: 'wq' has f64[128, 32]" \
  "$bin/graphjit-dump" decode --weights "$work/wshape"
expect_error "dump IR file --weights missing tensor" "wmiss: weights: missing 'wq'" \
  "$bin/graphjit-dump" "$work/traced.gir" --weights "$work/wmiss"
"$bin/graphjit-study" --only=overhead --weights "$work/w3.safetensors" >"$work/study_w.txt" 2>&1 &&
  grep -q "Framework overhead" "$work/study_w.txt" && pass "study --weights" ||
  fail "study --weights ($(tail -1 "$work/study_w.txt"))"
expect_error "study --weights missing tensor" "wmiss: weights: missing 'wq'" \
  "$bin/graphjit-study" --only=breaks --weights "$work/wmiss"
expect_error "study --weights wrong dtype" "weights: 'attn_norm' has f64[128], expected f32[128]" \
  "$bin/graphjit-study" --only=breaks --dtype=f32 --weights "$work/w3"

# GRAPHJIT_NUM_THREADS: the same bits on 1 and 3 threads (3 on a 2-core machine: uneven
# splits); a bad value is reported once, naming it and the default used, and the run goes on.
for t in 1 3; do
  GRAPHJIT_NUM_THREADS=$t "$bin/graphjit-run" decode --dim S=512 --mode=jit \
    --output_dir "$work/threads$t" >/dev/null 2>&1
done
cmp -s "$work/threads1/output0.npy" "$work/threads3/output0.npy" &&
  cmp -s "$work/threads1/output1.npy" "$work/threads3/output1.npy" &&
  pass "GRAPHJIT_NUM_THREADS=1 and =3 give the same bits" ||
  fail "GRAPHJIT_NUM_THREADS=1 and =3 give the same bits"
for bad in 0 -2 5000 two; do
  err="$(GRAPHJIT_NUM_THREADS=$bad "$bin/graphjit-run" decode --dim S=8 2>&1 >/dev/null)"
  rc=$?
  if [[ $rc -eq 0 && $(grep -c "GRAPHJIT_NUM_THREADS='$bad' is not an integer in \[1, 1024\]; using [1-9]" <<<"$err") -eq 1 ]]; then
    pass "GRAPHJIT_NUM_THREADS=$bad warns once"
  else
    fail "GRAPHJIT_NUM_THREADS=$bad warns once (rc=$rc, stderr: $err)"
  fi
done

# GRAPHJIT_DUMP_DIR: every compile writes its stages.
GRAPHJIT_DUMP_DIR="$work/dump" "$bin/graphjit-run" decode --dim S=8 >/dev/null &&
  grep -q "kv_write" "$work/dump/0.decode.1-optimized.txt" &&
  grep -q "define" "$work/dump/0.decode.4-llvm-opt.txt" && pass "GRAPHJIT_DUMP_DIR" ||
  fail "GRAPHJIT_DUMP_DIR"
"$bin/graphjit-dump" decode --stats | grep -q "FLOPs (matmul, 2 per multiply-add): 512\*S+346112" &&
  pass "dump --stats FLOPs" || fail "dump --stats FLOPs"

# graphjit-study on a short run: every JSON key, and compile counts the key functions
# predict for S = 101..140 (pow2 and mult128: buckets 128 and 256).
# The OCR section joins only where its model is fetched (two lines keep it short here).
ocr_model="${GRAPHJIT_FETCH_DIR:-$(dirname "$0")/../../third_party/fetched}/ocr-models/ch_PP-OCRv4_rec_infer.onnx"
have_ocr=0
[[ -s "$ocr_model" ]] && have_ocr=1
"$bin/graphjit-study" --steps 40 --ocr_lines 2 --json "$work/study.json" >"$work/study.txt" 2>&1 &&
  python3 - "$work/study.json" "$have_ocr" <<'PY' && pass "study --json" || fail "study --json ($(tail -3 "$work/study.txt"))"
import json, sys
d = json.load(open(sys.argv[1]))
assert ("ocr" in d) == (sys.argv[2] == "1"), sys.argv[2]
assert "ocr" not in d or d["ocr"].get("lines") == 2 or "skipped" in d["ocr"], d["ocr"]
for key in ("policies", "symbolic", "graph_breaks", "overhead", "flops", "powerlaws", "machine"):
    assert key in d, key
pl = d["powerlaws"]
for key in ("loss_factors", "chinchilla", "mean_estimation", "nearest_neighbor", "zipf_capacity",
            "zipf_data", "compiles", "seconds"):
    assert key in pl, key
assert abs(pl["mean_estimation"]["slope"] + 1) < 0.05, pl["mean_estimation"]
assert [c["d"] for c in pl["nearest_neighbor"]] == [1, 2, 4, 8]
assert pl["chinchilla"]["points"][-1]["loss_slope"] is None  # no next N
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
# The policy study compiles cold by default, even with a warm disk cache: its compile
# counts and times are real compiles. --warm_cache reuses the cache and says what it loaded.
study_cache="$work/study_cache"
for run in 1 2; do
  GRAPHJIT_CACHE_DIR="$study_cache" "$bin/graphjit-study" --only=policies --steps 6 \
    --json "$work/cold$run.json" >"$work/cold$run.txt" 2>&1 || fail "study cold run $run"
  GRAPHJIT_CACHE_DIR="$study_cache" "$bin/graphjit-study" --only=policies --steps 6 --warm_cache \
    --json "$work/warm$run.json" >"$work/warm$run.txt" 2>&1 || fail "study warm run $run"
done
python3 - "$work/cold2.json" "$work/warm2.json" <<'PY' && pass "study cold by default, --warm_cache" ||
import json, sys
cold, warm = (json.load(open(f)) for f in sys.argv[1:3])
assert cold["code_cache"] == "cold" and warm["code_cache"] == "warm"
for p in cold["policies"]:
    assert p["kernels_loaded"] == 0 and p["kernels_compiled"] > 0, p
assert sum(p["kernels_loaded"] for p in warm["policies"]) > 0, warm["policies"]
assert sum(p["kernels_compiled"] for p in warm["policies"]) == 0, warm["policies"]
PY
  fail "study cold by default, --warm_cache ($(tail -3 "$work/warm2.txt"))"
grep -q "Code: cold.*; code tier o2" "$work/cold2.txt" && grep -q "loaded from the disk or remote cache" \
  "$work/warm2.txt" && pass "study says cold or warm" || fail "study says cold or warm"
# The plots: --plot DIR writes the JSON there and draws the figures from it (bootstrap
# installs Debian's python3-matplotlib; without it this fails saying so).
"$bin/graphjit-study" --only=policies,powerlaws --steps=6 --prompt=4 --plot "$work/plots" \
  >"$work/plot.txt" 2>&1
for png in policies powerlaws; do
  # A PNG file starts with \x89PNG.
  [[ -s "$work/plots/$png.png" && $(head -c 4 "$work/plots/$png.png" | tail -c 3) == PNG ]] &&
    pass "study --plot draws $png.png" ||
    fail "study --plot draws $png.png ($(tail -3 "$work/plot.txt"))"
done
python3 -c "import json,sys; json.load(open(sys.argv[1]))['policies']" "$work/plots/study.json" &&
  pass "study --plot writes study.json" || fail "study --plot writes study.json"
expect_error "study --plot into a file" "--plot: cannot write" "$bin/graphjit-study" \
  --only=powerlaws --plot "$work/plots/study.json"
expect_error "study --plot without a plotted section" "add one of them to --only" \
  "$bin/graphjit-study" --only=flops --plot "$work/plots"
expect_error "study unknown section" "unknown section 'nope'" "$bin/graphjit-study" --only=nope
expect_error "study bad dtype" "--dtype: expected f32 or f64" "$bin/graphjit-study" --dtype=f16 --only=breaks
expect_error "study non-decode model" "the studies run a decode layer" "$bin/graphjit-study" --model=linear --only=breaks

# graphjit-run on an ONNX model (one of ONNX's node tests) with TensorProto inputs:
# compiled and interpreted agree, and bad calls are errors naming what is wrong.
onnx_case=/usr/share/libonnx-testdata/data/node/test_relu
if [[ -d $onnx_case ]]; then
  onnx_in="x=@$onnx_case/test_data_set_0/input_0.pb"
  "$bin/graphjit-run" "$onnx_case/model.onnx" --input "$onnx_in" --output-dir "$work/onnx_jit" \
    >"$work/onnx_jit.txt" 2>&1 &&
    "$bin/graphjit-run" "$onnx_case/model.onnx" --input "$onnx_in" --mode=interp \
      --output-dir "$work/onnx_interp" >/dev/null 2>&1 &&
    grep -q "f32\[3, 4, 5\]" "$work/onnx_jit.txt" &&
    cmp -s "$work/onnx_jit/output0.npy" "$work/onnx_interp/output0.npy" &&
    pass "run model.onnx (jit = interp)" || fail "run model.onnx ($(cat "$work/onnx_jit.txt"))"
  "$bin/graphjit-run" "$onnx_case/model.onnx" --input "$onnx_in" --policy=symbolic \
    --output-dir "$work/onnx_sym" >/dev/null 2>&1 &&
    cmp -s "$work/onnx_jit/output0.npy" "$work/onnx_sym/output0.npy" &&
    pass "run model.onnx --policy=symbolic (under Jit)" || fail "run model.onnx --policy=symbolic"
  # INT32 inputs and output: i32 at the graph's edges, the same bits compiled and interpreted.
  max32=/usr/share/libonnx-testdata/data/node/test_max_int32
  max32_in=(--input "data_0=@$max32/test_data_set_0/input_0.pb"
    --input "data_1=@$max32/test_data_set_0/input_1.pb")
  "$bin/graphjit-run" "$max32/model.onnx" "${max32_in[@]}" --output-dir "$work/max32_jit" \
    >"$work/max32.txt" 2>&1 &&
    "$bin/graphjit-run" "$max32/model.onnx" "${max32_in[@]}" --mode=interp \
      --output-dir "$work/max32_interp" >/dev/null 2>&1 &&
    grep -q "i32\[3\]" "$work/max32.txt" &&
    cmp -s "$work/max32_jit/output0.npy" "$work/max32_interp/output0.npy" &&
    pass "run model.onnx with INT32 inputs (jit = interp)" ||
    fail "run model.onnx with INT32 inputs ($(cat "$work/max32.txt"))"
  expect_error "run onnx unknown input" "has no input 'y' (inputs: x)" \
    "$bin/graphjit-run" "$onnx_case/model.onnx" --input "y=@$onnx_case/test_data_set_0/input_0.pb"
  expect_error "run onnx missing input" "missing input 'x'" "$bin/graphjit-run" "$onnx_case/model.onnx"
  expect_error "run onnx eager" "--mode=eager needs a model spec, not an ONNX file" \
    "$bin/graphjit-run" "$onnx_case/model.onnx" --mode=eager
  "$bin/graphjit-dump" "$onnx_case/model.onnx" --stage=traced 2>&1 | grep -q "maximum(%0" &&
    "$bin/graphjit-dump" "$onnx_case/model.onnx" --stats 2>&1 | grep -q "^# kernels:" &&
    pass "dump model.onnx" || fail "dump model.onnx"
  expect_error "dump onnx --weights" "an ONNX model carries its own weights" \
    "$bin/graphjit-dump" "$onnx_case/model.onnx" --weights "$work/w3"
  expect_error "dump onnx --dim of no dynamic dim" "--dim W: the model's dynamic dims are none" \
    "$bin/graphjit-dump" "$onnx_case/model.onnx" --dim W=3
  # test_tile's repeats are an input whose values the importer needs: named until given.
  tile=/usr/share/libonnx-testdata/data/node/test_tile
  expect_error "dump onnx needing values" "(give its values with --input y=@FILE.npy)" \
    "$bin/graphjit-dump" "$tile/model.onnx"
  "$bin/graphjit-dump" "$tile/model.onnx" --input "y=@$tile/test_data_set_0/input_1.pb" \
    --stage=traced 2>&1 | grep -q "expand(" &&
    pass "dump model.onnx --input (specialized on y, the repeats)" || fail "dump model.onnx --input"
  expect_error "dump --input of a model spec" "--input applies to ONNX files, not decode" \
    "$bin/graphjit-dump" decode --input "y=@$tile/test_data_set_0/input_1.pb"
  printf 'not a model' >"$work/bad.onnx"
  expect_error "run onnx corrupt file" "$work/bad.onnx" "$bin/graphjit-run" "$work/bad.onnx"
else
  echo "skip: graphjit-run on ONNX ($onnx_case missing: apt-get install libonnx-testdata)"
fi

echo "$passes passed, $failures failed"
[[ $failures -eq 0 ]]
