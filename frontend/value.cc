#include "frontend/value.h"

#include "absl/strings/str_cat.h"

namespace graphjit::frontend {

const ir::ValueType& Value::type() const {
  static const ir::ValueType* invalid = new ir::ValueType{ir::DType::kF32, {}};
  return valid() ? ctx_->TypeOf(id_) : *invalid;
}

void Context::RecordError(absl::Status s) {
  if (status_.ok()) status_ = std::move(s);
}

bool Context::CheckOperands(ir::OpCode op, absl::Span<const Value> operands) {
  for (const Value& v : operands) {
    if (v.context() != nullptr && v.context() != this) {
      RecordError(absl::InvalidArgumentError(
          absl::StrCat(ir::OpName(op), ": operand belongs to another context")));
      return false;
    }
    if (!v.valid()) {
      // An earlier op failed and was recorded; make sure a default Value is reported too.
      RecordError(absl::InvalidArgumentError(
          absl::StrCat(ir::OpName(op), ": operand is not a valid value")));
      return false;
    }
  }
  return true;
}

std::vector<Value> Context::EmitWhile(absl::Span<const Value>, ir::Attrs,
                                      std::vector<std::shared_ptr<const ir::Graph>>) {
  RecordError(absl::UnimplementedError(
      "while: this context records no structured loops (trace it, or run it eagerly)"));
  return {};
}

std::vector<Value> Context::EmitScan(absl::Span<const Value>, ir::Attrs,
                                     std::vector<std::shared_ptr<const ir::Graph>>) {
  RecordError(absl::UnimplementedError(
      "scan: this context records no structured loops (trace it, or run it eagerly)"));
  return {};
}

Value Context::EmitIf(absl::Span<const Value>, ir::Attrs,
                      std::vector<std::shared_ptr<const ir::Graph>>) {
  RecordError(absl::UnimplementedError(
      "if: this context records no structured branches (trace it, or run it eagerly)"));
  return Value();
}

}  // namespace graphjit::frontend
