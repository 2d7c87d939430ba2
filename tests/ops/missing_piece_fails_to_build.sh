#!/usr/bin/env bash
# An op added to ir/ops.def without a piece the compiler needs must fail the build, where
# the piece is missing. For each kind of omission this copies ir/ into a scratch dir,
# appends one row to ops.def and compiles (syntax only, the project's warning flags) the
# file that must refuse it, expecting the error that names it; then checks the unchanged
# list compiles there (so the errors are the row's doing).
#   missing_piece_fails_to_build.sh CXX REPO_ROOT
set -uo pipefail
CXX="$1"
ROOT="$2"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
failures=0

compile() {  # FILE: compiles FILE against $scratch/ir, prints the errors
  "$CXX" -std=c++20 -fsyntax-only -Wall -Wextra -Werror=switch -I"$scratch" -I"$ROOT" \
    "$ROOT/$1" 2>&1 | grep -E "error" || true
}

# ROW FILE EXPECTED-ERROR-PATTERN WHAT
expect_refused() {
  rm -rf "$scratch/ir" && mkdir -p "$scratch/ir"
  cp "$ROOT"/ir/*.h "$ROOT/ir/ops.def" "$scratch/ir/"
  echo "$1" >>"$scratch/ir/ops.def"
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

for f in compiler/lower/kernel_ir.cc compiler/lower/build_kernels.cc compiler/lower/inline_node.cc \
  compiler/passes/decompose.cc compiler/autodiff/grad_rules.cc; do
  rm -rf "$scratch/ir" && mkdir -p "$scratch/ir" && cp "$ROOT"/ir/*.h "$ROOT/ir/ops.def" "$scratch/ir/"
  if [[ -n "$(compile "$f")" ]]; then
    echo "FAIL: $f does not compile with the unchanged op list"
    failures=$((failures + 1))
  fi
done

expect_refused 'GJ_OP(BogusA, "bogus_a", 1, 1, "", FloatUnaryRule, Pointwise, None, Free, None)' \
  compiler/lower/kernel_ir.cc "bogus_a is Pointwise without a Scalar op" \
  "a Pointwise op without a scalar op"
expect_refused 'GJ_OP(BogusB, "bogus_b", 1, 1, "", FloatUnaryRule, Source, Exp, Free, None)' \
  compiler/lower/kernel_ir.cc "bogus_b is Pointwise without a Scalar op" \
  "a scalar op on an op that is not Pointwise"
expect_refused 'GJ_OP(BogusC, "bogus_c", 1, 1, "", FloatUnaryRule, Pointwise, NoSuchOp, Free, None)' \
  compiler/lower/kernel_ir.cc "kScalarOf_NoSuchOp" "a Scalar column naming no ScalarOp"
expect_refused 'GJ_OP(BogusD, "bogus_d", 1, 1, "", FloatUnaryRule, Index, None, Free, None)' \
  compiler/lower/inline_node.cc "kBogusD.*not handled in switch" "an Index op without its lowering"
expect_refused 'GJ_OP(BogusE, "bogus_e", 1, 1, "", FloatUnaryRule, Kernel, None, Free, None)' \
  compiler/lower/build_kernels.cc "kBogusE.*not handled in switch" "a Kernel op without its kernel"
expect_refused 'GJ_OP(BogusF, "bogus_f", 1, 1, "", FloatUnaryRule, Composite, None, Free, None)' \
  compiler/passes/decompose.cc "kBogusF.*not handled in switch" "a Composite without an expansion"
expect_refused 'GJ_OP(BogusG, "bogus_g", 1, 1, "", FloatUnaryRule, Pointwise, Exp, Free, Rule)' \
  compiler/autodiff/grad_rules.cc "kBogusG.*not handled in switch" "a Grad = Rule op without a rule"

if ((failures)); then
  echo "$failures check(s) failed"
  exit 1
fi
echo "every missing piece fails the build"
