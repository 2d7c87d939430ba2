// Shared helpers of the shape-rule tests: GoogleTest printing of ValueTypes, the symbols S,
// T and P, and shorthands for value types and the attributes of sources, axes and
// reductions.
#ifndef GRAPHJIT_TESTS_IR_SHAPE_RULES_TEST_UTIL_H_
#define GRAPHJIT_TESTS_IR_SHAPE_RULES_TEST_UTIL_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>

#include "ir/op.h"
#include "ir/shape_rules.h"
#include "ir/sym_expr.h"

namespace graphjit::ir {

// Lets GoogleTest print ValueTypes in failure messages.
inline void PrintTo(const ValueType& t, std::ostream* os) { *os << TypeToString(t); }

namespace shape_rules_testutil {

inline const SymExpr S = SymExpr::Symbol("S");
inline const SymExpr T = SymExpr::Symbol("T");
inline const SymExpr P = SymExpr::Symbol("P");

inline ValueType F32(Shape shape) { return ValueType{DType::kF32, std::move(shape)}; }
inline ValueType F64(Shape shape) { return ValueType{DType::kF64, std::move(shape)}; }
inline ValueType I64(Shape shape) { return ValueType{DType::kI64, std::move(shape)}; }
inline ValueType Bool(Shape shape) { return ValueType{DType::kBool, std::move(shape)}; }
inline ValueType I32(Shape shape) { return ValueType{DType::kI32, std::move(shape)}; }

inline Attrs Axis(int64_t axis) { return Attrs{{"axis", axis}}; }
inline Attrs Reduce(int64_t axis, bool keepdim) {
  return Attrs{{"axis", axis}, {"keepdim", keepdim}};
}
inline Attrs Source(DType dtype, Shape shape) {
  return Attrs{{"name", std::string("x")}, {"dtype", dtype}, {"shape", std::move(shape)}};
}

}  // namespace shape_rules_testutil
}  // namespace graphjit::ir

#endif  // GRAPHJIT_TESTS_IR_SHAPE_RULES_TEST_UTIL_H_
