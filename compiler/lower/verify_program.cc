#include "compiler/lower/verify_program.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

const char* KindName(KernelKind kind) {
  switch (kind) {
#define GJ_KERNEL_KIND(name, ...) \
  case KernelKind::k##name:       \
    return #name;
#include "compiler/lower/kernel_kinds.def"
#undef GJ_KERNEL_KIND
  }
  return "?";
}

// Checks the expressions of one place (a kernel, or the program's buffer dims and
// offsets: no loop variables there), each shared subtree once.
class ExprChecker {
 public:
  ExprChecker(const Program& program, std::string where, int num_loop_vars)
      : program_(program), where_(std::move(where)), num_loop_vars_(num_loop_vars) {}

  absl::Status Check(const Expr* e, const char* what) {
    if (e == nullptr) return Error(what, "a null expression");
    if (!seen_.insert(e).second) return absl::OkStatus();
    const int num_buffers = static_cast<int>(program_.buffers.size());
    int want = ExpectedOperands(e->kind, e->op);
    switch (e->kind) {
      case ExprKind::kLoopVar:
        if (e->index < 0 || e->index >= num_loop_vars_) {
          return Error(what, absl::StrCat("loop variable i", e->index, " of ", num_loop_vars_));
        }
        break;
      case ExprKind::kSymbol:
        if (e->index < 0 || e->index >= static_cast<int>(program_.symbols.size())) {
          return Error(what, absl::StrCat("symbol s", e->index, " of ", program_.symbols.size()));
        }
        break;
      case ExprKind::kLoad:
        if (e->index < 0 || e->index >= num_buffers) {
          return Error(what, absl::StrCat("a load of buffer b", e->index, " of ", num_buffers));
        }
        want = static_cast<int>(program_.buffers[e->index].dims.size());
        for (const ExprPtr& index : e->operands) {
          if (index != nullptr && index->dtype != ir::DType::kI64) {
            return Error(what, absl::StrCat("a load of b", e->index, " with a ",
                                            ir::DTypeName(index->dtype), " index, expected i64"));
          }
        }
        break;
      case ExprKind::kSelect:
        if (e->operands.size() == 3 && e->operands[0] != nullptr &&
            e->operands[0]->dtype != ir::DType::kBool) {
          return Error(what, "a select whose condition is not bool");
        }
        break;
      default:
        break;
    }
    if (want < 0 || e->operands.size() != static_cast<size_t>(want)) {
      // Described by its fields: printing a malformed expression would read the operands
      // it lacks.
      return Error(what, absl::StrCat("an expression of kind ", static_cast<int>(e->kind), " (op ",
                                      static_cast<int>(e->op), ") has ", e->operands.size(),
                                      " operands, expected ", want));
    }
    for (const ExprPtr& operand : e->operands) GJ_RETURN_IF_ERROR(Check(operand.get(), what));
    return absl::OkStatus();
  }

  absl::Status Error(const char* what, const std::string& message) const {
    return absl::InvalidArgumentError(absl::StrCat(where_, ": ", what, ": ", message));
  }

 private:
  const Program& program_;
  std::string where_;
  int num_loop_vars_;
  absl::flat_hash_set<const Expr*> seen_;
};

absl::Status VerifyBuffers(const Program& p) {
  const int num_buffers = static_cast<int>(p.buffers.size());
  for (int i = 0; i < num_buffers; ++i) {
    const Buffer& b = p.buffers[i];
    const std::string where = absl::StrCat("buffer b", i, " '", b.name, "'");
    ExprChecker check(p, where, /*num_loop_vars=*/0);
    auto error = [&](const std::string& m) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", m));
    };
    if (b.shape.size() != b.dims.size()) {
      return error(absl::StrCat(b.shape.size(), " dims and ", b.dims.size(), " dim expressions"));
    }
    for (const ExprPtr& d : b.dims) GJ_RETURN_IF_ERROR(check.Check(d.get(), "dim"));
    const bool is_arg = b.kind != BufferKind::kTemp;
    if (is_arg && (b.arg_index < 0 || b.arg_index >= p.num_args)) {
      return error(absl::StrCat("arg index ", b.arg_index, ", expected 0..", p.num_args - 1));
    }
    if (!is_arg && b.workspace_offset != nullptr) {
      GJ_RETURN_IF_ERROR(check.Check(b.workspace_offset.get(), "workspace offset"));
      if (b.workspace_offset->dtype != ir::DType::kI64) return error("a non-i64 workspace offset");
    }
    if (b.alias_of != -1) {
      if (b.kind != BufferKind::kOutput || b.alias_of < 0 || b.alias_of >= num_buffers ||
          p.buffers[b.alias_of].kind != BufferKind::kInput) {
        return error(absl::StrCat("written in place of b", b.alias_of,
                                  ", expected an output in place of an input"));
      }
    }
  }
  return absl::OkStatus();
}

// The fields a kernel of its kind reads, null-checked (their expressions are checked
// with the rest).
absl::Status VerifyKindFields(const Program& p, const Kernel& k, const ExprChecker& check) {
  auto need = [&](const ExprPtr& e, const char* field) {
    return e != nullptr ? absl::OkStatus() : check.Error(field, "missing");
  };
  if (k.epilogue != nullptr && k.kind != KernelKind::kMatmul &&
      k.kind != KernelKind::kExternMatmul) {
    return check.Error("epilogue", "on a kernel that is not a generated product");
  }
  if (k.epilogue != nullptr &&
      (UsesLoopVar(k.epilogue.get(), static_cast<int>(k.loops.size()) - 1) ||
       k.epilogue->dtype != p.buffers[k.out].dtype)) {
    return check.Error("epilogue", "reads the k variable, or is not of the output's dtype");
  }
  switch (k.kind) {
    case KernelKind::kPointwise:
      return need(k.value, "value");
    case KernelKind::kReduce:
    case KernelKind::kArgReduce:
    case KernelKind::kScan:
      GJ_RETURN_IF_ERROR(need(k.value, "value"));
      return need(k.reduce_extent, "reduce extent");
    case KernelKind::kAttention:
      GJ_RETURN_IF_ERROR(need(k.values, "values"));
      GJ_RETURN_IF_ERROR(need(k.values_width, "values width"));
      [[fallthrough]];
    case KernelKind::kMatmul:
    case KernelKind::kExternMatmul:
      if (k.epilogue != nullptr && k.kind != KernelKind::kMatmul) {
        return check.Error("epilogue", "on a kernel that is not a generated product");
      }
      GJ_RETURN_IF_ERROR(need(k.lhs, "lhs"));
      GJ_RETURN_IF_ERROR(need(k.rhs, "rhs"));
      if (k.loops.size() < 3) {
        return check.Error("loops", absl::StrCat(k.loops.size(), " loops, expected M, N, K"));
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

absl::Status VerifyKernel(const Program& p, const Kernel& k, int index,
                          absl::flat_hash_set<std::string>* names) {
  const std::string where =
      absl::StrCat("kernel ", index, " '", k.name, "' (", KindName(k.kind), ")");
  ExprChecker check(p, where, NumLoopVars(k));
  if (k.name.empty() || !names->insert(k.name).second) {
    return check.Error("name", "empty or not unique in the program");
  }
  const int num_buffers = static_cast<int>(p.buffers.size());
  std::vector<int> writes = KernelWrites(k);
  for (size_t w = 0; w < writes.size(); ++w) {
    const int b = writes[w];
    if (b == -1 && w > 0) continue;  // an attention's optional scratch outputs
    if (b < 0 || b >= num_buffers) {
      return check.Error("writes", absl::StrCat("buffer b", b, " of ", num_buffers));
    }
    const BufferKind kind = p.buffers[b].kind;
    if (kind == BufferKind::kInput || kind == BufferKind::kParam) {
      return check.Error(
          "writes", absl::StrCat("b", b, " '", p.buffers[b].name, "', an input or a parameter"));
    }
  }
  GJ_RETURN_IF_ERROR(VerifyKindFields(p, k, check));
  for (const ExprPtr& loop : k.loops) {
    GJ_RETURN_IF_ERROR(check.Check(loop.get(), "loop extent"));
    if (loop->dtype != ir::DType::kI64) return check.Error("loop extent", "not i64");
  }
  // Null roots are fields the kind does not use (checked above for the ones it does).
  for (const ExprPtr* root : KernelExprs(k)) {
    if (*root != nullptr) GJ_RETURN_IF_ERROR(check.Check(root->get(), "expression"));
  }
  const size_t out_rank = p.buffers[k.out].dims.size();
  if (!k.store_indices.empty() && k.store_indices.size() != out_rank) {
    return check.Error("store indices", absl::StrCat(k.store_indices.size(), " for b", k.out,
                                                     " of rank ", out_rank));
  }
  if (k.parallel_loop < -1 || k.parallel_loop >= static_cast<int>(k.loops.size())) {
    return check.Error("parallel loop",
                       absl::StrCat(k.parallel_loop, " of ", k.loops.size(), " loops"));
  }
  if (k.range_symbol != -1 &&
      (k.range_symbol < 0 || k.range_symbol + 1 >= static_cast<int>(p.symbols.size()))) {
    return check.Error("range symbols",
                       absl::StrCat("s", k.range_symbol, " and the next of ", p.symbols.size()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyProgram(const Program& program) {
  if (program.num_args < 0) {
    return absl::InvalidArgumentError(absl::StrCat("num_args ", program.num_args));
  }
  GJ_RETURN_IF_ERROR(VerifyBuffers(program));
  absl::flat_hash_set<std::string> names;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    GJ_RETURN_IF_ERROR(VerifyKernel(program, program.kernels[k], static_cast<int>(k), &names));
  }
  return absl::OkStatus();
}

}  // namespace graphjit::compiler
