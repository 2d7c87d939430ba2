#include "compiler/lower/buffer_plan.h"

#include <algorithm>

#include "compiler/lower/index_exprs.h"
#include "ir/check.h"

namespace graphjit::compiler {

void PlanWorkspace(const std::vector<int>& def_kernel, const std::vector<int>& last_use,
                   Program* program) {
  GJ_CHECK(def_kernel.size() == program->buffers.size() &&
           last_use.size() == program->buffers.size())
      << "one definition and last use per buffer";
  struct Slot {
    ir::SymExpr size, offset;
    int free_after;
  };
  std::vector<Slot> slots;
  ir::SymExpr total = 0;
  for (size_t b = 0; b < program->buffers.size(); ++b) {
    Buffer& buf = program->buffers[b];
    if (buf.kind != BufferKind::kTemp) continue;
    const ir::SymExpr bytes = ir::NumElements(buf.shape) * ir::DTypeSize(buf.dtype);
    const ir::SymExpr size = (bytes + 63) / 64 * 64;
    const int def = def_kernel[b], last = std::max(last_use[b], def);
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
  program->workspace_bytes = total;
}

}  // namespace graphjit::compiler
