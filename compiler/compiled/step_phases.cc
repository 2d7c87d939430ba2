#include "compiler/compiled/step_phases.h"

#include <algorithm>
#include <optional>

#include "ir/check.h"

namespace graphjit::compiler {
namespace {

// A buffer's memory: an arg (outputs in place of a donated input are that input), or a
// workspace byte range, unknown when it depends on symbols.
struct Memory {
  int arg_buffer = -1;
  std::optional<int64_t> begin, end;
};

Memory MemoryOf(const Program& program, int b) {
  const Buffer& buffer = program.buffers[b];
  Memory m;
  if (buffer.kind != BufferKind::kTemp) {
    m.arg_buffer = buffer.alias_of >= 0 ? buffer.alias_of : b;
    return m;
  }
  if (buffer.workspace_offset == nullptr || buffer.workspace_offset->kind != ExprKind::kConst) {
    return m;
  }
  int64_t bytes = ir::DTypeSize(buffer.dtype);
  for (const ExprPtr& d : buffer.dims) {
    if (d == nullptr || d->kind != ExprKind::kConst) return m;
    bytes *= d->i_value;
  }
  m.begin = buffer.workspace_offset->i_value;
  m.end = *m.begin + bytes;
  return m;
}

bool MayOverlap(const Memory& a, const Memory& b) {
  if (a.arg_buffer >= 0 || b.arg_buffer >= 0) return a.arg_buffer == b.arg_buffer;
  if (!a.begin || !b.begin) return true;
  return *a.begin < *b.end && *b.begin < *a.end;
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
