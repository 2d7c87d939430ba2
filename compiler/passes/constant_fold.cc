#include "compiler/passes/constant_fold.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/passes/rewriter.h"
#include "ir/status_macros.h"
#include "runtime/eager.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;

bool HasConstantShape(const ir::Node& n) {
  for (const ir::SymExpr& d : n.type.shape) {
    if (!d.IsConstant()) return false;
  }
  return true;
}

// Attributes that mention a symbol (kv_write's P, a symbolic slice bound) make a node
// depend on run-time bindings even when its operands are known.
bool AttrsAreConstant(const ir::Node& n) {
  std::set<std::string> symbols;
  for (const auto& [name, value] : n.attrs.items()) {
    if (const auto* d = std::get_if<ir::SymExpr>(&value)) d->CollectSymbols(&symbols);
    if (const auto* ds = std::get_if<std::vector<ir::SymExpr>>(&value)) {
      for (const ir::SymExpr& d : *ds) d.CollectSymbols(&symbols);
    }
  }
  return symbols.empty();
}

// Constants hold their values as doubles (the `value` attribute), which is exact for f32,
// f64 and bool and for i64 up to 2^53; other i64 values are folded into a param instead,
// and so is i32, a storage type no constant may have (ir/dtype.h).
bool FitsInConstant(const runtime::Tensor& t) {
  if (t.dtype() == ir::DType::kI32) return false;
  if (t.dtype() != ir::DType::kI64) return true;
  const int64_t* v = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (runtime::SaturatingToI64(static_cast<double>(v[i])) != v[i]) return false;
  }
  return true;
}

// A `constant` node holding `value`, of `type`.
ValueId EmitConstant(GraphRewriter* rw, const runtime::Tensor& value, const ir::ValueType& type) {
  return rw->Emit(
      OpCode::kConstant, std::vector<ValueId>{},
      ir::Attrs{{"value", value.ToDoubles()}, {"dtype", type.dtype}, {"shape", type.shape}});
}

std::string FreshParamName(const runtime::TensorMap& params) {
  for (int i = 0;; ++i) {
    std::string name = absl::StrCat("folded.", i);
    if (!params.contains(name)) return name;
  }
}

}  // namespace

absl::StatusOr<bool> ConstantFold(ir::Graph* graph, PassContext* ctx) {
  GraphRewriter rw(*graph);
  // Values known at compile time, by old id: tensors for what was evaluated or read.
  absl::flat_hash_map<ValueId, runtime::Tensor> known;
  bool changed = false;
  for (ValueId id = 0; id < graph->num_nodes(); ++id) {
    const ir::Node& n = graph->node(id);
    if (!HasConstantShape(n) || !AttrsAreConstant(n)) {
      rw.Copy(id);
      continue;
    }
    // A loop is not folded (its trips could be many); its results are not known here.
    if (n.op == OpCode::kInput || ir::LoweringOf(n.op) == ir::OpLowering::kRegion) {
      rw.Copy(id);
      continue;
    }
    if (n.op == OpCode::kParam) {
      auto it = ctx->params.find(n.name());
      if (!ctx->params_are_constant || it == ctx->params.end()) {
        rw.Copy(id);
        continue;
      }
      known[id] = it->second;
      // A one-element parameter (a clip's bounds, a scale) becomes a constant, which
      // lowering inlines into the kernels that read it: the code then sees the value
      // (a max with a constant is one instruction, with a loaded scalar six).
      if (it->second.numel() == 1 && FitsInConstant(it->second)) {
        changed = true;
        rw.Map(id, EmitConstant(&rw, it->second, n.type));
      } else {
        rw.Copy(id);
      }
      continue;
    }
    bool all_known = true;
    std::vector<const runtime::Tensor*> operands;
    for (ValueId v : n.operands) {
      auto it = known.find(v);
      if (it == known.end()) {
        all_known = false;
        break;
      }
      operands.push_back(&it->second);
    }
    if (!all_known) {
      rw.Copy(id);
      continue;
    }
    absl::StatusOr<runtime::Tensor> value = runtime::EvalNode(n, operands, {});
    if (!value.ok()) {
      return absl::Status(value.status().code(),
                          absl::StrCat("constant_fold: evaluating %", id, " (", ir::OpName(n.op),
                                       "): ", value.status().message()));
    }
    known[id] = *value;
    if (ir::IsSourceOp(n.op)) {  // a constant, full or iota is already as folded as it gets
      rw.Copy(id);
      continue;
    }
    changed = true;
    if (value->numel() <= kMaxInlineElements && FitsInConstant(*value)) {
      rw.Map(id, EmitConstant(&rw, *value, n.type));
    } else {
      std::string name = FreshParamName(ctx->params);
      ctx->params[name] = *value;
      rw.Map(id,
             rw.Emit(OpCode::kParam, std::vector<ValueId>{},
                     ir::Attrs{{"name", name}, {"dtype", n.type.dtype}, {"shape", n.type.shape}}));
    }
  }
  GJ_ASSIGN_OR_RETURN(*graph, std::move(rw).Finish());
  return changed;
}

}  // namespace graphjit::compiler
