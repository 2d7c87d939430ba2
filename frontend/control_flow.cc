#include "frontend/control_flow.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontend/trace_context.h"

namespace graphjit::frontend {
namespace {

// Traces `fn` over fresh inputs typed like `operands` (named c0.. for the carried ones,
// i0.. for the invariants) into a region graph called `name`.
template <typename Fn>
absl::StatusOr<std::shared_ptr<const ir::Graph>> TraceRegion(const char* name, const Fn& fn,
                                                             absl::Span<const Value> init,
                                                             absl::Span<const Value> invariants,
                                                             const runtime::TensorMap& params) {
  InputTypes types;
  for (size_t k = 0; k < init.size(); ++k) types.emplace_back(absl::StrCat("c", k), init[k].type());
  for (size_t k = 0; k < invariants.size(); ++k) {
    types.emplace_back(absl::StrCat("i", k), invariants[k].type());
  }
  TraceContext ctx(name, types, params);
  std::vector<Value> carried, fixed;
  for (size_t k = 0; k < init.size(); ++k) carried.push_back(ctx.Input(absl::StrCat("c", k)));
  for (size_t k = 0; k < invariants.size(); ++k) {
    fixed.push_back(ctx.Input(absl::StrCat("i", k)));
  }
  std::vector<Value> outputs;
  if constexpr (std::is_same_v<decltype(fn(carried, fixed)), Value>) {
    outputs.push_back(fn(carried, fixed));
  } else {
    outputs = fn(carried, fixed);
  }
  absl::StatusOr<ir::Graph> g = std::move(ctx).Finish(outputs);
  if (!g.ok()) {
    return absl::Status(g.status().code(),
                        absl::StrCat("while: region ", name, ": ", g.status().message()));
  }
  return std::make_shared<const ir::Graph>(*std::move(g));
}

}  // namespace

std::vector<Value> While(const WhileCond& cond, const WhileBody& body, absl::Span<const Value> init,
                         absl::Span<const Value> invariants, std::optional<int64_t> max_trips) {
  if (init.empty() || init[0].context() == nullptr) return {};
  Context& ctx = *init[0].context();
  static const runtime::TensorMap* const kNoParams = new runtime::TensorMap();
  const runtime::TensorMap& params = ctx.params() != nullptr ? *ctx.params() : *kNoParams;
  absl::StatusOr<std::shared_ptr<const ir::Graph>> c =
      TraceRegion("cond", cond, init, invariants, params);
  absl::StatusOr<std::shared_ptr<const ir::Graph>> b =
      TraceRegion("body", body, init, invariants, params);
  std::vector<Value> operands(init.begin(), init.end());
  operands.insert(operands.end(), invariants.begin(), invariants.end());
  ir::Attrs attrs{{"carried", static_cast<int64_t>(init.size())}};
  if (max_trips.has_value()) attrs.Set("max_trips", *max_trips);
  if (!c.ok() || !b.ok()) {
    ctx.ReportError(!c.ok() ? c.status() : b.status());
    return {};
  }
  return ctx.EmitWhile(operands, std::move(attrs), {*std::move(c), *std::move(b)});
}

}  // namespace graphjit::frontend
