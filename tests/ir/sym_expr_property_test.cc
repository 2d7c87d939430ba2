// Randomized soundness check of SymExpr: random expression trees are evaluated directly
// (test-side arithmetic) and through SymExpr, whose simplifications must never change the
// value; and algebraic identities hold structurally.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/sym_expr.h"
#include "tests/ir/sym_expr_test_util.h"

namespace graphjit::ir::sym_expr_testutil {
namespace {

using ::testing::HasSubstr;

// Floor division and mod written differently from ir/sym_expr_internal.h: from the truncated
// remainder, fixed up to take the divisor's sign.
int64_t RefMod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
int64_t RefDiv(int64_t a, int64_t b) { return (a - RefMod(a, b)) / b; }

struct Tree {
  enum Kind { kConst, kSym, kAdd, kSub, kMul, kDiv, kMod, kMax, kMin, kNeg } kind;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Tree> a, b;
};
using TreePtr = std::shared_ptr<const Tree>;

// The value of `t`, or nullopt if it divides by zero.
std::optional<int64_t> RefEval(const Tree& t, const Bindings& bindings) {
  if (t.kind == Tree::kConst) return t.value;
  if (t.kind == Tree::kSym) return bindings.at(t.name);
  std::optional<int64_t> a = RefEval(*t.a, bindings);
  if (!a) return std::nullopt;
  if (t.kind == Tree::kNeg) return -*a;
  std::optional<int64_t> b = RefEval(*t.b, bindings);
  if (!b) return std::nullopt;
  switch (t.kind) {
    case Tree::kAdd:
      return *a + *b;
    case Tree::kSub:
      return *a - *b;
    case Tree::kMul:
      return *a * *b;
    case Tree::kDiv:
      return *b == 0 ? std::nullopt : std::optional<int64_t>(RefDiv(*a, *b));
    case Tree::kMod:
      return *b == 0 ? std::nullopt : std::optional<int64_t>(RefMod(*a, *b));
    case Tree::kMax:
      return std::max(*a, *b);
    case Tree::kMin:
      return std::min(*a, *b);
    default:
      return std::nullopt;
  }
}

SymExpr ToSym(const Tree& t) {
  switch (t.kind) {
    case Tree::kConst:
      return t.value;
    case Tree::kSym:
      return SymExpr::Symbol(t.name);
    case Tree::kNeg:
      return -ToSym(*t.a);
    case Tree::kAdd:
      return ToSym(*t.a) + ToSym(*t.b);
    case Tree::kSub:
      return ToSym(*t.a) - ToSym(*t.b);
    case Tree::kMul:
      return ToSym(*t.a) * ToSym(*t.b);
    case Tree::kDiv:
      return ToSym(*t.a) / ToSym(*t.b);
    case Tree::kMod:
      return ToSym(*t.a) % ToSym(*t.b);
    case Tree::kMax:
      return SymExpr::Max(ToSym(*t.a), ToSym(*t.b));
    case Tree::kMin:
      return SymExpr::Min(ToSym(*t.a), ToSym(*t.b));
  }
  return 0;
}

std::string TreeText(const Tree& t) {
  static const char* const kOps[] = {"", "", "+", "-", "*", "/", "%", "max", "min", "-"};
  switch (t.kind) {
    case Tree::kConst:
      return absl::StrCat(t.value);
    case Tree::kSym:
      return t.name;
    case Tree::kNeg:
      return absl::StrCat("-(", TreeText(*t.a), ")");
    case Tree::kMax:
    case Tree::kMin:
      return absl::StrCat(kOps[t.kind], "(", TreeText(*t.a), ", ", TreeText(*t.b), ")");
    default:
      return absl::StrCat("(", TreeText(*t.a), kOps[t.kind], TreeText(*t.b), ")");
  }
}

class TreeGen {
 public:
  explicit TreeGen(uint32_t seed) : rng_(seed) {}

  // Leaves are small constants, S and T; divisors are mostly nonzero constants of either
  // sign, sometimes whole subtrees (bindings that make those zero are skipped).
  TreePtr Gen(int depth) {
    auto t = std::make_shared<Tree>();
    if (depth == 0 || Uniform(0, 9) < 2) {
      if (Uniform(0, 2) == 0) {
        t->kind = Tree::kConst;
        t->value = Uniform(-6, 6);
      } else {
        t->kind = Tree::kSym;
        t->name = Uniform(0, 1) == 0 ? "S" : "T";
      }
      return t;
    }
    t->kind = static_cast<Tree::Kind>(Uniform(Tree::kAdd, Tree::kNeg));
    t->a = Gen(depth - 1);
    if (t->kind == Tree::kNeg) return t;
    if ((t->kind == Tree::kDiv || t->kind == Tree::kMod) && Uniform(0, 3) != 0) {
      auto c = std::make_shared<Tree>();
      c->kind = Tree::kConst;
      do c->value = Uniform(-5, 8);
      while (c->value == 0);
      t->b = c;
    } else {
      t->b = Gen(depth - 1);
    }
    return t;
  }

  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

 private:
  std::mt19937 rng_;
};

TEST(SymExprPropertyTest, SimplificationPreservesValues) {
  constexpr int kTrees = 4000;
  int compared = 0;
  int zero_divisors = 0;
  for (uint32_t seed = 1; seed <= kTrees; ++seed) {
    TreeGen gen(seed);
    // Depth 4 keeps every intermediate within +-8^16, far from overflow.
    TreePtr tree = gen.Gen(4);
    SymExpr e = ToSym(*tree);
    absl::StatusOr<SymExpr> reparsed = ParseSymExpr(e.ToString());
    if (!reparsed.ok()) {
      // The one text the parser refuses: a division by a divisor that folded to the
      // constant 0 (e.g. `S/(2/6)`), which has no value for any binding.
      ASSERT_THAT(std::string(reparsed.status().message()), HasSubstr("by zero"))
          << TreeText(*tree) << " printed as " << e.ToString();
      ASSERT_TRUE(absl::StrContains(e.ToString(), "/0") || absl::StrContains(e.ToString(), "%0"))
          << e.ToString();
      ++zero_divisors;
      continue;
    }
    EXPECT_EQ(*reparsed, e) << TreeText(*tree) << " printed as " << e.ToString() << " re-parsed as "
                            << reparsed->ToString();
    absl::StatusOr<SymExpr> from_tree_text = ParseSymExpr(TreeText(*tree));
    if (!from_tree_text.ok()) {
      // Only a literal zero divisor such as `(S%0)` is refused.
      ASSERT_THAT(std::string(from_tree_text.status().message()), HasSubstr("by zero"))
          << TreeText(*tree);
    }
    for (int trial = 0; trial < 12; ++trial) {
      Bindings b = {{"S", gen.Uniform(-8, 8)}, {"T", gen.Uniform(-8, 8)}};
      std::optional<int64_t> want = RefEval(*tree, b);
      // Dividing by zero has no value; simplification may have removed the division.
      if (!want) continue;
      ++compared;
      auto where = [&] {
        return absl::StrCat(TreeText(*tree), " simplified to ", e.ToString(), " at S=", b.at("S"),
                            " T=", b.at("T"), " (seed ", seed, ")");
      };
      absl::StatusOr<int64_t> got = e.Evaluate(b);
      ASSERT_TRUE(got.ok()) << where() << ": " << got.status();
      ASSERT_EQ(*got, *want) << where();
      absl::StatusOr<int64_t> got_reparsed = reparsed->Evaluate(b);
      ASSERT_TRUE(got_reparsed.ok()) << where() << ": " << got_reparsed.status();
      ASSERT_EQ(*got_reparsed, *want) << where() << ", re-parsed";
      if (from_tree_text.ok()) {
        absl::StatusOr<int64_t> got_text = from_tree_text->Evaluate(b);
        ASSERT_TRUE(got_text.ok()) << where() << ": " << got_text.status();
        ASSERT_EQ(*got_text, *want) << where() << ", parsed from the tree's text";
      }
      // Partial evaluation agrees too, binding either symbol first.
      ASSERT_EQ(Eval(e.Bind({{"S", b.at("S")}}), b), *want) << where() << ", S bound first";
      ASSERT_EQ(Eval(e.Bind({{"T", b.at("T")}}), b), *want) << where() << ", T bound first";
      ASSERT_EQ(e.Bind(b).AsConstant(), *want) << where() << ", fully bound";
    }
  }
  // Most bindings are defined: the test really compared values.
  EXPECT_GT(compared, kTrees * 6);
  EXPECT_LT(zero_divisors, kTrees / 20);
}

TEST(SymExprPropertyTest, AlgebraicIdentitiesHoldStructurally) {
  for (uint32_t seed = 1; seed <= 1000; ++seed) {
    TreeGen gen(seed);
    SymExpr a = ToSym(*gen.Gen(3));
    SymExpr b = ToSym(*gen.Gen(3));
    SymExpr c = ToSym(*gen.Gen(2));
    int64_t k = gen.Uniform(1, 9);
    int64_t r = gen.Uniform(0, k - 1);
    std::string where = absl::StrCat("a=", a.ToString(), " b=", b.ToString(), " c=", c.ToString(),
                                     " k=", k, " r=", r);
    ASSERT_EQ(a + b, b + a) << where;
    ASSERT_EQ(a * b, b * a) << where;
    ASSERT_EQ((a + b) * c, a * c + b * c) << where;
    ASSERT_EQ(a - a, SymExpr(0)) << where;
    ASSERT_EQ(a + b - b, a) << where;
    ASSERT_EQ((k * a + r) / k, a) << where;
    ASSERT_EQ((k * a + r) % k, SymExpr(r)) << where;
    ASSERT_EQ(SymExpr::Max(a, b), SymExpr::Max(b, a)) << where;
    ASSERT_EQ(SymExpr::Min(a, b), SymExpr::Min(b, a)) << where;
    ASSERT_EQ(SymExpr::Max(a, a + k), a + k) << where;
    ASSERT_EQ(SymExpr::Min(a, a + k), a) << where;
    // Hashes follow equality.
    ASSERT_EQ(absl::HashOf(a * b), absl::HashOf(b * a)) << where;
  }
}

}  // namespace
}  // namespace graphjit::ir::sym_expr_testutil
