#include "compiler/lower/kernel_unit.h"

#include <algorithm>
#include <cstring>
#include <functional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphjit::compiler {
namespace {

// Renumbers buffers and symbols by first use while copying expressions.
class Canonicalizer {
 public:
  ExprPtr Map(const ExprPtr& e) {
    if (e == nullptr) return nullptr;
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    Expr copy = *e;
    if (e->kind == ExprKind::kLoad) copy.index = BufferIndex(e->index);
    if (e->kind == ExprKind::kSymbol) copy.index = SymbolIndex(e->index);
    for (ExprPtr& operand : copy.operands) operand = Map(operand);
    ExprPtr mapped = std::make_shared<const Expr>(std::move(copy));
    memo_[e.get()] = mapped;
    return mapped;
  }

  int BufferIndex(int b) {
    auto [it, inserted] = buffer_index_.try_emplace(b, static_cast<int>(buffers_.size()));
    if (inserted) buffers_.push_back(b);
    return it->second;
  }
  int SymbolIndex(int s) {
    auto [it, inserted] = symbol_index_.try_emplace(s, static_cast<int>(symbols_.size()));
    if (inserted) symbols_.push_back(s);
    return it->second;
  }

  std::vector<int>& buffers() { return buffers_; }
  std::vector<int>& symbols() { return symbols_; }

 private:
  absl::flat_hash_map<const Expr*, ExprPtr> memo_;
  absl::flat_hash_map<int, int> buffer_index_, symbol_index_;
  std::vector<int> buffers_, symbols_;
};

// Every field codegen reads, with doubles as their bits (ExprToString rounds them).
void AppendExpr(const ExprPtr& e, std::string* out) {
  if (e == nullptr) {
    out->append("_");
    return;
  }
  // Ops by name, not number: the ScalarOp list is generated and may be reordered, and a
  // cached object must never be found under another op's key.
  absl::StrAppend(out, "(", static_cast<int>(e->kind), ":", ir::DTypeName(e->dtype), ":",
                  ScalarOpName(e->op), ":", e->index, ":");
  if (e->kind == ExprKind::kConst) {
    uint64_t bits;
    std::memcpy(&bits, &e->f_value, sizeof(bits));
    absl::StrAppend(out, absl::Hex(bits), ":", e->i_value);
  }
  for (const ExprPtr& operand : e->operands) AppendExpr(operand, out);
  out->append(")");
}

void AppendExprs(const char* what, const std::vector<ExprPtr>& es, std::string* out) {
  absl::StrAppend(out, what, "[");
  for (const ExprPtr& e : es) AppendExpr(e, out);
  out->append("]\n");
}

}  // namespace

KernelUnit MakeKernelUnit(const Program& program, int kernel) {
  const Kernel& k = program.kernels[kernel];
  Canonicalizer c;
  Kernel unit_kernel = k;
  unit_kernel.name = "k";
  // The written buffers first (out, then any others), then operands in the order the
  // kernel reads them.
  for (int* b : MutableKernelWrites(&unit_kernel)) *b = c.BufferIndex(*b);
  for (ExprPtr* e : MutableKernelExprs(&unit_kernel)) *e = c.Map(*e);
  KernelUnit unit;
  // Buffer dims may mention symbols the body does not: map them all before the counts
  // are final (a dims expression never adds buffers).
  std::vector<std::vector<ExprPtr>> dims;
  for (size_t i = 0; i < c.buffers().size(); ++i) {
    std::vector<ExprPtr> d;
    for (const ExprPtr& e : program.buffers[c.buffers()[i]].dims) d.push_back(c.Map(e));
    dims.push_back(std::move(d));
  }
  unit.buffers = c.buffers();
  // Program buffers are pairwise disjoint (temps live at one kernel have distinct
  // workspace slots, args are not in the workspace) except an output and the input it is
  // written in place of.
  unit_kernel.out_exclusive = true;
  for (int b : KernelWrites(k)) {
    const int donor = program.buffers[b].alias_of;
    if (std::find(unit.buffers.begin(), unit.buffers.end(), donor) != unit.buffers.end()) {
      unit_kernel.out_exclusive = false;
    }
  }
  const std::vector<int> writes = KernelWrites(unit_kernel);
  unit.symbols = c.symbols();
  Program& p = unit.program;
  p.name = "kernel";
  for (size_t j = 0; j < unit.symbols.size(); ++j) p.symbols.push_back(absl::StrCat("s", j));
  for (size_t i = 0; i < unit.buffers.size(); ++i) {
    const Buffer& from = program.buffers[unit.buffers[i]];
    Buffer b;
    b.name = absl::StrCat("b", i);
    b.dtype = from.dtype;
    b.dims = std::move(dims[i]);
    b.kind = std::find(writes.begin(), writes.end(), static_cast<int>(i)) != writes.end()
                 ? BufferKind::kOutput
                 : BufferKind::kInput;
    b.arg_index = static_cast<int>(i);
    // The input an output is written in place of, when the kernel touches it (codegen
    // keeps accesses that may overlap the output in order).
    const auto donor = std::find(unit.buffers.begin(), unit.buffers.end(),
                                 program.buffers[unit.buffers[i]].alias_of);
    if (from.alias_of >= 0 && donor != unit.buffers.end()) {
      b.alias_of = static_cast<int>(donor - unit.buffers.begin());
    }
    p.buffers.push_back(std::move(b));
  }
  // The parallel loop's range comes after the kernel's own symbols (KernelSet passes it).
  unit_kernel.parallel_work = nullptr;  // over the program's symbols; the host reads k's
  unit_kernel.parallel_align = 1;
  if (unit_kernel.parallel_loop >= 0) {
    unit_kernel.range_symbol = static_cast<int>(p.symbols.size());
    p.symbols.push_back("begin");
    p.symbols.push_back("end");
  }
  p.num_args = static_cast<int>(p.buffers.size());
  p.workspace_bytes = ir::SymExpr(0);
  p.kernels.push_back(std::move(unit_kernel));

  std::string& t = unit.text;
  const Kernel& u = p.kernels[0];
  absl::StrAppend(&t, "kernel-unit-v3 symbols=", p.symbols.size(), "\n");
  for (const Buffer& b : p.buffers) {
    absl::StrAppend(&t, "buffer ", b.name, " ", ir::DTypeName(b.dtype),
                    b.kind == BufferKind::kOutput ? " out " : " in ");
    if (b.alias_of >= 0) absl::StrAppend(&t, "alias_of=b", b.alias_of, " ");
    AppendExprs("dims", b.dims, &t);
  }
  absl::StrAppend(&t, "kind=", static_cast<int>(u.kind), " out=", u.out,
                  " combine=", ScalarOpName(u.combine), " order=", static_cast<int>(u.order),
                  " transpose_rhs=", u.transpose_rhs, " out_exclusive=", u.out_exclusive, "\n");
  AppendExprs("loops", u.loops, &t);
  AppendExprs("store", u.store_indices, &t);
  AppendExprs("value", {u.value}, &t);
  AppendExprs("reduce", {u.reduce_extent, u.finish_scale}, &t);
  AppendExprs("matmul", {u.lhs, u.rhs}, &t);
  AppendExprs("epilogue", {u.epilogue}, &t);
  AppendExprs("attention", {u.values, u.values_width}, &t);
  absl::StrAppend(&t, "scores=", u.scores, " sum_out=", u.sum_out, "\n");
  absl::StrAppend(&t, "parallel=", u.parallel_loop, " range=", u.range_symbol, "\n");
  AppendExprs("sum", u.sum_indices, &t);
  return unit;
}

}  // namespace graphjit::compiler
