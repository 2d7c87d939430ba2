// Value handles: model code is written once against these and runs eagerly (each op
// computed at once) or traced (each op recorded into an ir::Graph), depending on the
// Context that made the values.
#ifndef GRAPHJIT_FRONTEND_VALUE_H_
#define GRAPHJIT_FRONTEND_VALUE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace graphjit::frontend {

class Context;

// A handle to one value of a Context. Cheap to copy. A value whose op failed is
// invalid; ops on it fail quietly and the Context reports the first error.
class Value {
 public:
  Value() = default;
  Value(Context* ctx, ir::ValueId id) : ctx_(ctx), id_(id) {}
  // A handle that also keeps `token` alive: lazy contexts use it to know which values
  // user code still holds (and to free the others).
  Value(Context* ctx, ir::ValueId id, std::shared_ptr<const void> token)
      : ctx_(ctx), id_(id), token_(std::move(token)) {}

  bool valid() const { return ctx_ != nullptr && id_ != ir::kInvalidValue; }
  Context* context() const { return ctx_; }
  ir::ValueId id() const { return id_; }
  // The value's type; an invalid value reports f32[] (check valid() first if it matters).
  const ir::ValueType& type() const;
  ir::DType dtype() const { return type().dtype; }
  const ir::Shape& shape() const { return type().shape; }
  int rank() const { return type().rank(); }

 private:
  Context* ctx_ = nullptr;
  ir::ValueId id_ = ir::kInvalidValue;
  std::shared_ptr<const void> token_;
};

// Where values live. Errors are sticky (as in XLA's XlaBuilder): the first failing op
// is recorded with its name and every later op returns an invalid Value, so model code
// need not check after each op; status() tells at the end.
class Context {
 public:
  virtual ~Context() = default;

  // A graph input by name; its type comes from whoever set up the context.
  virtual Value Input(absl::string_view name) = 0;
  // True if the caller supplied this (optional) input.
  virtual bool HasInput(absl::string_view name) const = 0;
  // A named parameter (weight).
  virtual Value Param(absl::string_view name) = 0;
  // Applies `op` to `operands`: computes it (eager) or records it (trace).
  virtual Value Emit(ir::OpCode op, absl::Span<const Value> operands, ir::Attrs attrs) = 0;
  virtual const ir::ValueType& TypeOf(ir::ValueId id) const = 0;
  // A while loop (ir/regions.h) on `operands` (carried values, then invariants) with its
  // cond and body regions: the final carried values, one per carried operand. Runs it at
  // once (eager) or records it with its regions (trace). The default records an error:
  // a context that cannot keep a loop whole (a lazy one) says so.
  virtual std::vector<Value> EmitWhile(absl::Span<const Value> operands, ir::Attrs attrs,
                                       std::vector<std::shared_ptr<const ir::Graph>> regions);
  // A scan (ir/regions.h) on `operands` (carried values, scanned inputs, invariants) with
  // its body region: the final carried values, then each per-row value stacked. The
  // default records an error, as EmitWhile's does.
  virtual std::vector<Value> EmitScan(absl::Span<const Value> operands, ir::Attrs attrs,
                                      std::vector<std::shared_ptr<const ir::Graph>> regions);
  // An if (ir/regions.h) on `operands` (the bool[] condition, then the branches'
  // operands) with its then and else regions: the taken branch's value. The default
  // records an error, as EmitWhile's does.
  virtual Value EmitIf(absl::Span<const Value> operands, ir::Attrs attrs,
                       std::vector<std::shared_ptr<const ir::Graph>> regions);
  // The weights the regions of a loop traced in this context may read (its params), or
  // null if its Param reads none.
  virtual const runtime::TensorMap* params() const { return nullptr; }

  const absl::Status& status() const { return status_; }
  // Records `s` as the context's error unless it has one (what a failing op does).
  void ReportError(absl::Status s) { RecordError(std::move(s)); }

 protected:
  // Keeps the first error, prefixed with `what` (the op or input that failed).
  void RecordError(absl::Status s);
  // Validates operands (all valid and of this context); false if an op must not run.
  bool CheckOperands(ir::OpCode op, absl::Span<const Value> operands);

 private:
  absl::Status status_;
};

}  // namespace graphjit::frontend

#endif  // GRAPHJIT_FRONTEND_VALUE_H_
