// Early returns of absl::Status, the project's only copy (Debian's abseil 20220623 has no
// status macros). In ir/, the lowest layer, so every layer can use them:
//   GJ_RETURN_IF_ERROR(CheckSomething(x));
//   GJ_ASSIGN_OR_RETURN(Graph g, ParseGraph(text));   // declares g, or returns the error
//   GJ_ASSIGN_OR_RETURN(existing, Compute());         // assigns
//   int axis = ir::ValueOrDie(NormalizeAxis(a, rank, "x"));  // must be OK: an invariant
// `expr` is evaluated once; a StatusOr's error status is returned as is (a function
// returning StatusOr<T> can return it: StatusOr<T> converts from a non-OK Status).
#ifndef GRAPHJIT_IR_STATUS_MACROS_H_
#define GRAPHJIT_IR_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/check.h"

#define GJ_RETURN_IF_ERROR(expr)                                \
  do {                                                          \
    if (::absl::Status gj_status_ = (expr); !gj_status_.ok()) { \
      return gj_status_;                                        \
    }                                                           \
  } while (false)

#define GJ_STATUS_MACROS_CONCAT_INNER(a, b) a##b
#define GJ_STATUS_MACROS_CONCAT(a, b) GJ_STATUS_MACROS_CONCAT_INNER(a, b)
#define GJ_ASSIGN_OR_RETURN(lhs, expr) \
  GJ_ASSIGN_OR_RETURN_IMPL(GJ_STATUS_MACROS_CONCAT(gj_status_or_, __LINE__), lhs, expr)
#define GJ_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return std::move(tmp).status(); \
  lhs = *std::move(tmp)

namespace graphjit::ir {

// The value of `s`, which must be OK: for results an earlier check guarantees (the axes
// of a verified graph). A failure is a bug and aborts with the status, where `*s` would
// read an empty StatusOr.
template <typename T>
T ValueOrDie(absl::StatusOr<T> s) {
  GJ_CHECK(s.ok()) << s.status().ToString();
  return *std::move(s);
}

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_STATUS_MACROS_H_
