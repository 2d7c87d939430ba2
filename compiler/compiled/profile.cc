#include "compiler/compiled/profile.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/analysis/bytes_moved.h"
#include "compiler/compiled/compiled_graph.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

int64_t Bytes(const ir::SymExpr& e, const ir::Bindings& symbols) {
  absl::StatusOr<int64_t> v = e.Evaluate(symbols);
  return v.ok() ? *v : -1;  // -1: a symbol the call did not bind (cannot happen for Run's)
}

// Rows with names and bytes; seconds left 0.
KernelProfile EmptyProfile(const Program& program, int calls, const ir::Bindings& symbols) {
  KernelProfile profile;
  profile.graph = program.name;
  profile.calls = calls;
  const TrafficReport traffic = ProgramTraffic(program);
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    KernelProfileRow row;
    row.name = program.kernels[k].name;
    row.bytes_read = Bytes(traffic.items[k].bytes_read, symbols);
    row.bytes_written = Bytes(traffic.items[k].bytes_written, symbols);
    profile.kernels.push_back(row);
  }
  return profile;
}

}  // namespace

double KernelProfileRow::gb_per_second() const {
  return seconds > 0 ? static_cast<double>(bytes_read + bytes_written) / seconds * 1e-9 : 0;
}

double KernelProfile::seconds() const {
  double total = 0;
  for (const KernelProfileRow& row : kernels) total += row.seconds;
  return total;
}

absl::StatusOr<KernelProfile> ProfileKernels(const CompiledGraph& graph,
                                             const runtime::TensorMap& inputs,
                                             const ir::Bindings& bindings, int calls, int warmup) {
  if (calls < 1) {
    return absl::InvalidArgumentError(absl::StrCat("profile: calls must be >= 1, got ", calls));
  }
  const size_t n = graph.program().kernels.size();
  std::vector<std::vector<double>> samples(n);
  ir::Bindings symbols;
  for (int c = 0; c < warmup + calls; ++c) {
    std::vector<double> seconds;
    GJ_RETURN_IF_ERROR(graph.RunTimed(inputs, bindings, &seconds, &symbols).status());
    if (c < warmup) continue;
    for (size_t k = 0; k < n; ++k) samples[k].push_back(seconds[k]);
  }
  KernelProfile profile = EmptyProfile(graph.program(), calls, symbols);
  for (size_t k = 0; k < n; ++k) profile.kernels[k].seconds = ir::Median(samples[k]);
  return profile;
}

KernelProfile MakeProfile(const Program& program, const std::vector<double>& total_seconds,
                          int calls, const ir::Bindings& symbols) {
  KernelProfile profile = EmptyProfile(program, calls, symbols);
  for (size_t k = 0; k < profile.kernels.size() && k < total_seconds.size(); ++k) {
    profile.kernels[k].seconds = calls > 0 ? total_seconds[k] / calls : 0;
  }
  return profile;
}

std::string FormatProfile(const KernelProfile& profile) {
  const double total = profile.seconds();
  std::string out =
      absl::StrFormat("# profile of %s: %d kernels, %d calls, %.2f us per call\n", profile.graph,
                      profile.kernels.size(), profile.calls, total * 1e6);
  absl::StrAppendFormat(&out, "# %-24s %10s %12s %12s %8s %7s\n", "kernel", "us/call", "bytes read",
                        "written", "GB/s", "share");
  for (const KernelProfileRow& row : profile.kernels) {
    absl::StrAppendFormat(&out, "  %-24s %10.3f %12d %12d %8.1f %6.1f%%\n", row.name,
                          row.seconds * 1e6, row.bytes_read, row.bytes_written, row.gb_per_second(),
                          total > 0 ? 100 * row.seconds / total : 0);
  }
  return out;
}

}  // namespace graphjit::compiler
