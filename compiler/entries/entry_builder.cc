#include "compiler/entries/entry_builder.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/compiled/graph_key.h"
#include "frontend/trace_context.h"
#include "ir/status_macros.h"

namespace graphjit::compiler::entries {
namespace {

absl::StatusOr<ir::Graph> TraceFunction(const TracedFunction& fn,
                                        const frontend::InputTypes& types) {
  frontend::TraceContext ctx(fn.name, types, fn.weights);
  std::vector<frontend::Value> outputs = fn.body(ctx);
  return std::move(ctx).Finish(outputs);
}

// Each output's dims as constants or padded dynamic dims, from a trace with the padded
// dims symbolic, so padded outputs can be cut back.
absl::StatusOr<std::vector<std::vector<DimGuard>>> OutputDims(const ir::Graph& graph,
                                                              const InputSignature& sig) {
  std::vector<std::vector<DimGuard>> outputs;
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    const ir::Shape& shape = graph.type(graph.outputs()[i]).shape;
    std::vector<DimGuard> dims;
    for (size_t a = 0; a < shape.size(); ++a) {
      DimGuard d;
      std::string symbol;
      if (std::optional<int64_t> c = shape[a].AsConstant()) {
        d.constant = *c;
      } else if (shape[a].IsSymbol(&symbol)) {
        for (int k = 0; k < sig.num_dynamic(); ++k) {
          if (sig.dynamic_dims()[k].padded() && sig.dynamic_dims()[k].symbol == symbol) {
            d.dynamic = k;
          }
        }
      }
      if (!shape[a].IsConstant() && d.dynamic < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("output ", i, " dim ", a, " is `", shape[a].ToString(),
                         "`: a padded output can only be cut back along a bare padded dim"));
      }
      dims.push_back(d);
    }
    outputs.push_back(std::move(dims));
  }
  return outputs;
}

}  // namespace

EntryBuilder::EntryBuilder(const TracedFunction& function, const JitOptions& options,
                           const InputSignature& signature)
    : function_(function), options_(options), signature_(signature), store_(*options.store) {}

absl::Status EntryBuilder::Trace(CacheEntry* entry) const {
  const bool padded = signature_.pads();
  GJ_ASSIGN_OR_RETURN(ir::Graph graph,
                      TraceFunction(function_, signature_.TraceTypes(entry->keys_, padded)));
  if (padded) {
    // Which output dims follow the padded dims: a trace with those left symbolic.
    GJ_ASSIGN_OR_RETURN(ir::Graph symbolic,
                        TraceFunction(function_, signature_.TraceTypes(entry->keys_, true,
                                                                       /*symbolic_padded=*/true)));
    GJ_ASSIGN_OR_RETURN(entry->output_dims_, OutputDims(symbolic, signature_));
  }
  entry->content_key_ = GraphContentKey(graph, function_.weights, options_.compile);
  entry->traced_ = std::move(graph);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const CompiledGraph>> EntryBuilder::Build(const CacheEntry& entry,
                                                                         bool* compiled) const {
  return store_.GetOrCompile(
      entry.content_key_,
      [&] { return CompiledGraph::Compile(entry.traced_, function_.weights, options_.compile); },
      compiled);
}

absl::StatusOr<std::shared_ptr<const CompiledGraph>> EntryBuilder::BuildAt(const CacheEntry& entry,
                                                                           CodeTier tier,
                                                                           bool* compiled) const {
  CompileGraphOptions options = options_.compile;
  options.codegen.tier = tier;
  return store_.GetOrCompile(
      GraphContentKey(entry.traced_, function_.weights, options),
      [&] { return CompiledGraph::Compile(entry.traced_, function_.weights, options); }, compiled);
}

}  // namespace graphjit::compiler::entries
