#!/usr/bin/env bash
# The on-disk code cache across processes: a second process compiles no kernel and gets
# the same outputs; a corrupt, truncated or foreign file is ignored, logged and replaced;
# two processes writing one cache at once both succeed and leave valid files.
set -euo pipefail
bin="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export GRAPHJIT_CACHE_DIR="$work/cache"
pass=0
fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { pass=$((pass + 1)); }
spec="decode:d=32,H=4,G=2,dh=8,f=64"

# `# kernels: D distinct of N; compiled C, reused R (live), loaded L (disk/remote); M modules ...`
kernels() { "$bin/graphjit-dump" "$spec" --dim S=7 --bind P=6 --stats "$@" | grep '^# kernels:'; }

cold="$(kernels)"
distinct="$(echo "$cold" | sed -E 's/^# kernels: ([0-9]+) distinct.*/\1/')"
compiled="$(echo "$cold" | sed -E 's/.*compiled ([0-9]+),.*/\1/')"
[[ "$compiled" == "$distinct" ]] || fail "cold run compiled $compiled of $distinct: $cold"; ok
# One file per LLVM module the kernels were compiled in.
modules="$(echo "$cold" | sed -E 's/.*; ([0-9]+) modules on.*/\1/')"
files="$(ls "$GRAPHJIT_CACHE_DIR"/*.gjcode | wc -l)"
[[ "$files" == "$modules" && "$modules" -ge 1 ]] || fail "$files files for $modules modules: $cold"; ok

warm="$(kernels)"
[[ "$(echo "$warm" | sed -E 's/.*compiled ([0-9]+),.*/\1/')" == 0 ]] || fail "warm run compiled: $warm"; ok
[[ "$(echo "$warm" | sed -E 's/.*loaded ([0-9]+) .*/\1/')" == "$distinct" ]] || fail "warm run: $warm"; ok

# Same outputs cold and warm (jit, symbolic S), and against the interpreter.
run() { "$bin/graphjit-run" "$spec" --dim S=7 --bind P=6 --mode="$1" --output-dir "$2" > /dev/null; }
run jit "$work/warm"
rm -rf "$GRAPHJIT_CACHE_DIR"
run jit "$work/cold"
run interp "$work/interp"
cmp -s "$work/warm/output0.npy" "$work/cold/output0.npy" || fail "warm and cold outputs differ"; ok
/usr/bin/env python3 - "$work/cold/output0.npy" "$work/interp/output0.npy" <<'PY' || fail "jit != interp"
import struct, sys
def load(p):
    b = open(p, "rb").read()
    n = struct.unpack("<H", b[8:10])[0]
    data = b[10 + n:]
    return struct.unpack("<%dd" % (len(data) // 8), data)
a, b = load(sys.argv[1]), load(sys.argv[2])
assert len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b)) < 1e-12
PY
ok

# Damage every file three ways; each is ignored (one log line), recompiled and replaced.
for damage in flip truncate foreign; do
  for f in "$GRAPHJIT_CACHE_DIR"/*.gjcode; do
    case "$damage" in
      flip) printf '\xff' | dd of="$f" bs=1 seek=100 conv=notrunc status=none ;;
      truncate) truncate -s 50 "$f" ;;
      foreign) sed -i 's/llvm=/llvm=0/' "$f" ;;
    esac
  done
  log="$(GRAPHJIT_LOG=cache "$bin/graphjit-dump" "$spec" --dim S=7 --bind P=6 --stats 2>&1 >/dev/null)"
  n="$(echo "$log" | grep -c 'ignored, recompiling' || true)"
  [[ "$n" -ge 1 ]] || fail "$damage: no file was reported as ignored: $log"; ok
  again="$(kernels)"
  [[ "$(echo "$again" | sed -E 's/.*compiled ([0-9]+),.*/\1/')" == 0 ]] ||
    fail "$damage: files were not replaced: $again"; ok
  # graphjit-run's files (its graph differs) were damaged too: still the same answer.
  run jit "$work/$damage"
  cmp -s "$work/cold/output0.npy" "$work/$damage/output0.npy" || fail "$damage: outputs differ"; ok
done

# Two processes filling an empty cache at once: both right, and the files all valid.
rm -rf "$GRAPHJIT_CACHE_DIR"
run jit "$work/p1" & run jit "$work/p2" & wait
cmp -s "$work/p1/output0.npy" "$work/cold/output0.npy" || fail "writer 1 output"; ok
cmp -s "$work/p2/output0.npy" "$work/cold/output0.npy" || fail "writer 2 output"; ok
log="$(GRAPHJIT_LOG=cache "$bin/graphjit-run" "$spec" --dim S=7 --bind P=6 --mode=jit \
  --output-dir "$work/p3" 2>&1 >/dev/null)"
if echo "$log" | grep -q 'ignored'; then fail "concurrent writers left a bad file: $log"; fi; ok

# Unusable directory: one warning, then memory only; the run still succeeds.
touch "$work/not-a-dir"
err="$(GRAPHJIT_CACHE_DIR="$work/not-a-dir/sub" "$bin/graphjit-run" "$spec" --dim S=7 --bind P=6 \
  --mode=jit --output-dir "$work/nodir" 2>&1 >/dev/null)"
echo "$err" | grep -q 'compiled code stays in memory' || fail "no warning: $err"; ok
cmp -s "$work/nodir/output0.npy" "$work/cold/output0.npy" || fail "memory-only output"; ok

echo "disk cache: $pass checks passed"
