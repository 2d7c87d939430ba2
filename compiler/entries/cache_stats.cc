#include "compiler/entries/cache_stats.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace graphjit::compiler::entries {

std::string CacheStats::ToString() const {
  return absl::StrFormat(
      "calls=%d hits=%d waits=%d compiles=%d shared=%d failed=%d rejected=%d evictions=%d "
      "peak_entries=%d "
      "interpreted=%d background=%d dropped=%d reoptimized=%d kept=%d (%.3fs) max_stall=%.4fs "
      "kernels compiled=%d reused=%d loaded=%d "
      "compile_s=%.3f (trace %.3f passes %.3f lower %.3f ir %.3f opt %.3f codegen %.3f) "
      "real=%d padded=%d padding=%.1f%%",
      calls, hits, waits, compiles, shared, failed_compiles, rejected, evictions, peak_entries,
      interpreted, background_compiles, dropped_compiles, reoptimized, reoptimize_kept,
      reoptimize_seconds, max_stall_seconds, kernels_compiled, kernels_reused, kernels_loaded,
      compile_seconds, trace_seconds, phases.passes, phases.lower, phases.ir_build, phases.optimize,
      phases.codegen, real_elements, padded_elements, 100.0 * padding_overhead());
}

CacheStats& CacheStats::operator+=(const CacheStats& o) {
  calls += o.calls;
  hits += o.hits;
  waits += o.waits;
  compiles += o.compiles;
  shared += o.shared;
  failed_compiles += o.failed_compiles;
  rejected += o.rejected;
  evictions += o.evictions;
  interpreted += o.interpreted;
  background_compiles += o.background_compiles;
  dropped_compiles += o.dropped_compiles;
  reoptimized += o.reoptimized;
  reoptimize_kept += o.reoptimize_kept;
  reoptimize_seconds += o.reoptimize_seconds;
  max_stall_seconds = std::max(max_stall_seconds, o.max_stall_seconds);
  peak_entries += o.peak_entries;
  kernels_compiled += o.kernels_compiled;
  kernels_reused += o.kernels_reused;
  kernels_loaded += o.kernels_loaded;
  compile_seconds += o.compile_seconds;
  trace_seconds += o.trace_seconds;
  phases += o.phases;
  real_elements += o.real_elements;
  padded_elements += o.padded_elements;
  return *this;
}

}  // namespace graphjit::compiler::entries
