#include "frontend/control_flow.h"

#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "frontend/trace_context.h"

namespace graphjit::frontend {
namespace {

// Traces `fn` over fresh inputs of `types` (named a0, a1, ...) into a graph called
// `name` with `params` in reach.
absl::StatusOr<ir::Graph> TraceRegion(
    const std::string& name, const std::vector<ir::ValueType>& types,
    const std::function<std::vector<Value>(const std::vector<Value>&)>& fn,
    const runtime::TensorMap& params) {
  InputTypes named;
  for (size_t k = 0; k < types.size(); ++k) named.emplace_back(absl::StrCat("a", k), types[k]);
  TraceContext ctx(name, named, params);
  std::vector<Value> in;
  for (size_t k = 0; k < types.size(); ++k) in.push_back(ctx.Input(absl::StrCat("a", k)));
  absl::StatusOr<ir::Graph> g = std::move(ctx).Finish(fn(in));
  if (!g.ok()) {
    return absl::Status(g.status().code(),
                        absl::StrCat("region ", name, ": ", g.status().message()));
  }
  return g;
}

std::vector<ir::ValueType> TypesOf(absl::Span<const Value> values) {
  std::vector<ir::ValueType> types;
  for (const Value& v : values) types.push_back(v.type());
  return types;
}

const runtime::TensorMap& ParamsOf(Context& ctx) {
  static const runtime::TensorMap* const kNone = new runtime::TensorMap();
  return ctx.params() != nullptr ? *ctx.params() : *kNone;
}

}  // namespace

std::vector<Value> While(const WhileCond& cond, const WhileBody& body, absl::Span<const Value> init,
                         absl::Span<const Value> invariants, std::optional<int64_t> max_trips) {
  if (init.empty() || init[0].context() == nullptr) return {};
  Context& ctx = *init[0].context();
  std::vector<Value> operands(init.begin(), init.end());
  operands.insert(operands.end(), invariants.begin(), invariants.end());
  const size_t carried = init.size();
  auto split = [carried](const std::vector<Value>& in) {
    return std::pair{absl::MakeConstSpan(in).subspan(0, carried),
                     absl::MakeConstSpan(in).subspan(carried)};
  };
  const std::vector<ir::ValueType> types = TypesOf(operands);
  absl::StatusOr<ir::Graph> c = TraceRegion(
      "cond", types,
      [&](const std::vector<Value>& in) {
        auto [x, inv] = split(in);
        return std::vector<Value>{cond(x, inv)};
      },
      ParamsOf(ctx));
  absl::StatusOr<ir::Graph> b = TraceRegion(
      "body", types,
      [&](const std::vector<Value>& in) {
        auto [x, inv] = split(in);
        return body(x, inv);
      },
      ParamsOf(ctx));
  if (!c.ok() || !b.ok()) {
    ctx.ReportError(absl::Status((!c.ok() ? c : b).status().code(),
                                 absl::StrCat("while: ", (!c.ok() ? c : b).status().message())));
    return {};
  }
  ir::Attrs attrs{{"carried", static_cast<int64_t>(carried)}};
  if (max_trips.has_value()) attrs.Set("max_trips", *max_trips);
  return ctx.EmitWhile(operands, std::move(attrs),
                       {std::make_shared<const ir::Graph>(*std::move(c)),
                        std::make_shared<const ir::Graph>(*std::move(b))});
}

std::vector<Value> Scan(const ScanStep& step, absl::Span<const Value> init,
                        absl::Span<const Value> xs, absl::Span<const Value> invariants) {
  if (init.empty() || xs.empty() || init[0].context() == nullptr) return {};
  Context& ctx = *init[0].context();
  // The body takes a row of each scanned input: traced over values typed like one.
  std::vector<Value> operands(init.begin(), init.end());
  operands.insert(operands.end(), xs.begin(), xs.end());
  operands.insert(operands.end(), invariants.begin(), invariants.end());
  std::vector<ir::ValueType> types = TypesOf(operands);
  for (size_t k = init.size(); k < init.size() + xs.size(); ++k) {
    if (types[k].rank() == 0) {
      ctx.ReportError(absl::InvalidArgumentError(
          absl::StrCat("scan: scanned input ", k - init.size(), " is a scalar (no rows)")));
      return {};
    }
    types[k].shape.erase(types[k].shape.begin());
  }
  const size_t c = init.size(), r = xs.size();
  absl::StatusOr<ir::Graph> body = TraceRegion(
      "body", types,
      [&](const std::vector<Value>& in) {
        const absl::Span<const Value> all(in);
        return step(all.subspan(0, c), all.subspan(c, r), all.subspan(c + r));
      },
      ParamsOf(ctx));
  if (!body.ok()) {
    ctx.ReportError(
        absl::Status(body.status().code(), absl::StrCat("scan: ", body.status().message())));
    return {};
  }
  return ctx.EmitScan(operands,
                      {{"carried", static_cast<int64_t>(init.size())},
                       {"scanned", static_cast<int64_t>(xs.size())}},
                      {std::make_shared<const ir::Graph>(*std::move(body))});
}

std::vector<Value> Cond(const Value& pred, const CondBranch& then_fn, const CondBranch& else_fn,
                        absl::Span<const Value> operands) {
  if (pred.context() == nullptr) return {};
  Context& ctx = *pred.context();
  const std::vector<ir::ValueType> types = TypesOf(operands);
  absl::StatusOr<ir::Graph> branches[2] = {TraceRegion("then", types, then_fn, ParamsOf(ctx)),
                                           TraceRegion("else", types, else_fn, ParamsOf(ctx))};
  for (const absl::StatusOr<ir::Graph>& g : branches) {
    if (!g.ok()) {
      ctx.ReportError(
          absl::Status(g.status().code(), absl::StrCat("cond: ", g.status().message())));
      return {};
    }
  }
  const ir::Graph& t = *branches[0];
  const ir::Graph& e = *branches[1];
  if (t.outputs().size() != e.outputs().size()) {
    ctx.ReportError(
        absl::InvalidArgumentError(absl::StrCat("cond: the then branch gives ", t.outputs().size(),
                                                " values, the else ", e.outputs().size())));
    return {};
  }
  std::vector<Value> operands_with_pred = {pred};
  operands_with_pred.insert(operands_with_pred.end(), operands.begin(), operands.end());
  // One if per value: each branch region returns that value (what the others need is
  // dropped when the region compiles).
  std::vector<Value> results;
  for (size_t i = 0; i < t.outputs().size(); ++i) {
    const ir::ValueType& type = t.type(t.outputs()[i]);
    std::vector<std::shared_ptr<const ir::Graph>> regions;
    for (const ir::Graph* g : {&t, &e}) {
      ir::Graph one = *g;
      one.set_outputs({g->outputs()[i]});
      regions.push_back(std::make_shared<const ir::Graph>(std::move(one)));
    }
    results.push_back(ctx.EmitIf(operands_with_pred, {{"dtype", type.dtype}, {"shape", type.shape}},
                                 std::move(regions)));
    if (!results.back().valid()) return {};
  }
  return results;
}

}  // namespace graphjit::frontend
