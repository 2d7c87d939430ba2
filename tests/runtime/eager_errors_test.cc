// EvalNode on bad calls: wrong operand counts, missing tensors, bad attributes, wrong
// dtypes, plus a fuzz over every op with random operands and attributes. Each must give a
// Status naming the op, never a crash.
#include "gmock/gmock.h"
#include "ir/op.h"
#include "tests/runtime/test_util.h"

namespace graphjit::runtime::testutil {
namespace {

using ::testing::HasSubstr;

TEST(EagerErrorsTest, WrongOperandCountNamesTheOp) {
  Tensor x = Tensor::Scalar(DType::kF64, 1);
  absl::StatusOr<Tensor> r = EvalOp(OpCode::kAdd, {&x, &x, &x});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("add takes 2 operand(s), got 3"));
  EXPECT_FALSE(EvalOp(OpCode::kExp, {}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kConcat, {}, {{"axis", int64_t{0}}}).ok());
}

TEST(EagerErrorsTest, MissingOperandTensor) {
  Tensor x = Tensor::Scalar(DType::kF64, 1);
  Tensor empty;
  absl::StatusOr<Tensor> r = EvalOp(OpCode::kMul, {&x, &empty});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("mul: operand 1 holds no tensor"));
  EXPECT_FALSE(EvalOp(OpCode::kMul, {nullptr, &x}).ok());
}

TEST(EagerErrorsTest, BadAttributes) {
  Tensor x = FromValues(DType::kF64, {2, 2}, {1, 2, 3, 4});
  absl::StatusOr<Tensor> missing = EvalOp(OpCode::kTranspose, {&x});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("transpose requires attribute 'perm'"));
  absl::StatusOr<Tensor> kind = EvalOp(OpCode::kSoftmax, {&x}, {{"axis", 1.5}});
  ASSERT_FALSE(kind.ok());
  EXPECT_THAT(kind.status().message(), HasSubstr("softmax attribute 'axis'"));
  EXPECT_FALSE(EvalOp(OpCode::kExp, {&x}, {{"axis", int64_t{0}}}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kTranspose, {&x}, {{"perm", std::vector<int64_t>{0, 0}}}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kSoftmax, {&x}, {{"axis", int64_t{2}}}).ok());
}

TEST(EagerErrorsTest, WrongDTypesNameTheOpAndTheType) {
  Tensor f = FromValues(DType::kF32, {2}, {1, 2});
  Tensor d = FromValues(DType::kF64, {2}, {1, 2});
  Tensor i = FromValues(DType::kI64, {2}, {1, 2});
  Tensor b = FromValues(DType::kBool, {2}, {1, 0});
  absl::StatusOr<Tensor> mixed = EvalOp(OpCode::kAdd, {&f, &d});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(), HasSubstr("add"));
  EXPECT_THAT(mixed.status().message(), HasSubstr("f32[2]"));
  EXPECT_THAT(mixed.status().message(), HasSubstr("f64[2]"));
  EXPECT_FALSE(EvalOp(OpCode::kAdd, {&b, &b}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kExp, {&i}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kNeg, {&b}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kPow, {&i, &i}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kWhere, {&i, &d, &d}).ok());
  EXPECT_FALSE(EvalOp(OpCode::kSilu, {&i}).ok());
}

TEST(EagerErrorsTest, ShapesThatDoNotBroadcast) {
  Tensor a = FromValues(DType::kF64, {2, 3}, std::vector<double>(6, 1));
  Tensor b = FromValues(DType::kF64, {2}, {1, 2});
  absl::StatusOr<Tensor> r = EvalOp(OpCode::kSub, {&a, &b});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("sub"));
  EXPECT_THAT(r.status().message(), HasSubstr("[2, 3]"));
}

TEST(EagerErrorsTest, UnknownOpCode) {
  Tensor x = Tensor::Scalar(DType::kF64, 1);
  absl::StatusOr<Tensor> r = EvalNode(MakeNode(static_cast<OpCode>(250)), {&x}, {});
  EXPECT_FALSE(r.ok());
}

// Random attribute values of the kinds each op's schema names (often invalid values).
ir::Attrs RandomAttrs(std::mt19937_64& rng, OpCode op) {
  ir::Attrs attrs;
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (const ir::AttrSpec& spec : ir::GetOpInfo(op).attrs) {
    if (spec.optional && pick(0, 1) == 0) continue;
    switch (spec.kind) {
      case ir::AttrKind::kInt:
        attrs.Set(spec.name, int64_t{pick(-2, 3)});
        break;
      case ir::AttrKind::kInts: {
        std::vector<int64_t> v(pick(0, 3));
        for (int64_t& x : v) x = pick(-1, 3);
        attrs.Set(spec.name, v);
        break;
      }
      case ir::AttrKind::kFloat:
        attrs.Set(spec.name, pick(-2, 2) * 0.5);
        break;
      case ir::AttrKind::kFloats:
        attrs.Set(spec.name, std::vector<double>(pick(0, 4), 1.5));
        break;
      case ir::AttrKind::kDim:
        attrs.Set(spec.name, ir::SymExpr(pick(-1, 2)));
        break;
      case ir::AttrKind::kDims: {
        ir::Shape s(pick(0, 3));
        for (ir::SymExpr& d : s) d = pick(-1, 3);
        if (pick(0, 4) == 0) s.push_back(ir::SymExpr::Symbol("Q"));  // unbound
        attrs.Set(spec.name, s);
        break;
      }
      case ir::AttrKind::kDType:
        attrs.Set(spec.name, static_cast<DType>(pick(0, 3)));
        break;
      case ir::AttrKind::kBool:
        attrs.Set(spec.name, pick(0, 1) == 1);
        break;
      case ir::AttrKind::kString:
        attrs.Set(spec.name, std::string("x"));
        break;
    }
  }
  return attrs;
}

TEST(EagerErrorsTest, FuzzEveryOpNeverCrashes) {
  for (int op_index = 0; op_index < ir::kNumOps; ++op_index) {
    const auto op = static_cast<OpCode>(op_index);
    // Seeded by the op's name, so adding an op does not change the others' streams.
    uint64_t seed = 50;
    for (char ch : ir::OpName(op)) seed = seed * 131 + static_cast<unsigned char>(ch);
    std::mt19937_64 rng(seed);
    int ok = 0;
    for (int trial = 0; trial < 2000; ++trial) {
      // Mostly one dtype and shape per call (so some calls are valid), sometimes not.
      auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
      const int count = pick(0, 4);
      const auto base_dtype = static_cast<DType>(pick(0, 3));
      Dims base_shape = RandomShape(rng, 0, 3, 4);
      if (!base_shape.empty() && trial % 7 == 0) base_shape[0] = 0;
      std::vector<Tensor> tensors;
      for (int i = 0; i < count; ++i) {
        // i64 now and then: gather indices and cross_entropy targets.
        const int kind = pick(0, 4);
        const DType dtype = kind == 0   ? static_cast<DType>(pick(0, 3))
                            : kind == 1 ? DType::kI64
                                        : base_dtype;
        // The base shape, or it without its last dim (targets, norm weights), or any shape.
        const int choice = pick(0, 3);
        const Dims shape = choice == 0   ? RandomShape(rng, 0, 3, 3)
                           : choice == 1 ? Dims(base_shape.begin(),
                                                base_shape.end() - (base_shape.empty() ? 0 : 1))
                                         : base_shape;
        // Integers in [-1, 2]: often valid gather indices and cross_entropy targets.
        tensors.push_back(Random(rng, dtype, shape, -1, 2));
      }
      std::vector<const Tensor*> ptrs;
      for (const Tensor& t : tensors) ptrs.push_back(&t);
      absl::StatusOr<Tensor> r = EvalNode(MakeNode(op, RandomAttrs(rng, op)), ptrs, {{"S", 2}});
      if (r.ok()) {
        ++ok;
        EXPECT_TRUE(r->valid()) << ir::OpName(op);
      } else if (op != OpCode::kInput && op != OpCode::kParam) {
        EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument)
            << ir::OpName(op) << ": " << r.status();
        EXPECT_THAT(r.status().message(), HasSubstr(ir::OpName(op)));
      }
    }
    // Not a correctness check, just that the fuzz reaches the kernels at all.
    // Control-flow ops need regions no single node of the fuzz has (runtime/
    // interpreter_test.cc runs them), and non_max_suppression boxes [B, N, 4] with scores
    // [B, C, N] (runtime/data_dependent_test.cc): they must fail cleanly, which the loop
    // checked.
    if (op != OpCode::kInput && op != OpCode::kParam && op != OpCode::kConcat &&
        op != OpCode::kNonMaxSuppression && ir::LoweringOf(op) != ir::OpLowering::kRegion) {
      EXPECT_GT(ok, 0) << ir::OpName(op) << " never succeeded in the fuzz";
    }
  }
}

}  // namespace
}  // namespace graphjit::runtime::testutil
