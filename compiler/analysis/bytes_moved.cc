#include "compiler/analysis/bytes_moved.h"

#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "compiler/analysis/flops.h"

namespace graphjit::compiler {
namespace {

ir::SymExpr Bytes(const ir::Shape& shape, ir::DType dtype) {
  return ir::NumElements(shape) * ir::DTypeSize(dtype);
}

// An i64 index expression (a loop extent) as a SymExpr over the program's symbols, or
// nullopt for forms lowering does not use in extents.
std::optional<ir::SymExpr> ToSym(const ExprPtr& e, const Program& p) {
  switch (e->kind) {
    case ExprKind::kConst:
      return ir::SymExpr(e->i_value);
    case ExprKind::kSymbol:
      return ir::SymExpr::Symbol(p.symbols[e->index]);
    case ExprKind::kOp: {
      if (e->operands.size() != 2) return std::nullopt;
      std::optional<ir::SymExpr> a = ToSym(e->operands[0], p), b = ToSym(e->operands[1], p);
      if (!a || !b) return std::nullopt;
      switch (e->op) {
        case ScalarOp::kAdd:
          return *a + *b;
        case ScalarOp::kSub:
          return *a - *b;
        case ScalarOp::kMul:
          return *a * *b;
        case ScalarOp::kDiv:
          return ir::SymExpr::FloorDiv(*a, *b);
        case ScalarOp::kMod:
          return ir::SymExpr::Mod(*a, *b);
        case ScalarOp::kMax:
          return ir::SymExpr::Max(*a, *b);
        case ScalarOp::kMin:
          return ir::SymExpr::Min(*a, *b);
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

// The product of `loops[0, count)`, or nullopt.
std::optional<ir::SymExpr> LoopProduct(const Kernel& k, size_t count, const Program& p) {
  ir::SymExpr product = 1;
  for (size_t i = 0; i < count && i < k.loops.size(); ++i) {
    std::optional<ir::SymExpr> extent = ToSym(k.loops[i], p);
    if (!extent) return std::nullopt;
    product = product * *extent;
  }
  return product;
}

void AddTotals(TrafficReport* report) {
  for (const Traffic& t : report->items) {
    report->bytes_read = report->bytes_read + t.bytes_read;
    report->bytes_written = report->bytes_written + t.bytes_written;
    report->flops = report->flops + t.flops;
  }
}

}  // namespace

TrafficReport ProgramTraffic(const Program& program) {
  TrafficReport report;
  for (const Kernel& k : program.kernels) {
    std::set<int> loaded = KernelLoads(k);
    if (k.kind == KernelKind::kAttention) loaded.erase(k.scores);
    Traffic t;
    t.name = k.name;
    for (int b : loaded) {
      t.bytes_read = t.bytes_read + Bytes(program.buffers[b].shape, program.buffers[b].dtype);
    }
    const Buffer& out = program.buffers[k.out];
    t.bytes_written = Bytes(out.shape, out.dtype);
    // A pointwise kernel with explicit store indices (kv_write's new rows) writes only
    // its loop extent, not the whole buffer.
    if (k.kind == KernelKind::kPointwise && !k.store_indices.empty()) {
      if (std::optional<ir::SymExpr> n = LoopProduct(k, k.loops.size(), program)) {
        t.bytes_written = *n * ir::DTypeSize(out.dtype);
      }
    }
    if (k.kind == KernelKind::kAttention) {
      const Buffer& sum = program.buffers[k.sum_out];
      t.bytes_written = t.bytes_written + Bytes(sum.shape, sum.dtype);
      // Loops are batch.., M, N, D: the scores' multiply-adds; P @ V's are batch.., M, N
      // times the values' width.
      std::optional<ir::SymExpr> scores = LoopProduct(k, k.loops.size(), program);
      std::optional<ir::SymExpr> rows = LoopProduct(k, k.loops.size() - 1, program);
      std::optional<ir::SymExpr> width = ToSym(k.values_width, program);
      if (scores && rows && width) t.flops = 2 * *scores + 2 * *rows * *width;
    }
    if (k.kind == KernelKind::kMatmul || k.kind == KernelKind::kExternMatmul) {
      // Loops are batch.., M, N, K: their product is the multiply-adds.
      if (std::optional<ir::SymExpr> n = LoopProduct(k, k.loops.size(), program)) {
        t.flops = 2 * *n;
      }
    }
    report.items.push_back(std::move(t));
  }
  AddTotals(&report);
  return report;
}

TrafficReport GraphTraffic(const ir::Graph& graph) {
  TrafficReport report;
  for (ir::ValueId id = 0; id < graph.num_nodes(); ++id) {
    const ir::Node& n = graph.node(id);
    if (ir::IsSourceOp(n.op)) continue;
    Traffic t;
    t.name = absl::StrCat("%", id, " (", ir::OpName(n.op), ")");
    for (ir::ValueId v : n.operands) {
      t.bytes_read = t.bytes_read + Bytes(graph.type(v).shape, graph.type(v).dtype);
    }
    t.bytes_written = Bytes(n.type.shape, n.type.dtype);
    t.flops = NodeFlops(graph, id);
    report.items.push_back(std::move(t));
  }
  AddTotals(&report);
  return report;
}

}  // namespace graphjit::compiler
