// The decode layer's kernel program after the default pipeline and lowering, for tests of
// what lowering and the host driver decide about its kernels.
#ifndef GRAPHJIT_TESTS_COMPILER_LOWER_DECODE_PROGRAM_H_
#define GRAPHJIT_TESTS_COMPILER_LOWER_DECODE_PROGRAM_H_

#include <optional>

#include "compiler/lower/lower.h"
#include "compiler/passes/pipeline.h"
#include "gtest/gtest.h"
#include "models/model.h"

namespace graphjit::compiler {

// `spec` a model spec ("decode", "decode:dtype=f32"); S fixed to `S`, or symbolic.
inline Program DecodeProgram(const char* spec, std::optional<int64_t> S) {
  auto model = *models::CreateModel(spec);
  models::TraceOptions options;
  if (S.has_value()) options.fixed_dims = {{"S", *S}};
  ir::Graph g = *models::TraceModel(*model, options);
  PassContext ctx{model->params()};
  EXPECT_TRUE(Pipeline::Default().Run(&g, &ctx).ok());
  absl::StatusOr<LoweredGraph> lowered = Lower(g);
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return lowered->program;
}

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_TESTS_COMPILER_LOWER_DECODE_PROGRAM_H_
