#include "compiler/lower/buffer_plan.h"

#include <algorithm>

#include "compiler/lower/index_exprs.h"
#include "ir/check.h"

namespace graphjit::compiler {

void PlanWorkspace(Program* program) {
  const int num_buffers = static_cast<int>(program->buffers.size());
  std::vector<int> def_kernel(num_buffers, -1), last_use(num_buffers, -1);
  std::vector<bool> kept(num_buffers, false);  // constants across calls: a slot alone
  for (int i = 0; i < static_cast<int>(program->kernels.size()); ++i) {
    const Kernel& k = program->kernels[i];
    for (int b : KernelWrites(k)) {
      GJ_CHECK(b >= 0 && b < num_buffers) << "kernel " << k.name << " writes b" << b;
      if (def_kernel[b] < 0) def_kernel[b] = i;
      if (k.once) kept[b] = true;
    }
    for (int b : KernelLoads(k)) {
      GJ_CHECK(b >= 0 && b < num_buffers) << "kernel " << k.name << " loads b" << b;
      last_use[b] = i;  // kernels in order: the last one seen is the last use
    }
  }
  struct Slot {
    ir::SymExpr size, offset;
    int free_after;
  };
  std::vector<Slot> slots;
  ir::SymExpr total = kWorkspaceHeaderBytes;
  bool any = false;
  for (size_t b = 0; b < program->buffers.size(); ++b) {
    Buffer& buf = program->buffers[b];
    if (buf.kind != BufferKind::kTemp) continue;
    const ir::SymExpr bytes = ir::NumElements(buf.shape) * ir::DTypeSize(buf.dtype);
    const ir::SymExpr size = (bytes + 63) / 64 * 64;
    if (def_kernel[b] < 0 && last_use[b] < 0) {
      buf.workspace_offset = ConstI(0);
      continue;
    }
    const int def = std::max(def_kernel[b], 0), last = std::max(last_use[b], def);
    any = true;
    if (kept[b]) {  // never free, and taken from no one
      buf.workspace_offset = SymToExpr(total, program->symbols);
      total = total + size;
      continue;
    }
    Slot* chosen = nullptr;
    for (Slot& s : slots) {
      if (s.free_after < def && s.size == size) {
        chosen = &s;
        break;
      }
    }
    if (chosen == nullptr) {
      slots.push_back({size, total, last});
      total = total + size;
      chosen = &slots.back();
    }
    chosen->free_after = last;
    buf.workspace_offset = SymToExpr(chosen->offset, program->symbols);
  }
  program->workspace_bytes = any ? total : ir::SymExpr(0);
}

}  // namespace graphjit::compiler
