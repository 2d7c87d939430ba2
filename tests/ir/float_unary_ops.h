// The unary float ops without attributes (exp, log, ...), found by their shape rule, so
// that a test covering every op covers a new one of them without a line of its own
// (parser_test's all-ops graph, shape_rules_test's cases).
#ifndef GRAPHJIT_TESTS_IR_FLOAT_UNARY_OPS_H_
#define GRAPHJIT_TESTS_IR_FLOAT_UNARY_OPS_H_

#include <vector>

#include "ir/op.h"
#include "ir/shape_rules.h"

namespace graphjit::ir {

inline std::vector<OpCode> FloatUnaryOps() {
  std::vector<OpCode> ops;
  for (int i = 0; i < kNumOps; ++i) {
    const auto op = static_cast<OpCode>(i);
    const OpInfo& info = GetOpInfo(op);
    if (info.shape_rule == &FloatUnaryRule && info.attrs.empty() && info.min_arity == 1) {
      ops.push_back(op);
    }
  }
  return ops;
}

}  // namespace graphjit::ir

#endif  // GRAPHJIT_TESTS_IR_FLOAT_UNARY_OPS_H_
