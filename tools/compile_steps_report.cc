#include "tools/compile_steps_report.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/native_code.h"
#include "compiler/orc/compile_steps.h"
#include "ir/clock.h"
#include "ir/status_macros.h"

namespace graphjit::tools {
namespace {

using compiler::CompileSteps;

// The modules of a --stage=llvm text: each begins with its `; ModuleID` line.
std::vector<std::string> SplitModules(const std::string& text) {
  std::vector<std::string> modules;
  size_t start = text.find("; ModuleID");
  while (start != std::string::npos) {
    size_t next = text.find("; ModuleID", start + 1);
    modules.push_back(text.substr(start, next == std::string::npos ? next : next - start));
    start = next;
  }
  return modules;
}

// Per step, the median over the runs; the pass lists of the run with the median total.
CompileSteps MedianSteps(const std::vector<CompileSteps>& runs) {
  auto median = [&](double CompileSteps::* field) {
    std::vector<double> values;
    for (const CompileSteps& r : runs) values.push_back(r.*field);
    return ir::Median(values);
  };
  std::vector<double> totals;
  for (const CompileSteps& r : runs) totals.push_back(r.total());
  const double total = ir::Median(totals);
  CompileSteps steps =
      *std::min_element(runs.begin(), runs.end(), [&](const auto& a, const auto& b) {
        return std::abs(a.total() - total) < std::abs(b.total() - total);
      });
  for (double CompileSteps::* field :
       {&CompileSteps::parse, &CompileSteps::target_machine, &CompileSteps::pass_setup,
        &CompileSteps::ir_passes, &CompileSteps::isel, &CompileSteps::regalloc,
        &CompileSteps::other_codegen, &CompileSteps::link}) {
    steps.*field = median(field);
  }
  return steps;
}

std::string TopPasses(const std::vector<std::pair<std::string, double>>& passes, int top) {
  std::vector<std::string> parts;
  for (int i = 0; i < std::min<int>(top, passes.size()); ++i) {
    parts.push_back(absl::StrFormat("%s %.2f", passes[i].first, passes[i].second * 1e3));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

absl::StatusOr<std::string> CompileStepsReport(const std::string& llvm_ir,
                                               const std::vector<std::string>& labels,
                                               compiler::CodeTier tier, int runs, int top) {
  if (runs < 1) return absl::InvalidArgumentError(absl::StrCat("runs must be >= 1, got ", runs));
  if (top < 0) return absl::InvalidArgumentError(absl::StrCat("top must be >= 0, got ", top));
  std::vector<std::string> modules = SplitModules(llvm_ir);
  if (modules.empty()) {
    return absl::FailedPreconditionError("no LLVM module was compiled for this graph");
  }
  std::vector<std::string> names = {"empty module"};
  for (size_t m = 0; m < modules.size(); ++m) {
    names.push_back(m < labels.size() && labels.size() == modules.size()
                        ? absl::StrCat(m + 1, ": ", labels[m])
                        : absl::StrCat("module ", m + 1));
  }
  modules.insert(modules.begin(), "");
  const compiler::HostTarget target = compiler::DescribeHostTarget();
  std::string out = absl::StrFormat(
      "# compile steps (ms; the median of %d cold compiles of each module; tier %s; %s, LLVM "
      "%s); IR instructions as given -> after the IR passes\n"
      "# %-40s %13s %7s %8s %9s %9s %7s %8s %8s %7s %8s\n",
      runs, compiler::CodeTierName(tier), target.cpu_name, target.llvm_version, "module",
      "IR instr", "parse", "machine", "pass set", "IR passes", "isel", "regalloc", "other cg",
      "link", "total");
  std::string passes;
  for (size_t m = 0; m < modules.size(); ++m) {
    std::vector<CompileSteps> results;
    for (int r = 0; r < runs; ++r) {
      GJ_ASSIGN_OR_RETURN(CompileSteps steps, compiler::TimeCompileSteps(modules[m], tier));
      results.push_back(std::move(steps));
    }
    const CompileSteps s = MedianSteps(results);
    std::string name = names[m];
    if (name.size() > 40) name = name.substr(0, 37) + "...";
    absl::StrAppendFormat(&out,
                          "# %-40s %6d->%-6d %7.2f %8.2f %9.2f %9.2f %7.2f %8.2f %8.2f %7.2f "
                          "%8.2f\n",
                          name, s.instructions, s.optimized_instructions, s.parse * 1e3,
                          s.target_machine * 1e3, s.pass_setup * 1e3, s.ir_passes * 1e3,
                          s.isel * 1e3, s.regalloc * 1e3, s.other_codegen * 1e3, s.link * 1e3,
                          s.total() * 1e3);
    if (top > 0) {
      absl::StrAppendFormat(&passes, "# %s: IR passes: %s\n#   machine passes: %s\n", names[m],
                            TopPasses(s.ir_pass_seconds, top),
                            TopPasses(s.machine_pass_seconds, top));
    }
  }
  if (!passes.empty()) {
    absl::StrAppendFormat(&out, "# the %d most expensive passes (ms, exclusive)\n%s", top, passes);
  }
  return out;
}

}  // namespace graphjit::tools
