#include "compiler/lower/buffer_plan.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/casts.h"
#include "absl/strings/str_cat.h"
#include "compiler/lower/index_exprs.h"
#include "ir/check.h"

namespace graphjit::compiler {
namespace {

// A temp that takes space: its bytes (a 64-byte multiple), the kernels from the first to
// the last that touch it, and for a temp once kernels fill, what they store.
struct Live {
  int buffer;
  ir::SymExpr size;
  int def, last;
  std::string constants;
};

// Two lives may not share bytes when their kernel ranges meet or touch: a temp read last
// by kernel i is not reused by kernel i + 1, which could otherwise have run beside i in
// one phase (compiler/compiled/step_phases.h) and now would have to wait for it.
bool Overlap(const Live& a, const Live& b) { return a.def <= b.last + 1 && b.def <= a.last + 1; }

// Offsets from 0 for lives of constant sizes, largest first, each at the smallest gap
// between the placed lives it overlaps that fits it, or above them all ("greedy by size",
// as TFLite's arena planner does: a CNN's activations shrink layer by layer, so temps of
// equal sizes rarely follow each other). Returns the region's bytes.
int64_t PlaceBySize(std::vector<Live> lives, std::vector<int64_t>* offsets) {
  std::stable_sort(lives.begin(), lives.end(), [](const Live& a, const Live& b) {
    return *a.size.AsConstant() > *b.size.AsConstant();
  });
  struct Placed {
    const Live* live;
    int64_t begin, end;
  };
  std::vector<Placed> placed;
  int64_t total = 0;
  for (const Live& l : lives) {
    const int64_t size = *l.size.AsConstant();
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (const Placed& p : placed) {
      if (Overlap(l, *p.live)) taken.push_back({p.begin, p.end});
    }
    std::sort(taken.begin(), taken.end());
    int64_t at = 0, best = -1, best_gap = 0;
    for (const auto& [begin, end] : taken) {
      if (begin - at >= size && (best < 0 || begin - at < best_gap)) {
        best = at;
        best_gap = begin - at;
      }
      at = std::max(at, end);
    }
    if (best < 0) best = at;
    placed.push_back({&l, best, best + size});
    (*offsets)[l.buffer] = best;
    total = std::max(total, best + size);
  }
  return total;
}

// Appends what once kernel `k` stores, where, to `s`: temps of one shape whose fills
// store the same constants at the same elements may share bytes, as each one's other
// writers store only elsewhere (constant_fills.h) and its fills rewrite what is there.
void AppendFill(const Kernel& k, std::string* s) {
  absl::StrAppend(s, "|", static_cast<int>(k.kind));
  for (const std::vector<ExprPtr>* list : {&k.loops, &k.store_indices}) {
    for (const ExprPtr& e : *list) absl::StrAppend(s, ";", ExprToString(e));
    absl::StrAppend(s, "/");
  }
  // Printed expressions round float constants to 6 digits: the value's bits instead.
  const Expr* v = k.value.get();
  if (v != nullptr && v->kind == ExprKind::kConst && ir::IsFloat(v->dtype)) {
    absl::StrAppend(s, ir::DTypeName(v->dtype), ":",
                    absl::Hex(absl::bit_cast<uint64_t>(v->f_value)));
  } else {
    absl::StrAppend(s, ExprToString(k.value));
  }
}

}  // namespace

void PlanWorkspace(Program* program) {
  const int num_buffers = static_cast<int>(program->buffers.size());
  // A temp lives from the first kernel that touches it to the last one (a write after
  // its last read, or a read before its first write, keeps it alive too).
  std::vector<int> def_kernel(num_buffers, -1), last_use(num_buffers, -1);
  // What once kernels store in each temp (constants across calls; empty: none).
  std::vector<std::string> fills(num_buffers);
  auto touch = [&](int b, int i) {
    if (def_kernel[b] < 0) def_kernel[b] = i;
    last_use[b] = i;  // kernels in order: the last one seen is the last use
  };
  for (int i = 0; i < static_cast<int>(program->kernels.size()); ++i) {
    const Kernel& k = program->kernels[i];
    for (int b : KernelWrites(k)) {
      if (b < 0) continue;  // an attention kernel without its scratch buffers
      GJ_CHECK(b < num_buffers) << "kernel " << k.name << " writes b" << b;
      touch(b, i);
      if (k.once) AppendFill(k, &fills[b]);
    }
    for (int b : KernelLoads(k)) {
      GJ_CHECK(b >= 0 && b < num_buffers) << "kernel " << k.name << " loads b" << b;
      touch(b, i);
    }
  }
  // Temps of constant sizes are placed by size in one region after the header. Temps
  // once kernels fill and temps of symbolic sizes follow in slots, which a temp shares
  // only with temps of the same size expression (sizes over symbols cannot be compared)
  // and the same constants, whose lives do not overlap its own.
  std::vector<Live> by_size, by_slot;
  for (int b = 0; b < num_buffers; ++b) {
    Buffer& buf = program->buffers[b];
    if (buf.kind != BufferKind::kTemp) continue;
    buf.workspace_offset = ConstI(0);
    if (def_kernel[b] < 0) continue;  // no kernel touches it: no space
    const ir::SymExpr bytes = ir::NumElements(buf.shape) * ir::DTypeSize(buf.dtype);
    const bool kept = !fills[b].empty();
    Live live{
        b, (bytes + 63) / 64 * 64, def_kernel[b], last_use[b],
        kept ? absl::StrCat(ir::DTypeName(buf.dtype), ir::ShapeToString(buf.shape), fills[b]) : ""};
    (live.size.IsConstant() && !kept ? by_size : by_slot).push_back(std::move(live));
  }
  if (by_size.empty() && by_slot.empty()) {
    program->workspace_bytes = ir::SymExpr(0);
    return;
  }
  std::vector<int64_t> offsets(num_buffers, 0);
  ir::SymExpr total = kWorkspaceHeaderBytes + PlaceBySize(by_size, &offsets);
  for (const Live& l : by_size) {
    program->buffers[l.buffer].workspace_offset = ConstI(kWorkspaceHeaderBytes + offsets[l.buffer]);
  }
  struct Slot {
    ir::SymExpr offset;
    Live latest;  // the last live given to it
  };
  std::vector<Slot> slots;
  for (const Live& l : by_slot) {
    // After the slot's latest live (temps come in buffer order, not in order of life).
    auto fits = [&](const Slot& s) {
      return s.latest.size == l.size && s.latest.constants == l.constants &&
             s.latest.last + 1 < l.def;
    };
    auto it = std::find_if(slots.begin(), slots.end(), fits);
    if (it == slots.end()) {
      slots.push_back({total, l});
      total = total + l.size;
      it = slots.end() - 1;
    }
    it->latest = l;
    program->buffers[l.buffer].workspace_offset = SymToExpr(it->offset, program->symbols);
  }
  program->workspace_bytes = total;
}

}  // namespace graphjit::compiler
