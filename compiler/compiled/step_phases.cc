#include "compiler/compiled/step_phases.h"

#include <algorithm>
#include <optional>
#include <string>

#include "ir/check.h"

namespace graphjit::compiler {
namespace {

// A buffer's memory: an arg (outputs in place of a donated input are that input), or a
// workspace byte range [base + begin, base + end) where base is an offset over symbols
// (as printed; empty: 0) and the range is unknown when the size depends on symbols.
struct Memory {
  int arg_buffer = -1;
  std::string base;
  bool base_nonnegative = false;  // for every value of the symbols (sizes are >= 0)
  std::optional<int64_t> begin, end;
};

// Whether `e` is built of symbols and non-negative constants by +, * and max: never
// negative, since program symbols are sizes and positions.
bool NonNegative(const Expr* e) {
  switch (e->kind) {
    case ExprKind::kConst:
      return e->i_value >= 0;
    case ExprKind::kSymbol:
      return true;
    case ExprKind::kOp:
      if (e->op != ScalarOp::kAdd && e->op != ScalarOp::kMul && e->op != ScalarOp::kMax) {
        return false;
      }
      for (const ExprPtr& operand : e->operands) {
        if (!NonNegative(operand.get())) return false;
      }
      return true;
    default:
      return false;
  }
}

Memory MemoryOf(const Program& program, int b) {
  const Buffer& buffer = program.buffers[b];
  Memory m;
  if (buffer.kind != BufferKind::kTemp) {
    m.arg_buffer = buffer.alias_of >= 0 ? buffer.alias_of : b;
    return m;
  }
  const ExprPtr& offset = buffer.workspace_offset;
  if (offset == nullptr) return m;
  // The workspace plan places temps after symbolic ones at "that size + a constant": temps
  // with the same symbolic part compare by their constants.
  int64_t constant = 0;
  if (offset->kind == ExprKind::kConst) {
    constant = offset->i_value;
  } else if (offset->kind == ExprKind::kOp && offset->op == ScalarOp::kAdd &&
             offset->operands.size() == 2 && offset->operands[1]->kind == ExprKind::kConst) {
    m.base = ExprToString(offset->operands[0]);
    m.base_nonnegative = NonNegative(offset->operands[0].get());
    constant = offset->operands[1]->i_value;
  } else {
    m.base = ExprToString(offset);
    m.base_nonnegative = NonNegative(offset.get());
  }
  int64_t bytes = ir::DTypeSize(buffer.dtype);
  for (const ExprPtr& d : buffer.dims) {
    if (d == nullptr || d->kind != ExprKind::kConst) return m;
    bytes *= d->i_value;
  }
  m.begin = constant;
  m.end = constant + bytes;
  return m;
}

bool MayOverlap(const Memory& a, const Memory& b) {
  if (a.arg_buffer >= 0 || b.arg_buffer >= 0) return a.arg_buffer == b.arg_buffer;
  if (!a.begin || !b.begin) return true;
  if (a.base == b.base) return *a.begin < *b.end && *b.begin < *a.end;
  // A constant range ending at or below c is apart from one at (a sum of sizes) + c.
  if (a.base.empty() && b.base_nonnegative) return *a.end > *b.begin;
  if (b.base.empty() && a.base_nonnegative) return *b.end > *a.begin;
  return true;
}

// Whether a kernel writing `writes` conflicts with one touching `touched`.
bool Conflict(const std::vector<Memory>& writes, const std::vector<Memory>& touched) {
  for (const Memory& w : writes) {
    for (const Memory& t : touched) {
      if (MayOverlap(w, t)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<int> StepPhases(const Program& program, const std::vector<std::vector<int>>& touched) {
  GJ_CHECK(touched.size() == program.kernels.size()) << "StepPhases: one buffer list per kernel";
  std::vector<std::vector<Memory>> writes(touched.size()), touches(touched.size());
  for (size_t k = 0; k < touched.size(); ++k) {
    for (int b : KernelWrites(program.kernels[k])) {
      if (b >= 0) writes[k].push_back(MemoryOf(program, b));
    }
    for (int b : touched[k]) touches[k].push_back(MemoryOf(program, b));
    // A kernel's writes are touched too, whether or not its unit lists them.
    touches[k].insert(touches[k].end(), writes[k].begin(), writes[k].end());
  }
  std::vector<int> phase(touched.size(), 0);
  size_t first = 0;  // the current phase's first kernel
  for (size_t k = 1; k < touched.size(); ++k) {
    bool joins = true;
    for (size_t j = first; j < k && joins; ++j) {
      joins = !Conflict(writes[j], touches[k]) && !Conflict(writes[k], touches[j]);
    }
    phase[k] = joins ? phase[k - 1] : phase[k - 1] + 1;
    if (!joins) first = k;
  }
  return phase;
}

}  // namespace graphjit::compiler
