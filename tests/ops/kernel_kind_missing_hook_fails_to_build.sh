#!/usr/bin/env bash
# A kernel kind added to compiler/lower/kernel_kinds.def without a hook every kind defines
# must fail the build, where the hook is missing. For each kind of omission this copies the
# list into a scratch dir, appends one row and compiles the file that must refuse it
# (syntax only, the project's warning flags), expecting the error that names the hook; the
# codegen hook is declared from the list, so its absence shows at link time: the object
# needs a symbol nothing defines. First it checks the unchanged list compiles there (so
# the errors are the row's doing).
#   kernel_kind_missing_hook_fails_to_build.sh CXX REPO_ROOT LLVM_INCLUDE_DIR
set -uo pipefail
CXX="$1"
ROOT="$2"
LLVM_INCLUDE="$3"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failures=0
flags=(-std=c++20 -Wall -Wextra -Werror=switch -I"$scratch" -I"$ROOT" -isystem "$LLVM_INCLUDE")

reset_list() {  # ROW: the unchanged list, plus ROW if given
  rm -rf "$scratch/compiler" && mkdir -p "$scratch/compiler/lower"
  cp "$ROOT/compiler/lower/kernel_kinds.def" "$scratch/compiler/lower/"
  if [[ -n "${1:-}" ]]; then echo "$1" >>"$scratch/compiler/lower/kernel_kinds.def"; fi
}

compile() {  # FILE: compiles FILE against the scratch list, prints the errors
  "$CXX" "${flags[@]}" -fsyntax-only "$ROOT/$1" 2>&1 | grep -E "error" || true
}

# ROW FILE EXPECTED-ERROR-PATTERN WHAT
expect_refused() {
  reset_list "$1"
  local errors
  errors="$(compile "$2")"
  if grep -qE "$3" <<<"$errors"; then
    echo "ok: $4 is refused by $2"
  else
    echo "FAIL: $4 compiled in $2 (wanted an error matching '$3'); errors were:"
    echo "$errors" | head -5
    failures=$((failures + 1))
  fi
}

files=(compiler/lower/kernel_ir.cc compiler/lower/program_eval.cc
  compiler/lower/simplify_index.cc compiler/codegen/codegen.cc)
for f in "${files[@]}"; do
  reset_list
  if [[ -n "$(compile "$f")" ]]; then
    echo "FAIL: $f does not compile with the unchanged kernel kinds"
    failures=$((failures + 1))
  fi
done

row='GJ_KERNEL_KIND(BogusK, Nest, None, Loops)'
expect_refused "$row" compiler/lower/kernel_ir.cc "PrintBogusK" "a kind without its print hook"
expect_refused "$row" compiler/lower/program_eval.cc "RunBogusK" \
  "a kind without its evaluation"
expect_refused 'GJ_KERNEL_KIND(BogusK, Nest, NoSuchVar, Loops)' \
  compiler/lower/simplify_index.cc "NoSuchVar" "an index hook naming no variable"
expect_refused 'GJ_KERNEL_KIND(BogusK, Nest, Loops)' compiler/lower/simplify_index.cc \
  "GJ_KERNEL_KIND.*requires 4 arguments|too few arguments provided to function-like macro" \
  "a kind without its index hook"

# The emitter: codegen.cc compiles (the declaration comes from the list), but its dispatch
# table needs KernelEmitter::EmitBogusK, which no file defines, so no program links.
# (nm's list is read whole: `nm | grep -q` under pipefail fails whenever grep quits first
# and nm dies of SIGPIPE.)
reset_list "$row"
undefined=""
if "$CXX" "${flags[@]}" -O0 -w -c "$ROOT/compiler/codegen/codegen.cc" -o "$scratch/codegen.o"; then
  undefined="$(nm -C --undefined-only "$scratch/codegen.o")"
fi
if grep -q 'KernelEmitter::EmitBogusK()' <<<"$undefined" &&
  ! grep -rq 'KernelEmitter::EmitBogusK' "$ROOT/compiler"; then
  echo "ok: a kind without its emitter leaves codegen.cc needing an undefined symbol"
else
  echo "FAIL: a kind without its emitter did not leave KernelEmitter::EmitBogusK undefined"
  failures=$((failures + 1))
fi

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every missing kernel kind hook fails the build"
