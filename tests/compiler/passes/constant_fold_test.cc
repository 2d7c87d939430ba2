#include "compiler/passes/constant_fold.h"

#include "gtest/gtest.h"
#include "pass_test_util.h"

namespace graphjit::compiler {
namespace {

using runtime::Tensor;
using testing::RunPassOnText;

const char kGraph[] = R"(graph g {
  %0 = input {name="x"} : f64[2]
  %1 = constant {value=[2.0]} : f64[]
  %2 = constant {value=[3.0]} : f64[]
  %3 = add(%1, %2) : f64[]
  %4 = param {name="w"} : f64[2]
  %5 = mul(%4, %3) : f64[2]
  %6 = add(%0, %5) : f64[2]
  return %6
})";

TEST(ConstantFold, FoldsConstantsAndConstantParams) {
  PassContext ctx;
  ctx.params["w"] = *Tensor::FromDoubles(ir::DType::kF64, {2}, {1.5, -2.0});
  absl::StatusOr<std::string> out = RunPassOnText("constant_fold", kGraph, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f64[2]
  %1 = constant {value=[2.0]} : f64[]
  %2 = constant {value=[3.0]} : f64[]
  %3 = constant {value=[5.0]} : f64[]
  %4 = param {name="w"} : f64[2]
  %5 = constant {value=[7.5, -10.0]} : f64[2]
  %6 = add(%0, %5) : f64[2]
  return %6
}
)");
}

TEST(ConstantFold, OneElementParamsBecomeConstants) {
  // A clip's bounds: inlined where they are read. Must not fire: a param of two elements,
  // and any param when the weights may change (training).
  const char kClip[] = R"(graph g {
  %0 = input {name="x"} : f32[4]
  %1 = param {name="lo"} : f32[]
  %2 = param {name="hi"} : f32[1]
  %3 = param {name="w"} : f32[2]
  %4 = maximum(%0, %1) : f32[4]
  %5 = minimum(%4, %2) : f32[4]
  return %5, %3
})";
  PassContext ctx;
  ctx.params["lo"] = *Tensor::FromDoubles(ir::DType::kF32, {}, {0.0});
  ctx.params["hi"] = *Tensor::FromDoubles(ir::DType::kF32, {1}, {6.0});
  ctx.params["w"] = *Tensor::FromDoubles(ir::DType::kF32, {2}, {1.0, 2.0});
  absl::StatusOr<std::string> out = RunPassOnText("constant_fold", kClip, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f32[4]
  %1 = constant {value=[0.0]} : f32[]
  %2 = constant {value=[6.0]} : f32[1]
  %3 = param {name="w"} : f32[2]
  %4 = maximum(%0, %1) : f32[4]
  %5 = minimum(%4, %2) : f32[4]
  return %5, %3
}
)");
  ctx.params_are_constant = false;
  out = RunPassOnText("constant_fold", kClip, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_NE(out->find(R"(%1 = param {name="lo"})"), std::string::npos) << *out;
  EXPECT_NE(out->find(R"(%2 = param {name="hi"})"), std::string::npos) << *out;
}

TEST(ConstantFold, LargeResultsBecomeNewParams) {
  PassContext ctx;
  std::vector<double> w(4 * 8);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>(i);
  ctx.params["W"] = *Tensor::FromDoubles(ir::DType::kF32, {4, 8}, w);
  absl::StatusOr<std::string> out = RunPassOnText("constant_fold", R"(graph g {
  %0 = input {name="x"} : f32[1, 4]
  %1 = param {name="W"} : f32[4, 8]
  %2 = transpose(%1) {perm=[1, 0]} : f32[8, 4]
  %3 = transpose(%2) {perm=[1, 0]} : f32[4, 8]
  %4 = matmul(%0, %3) : f32[1, 8]
  return %4
})",
                                                  &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = input {name="x"} : f32[1, 4]
  %1 = param {name="W"} : f32[4, 8]
  %2 = param {name="folded.0"} : f32[8, 4]
  %3 = param {name="folded.1"} : f32[4, 8]
  %4 = matmul(%0, %3) : f32[1, 8]
  return %4
}
)");
  ASSERT_TRUE(ctx.params.contains("folded.1"));
  EXPECT_EQ(ctx.params.at("folded.1").ToDoubles(), w);
  EXPECT_EQ(ctx.params.at("folded.0").ValueAt(1), 8.0);  // W^T[0, 1] = W[1, 0]
}

TEST(ConstantFold, AnI32ResultBecomesAParamNotAConstant) {
  // i32 is a storage type no constant may have; a small i64 result stays a constant.
  PassContext ctx;
  absl::StatusOr<std::string> out = RunPassOnText("constant_fold", R"(graph g {
  %0 = constant {value=[3.0, -1.0]} : i64[2]
  %1 = cast(%0) {dtype=i32} : i32[2]
  %2 = cast(%1) {dtype=i64} : i64[2]
  return %1, %2
})",
                                                  &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, R"(graph g {
  %0 = constant {value=[3.0, -1.0]} : i64[2]
  %1 = param {name="folded.0"} : i32[2]
  %2 = constant {value=[3.0, -1.0]} : i64[2]
  return %1, %2
}
)");
  ASSERT_TRUE(ctx.params.contains("folded.0"));
  EXPECT_EQ(ctx.params.at("folded.0").TypeString(), "i32[2]");
}

TEST(ConstantFold, DoesNotReadParamsThatMayChange) {
  PassContext ctx;
  ctx.params["w"] = *Tensor::FromDoubles(ir::DType::kF64, {2}, {1.5, -2.0});
  ctx.params_are_constant = false;
  absl::StatusOr<std::string> out = RunPassOnText("constant_fold", kGraph, &ctx);
  ASSERT_TRUE(out.ok()) << out.status();
  // 2 + 3 still folds; w * 5 does not.
  EXPECT_NE(out->find("%3 = constant {value=[5.0]} : f64[]"), std::string::npos);
  EXPECT_NE(out->find("%5 = mul(%4, %3) : f64[2]"), std::string::npos);
}

TEST(ConstantFold, DoesNotFireOnSymbolicShapesOrPositions) {
  // A full of symbolic shape, and a kv_write of known operands at the run-time position P.
  const std::string text = R"(graph g {
  %0 = input {name="x"} : f64[S]
  %1 = full {value=2.0} : f64[S]
  %2 = exp(%1) : f64[S]
  %3 = mul(%0, %2) : f64[S]
  %4 = constant {value=[0.0, 0.0, 0.0, 0.0]} : f64[1, 2, 2]
  %5 = constant {value=[1.0, 2.0]} : f64[1, 1, 2]
  %6 = kv_write(%4, %5) {pos=P} : f64[1, 2, 2]
  return %3, %6
}
)";
  bool changed = true;
  absl::StatusOr<std::string> out = RunPassOnText("constant_fold", text, nullptr, &changed);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_FALSE(changed);
  EXPECT_EQ(*out, text);
}

}  // namespace
}  // namespace graphjit::compiler
