// LazyContext: model code records ops without running them; a concrete value (Item(),
// Materialize()) cuts the pending graph there (a graph break), gets its native code from
// the GraphStore by content key (the same store Jit functions use, so equal graphs share
// one compile), runs it, and recording goes on in a new graph. The same Value handles
// and op functions as eager and traced code.
#ifndef GRAPHJIT_COMPILER_LAZY_LAZY_CONTEXT_H_
#define GRAPHJIT_COMPILER_LAZY_LAZY_CONTEXT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/compiled/graph_store.h"
#include "frontend/value.h"
#include "ir/builder.h"

namespace graphjit::compiler {

// One cut: how many compute ops its graph had (0 when everything asked for was ready).
struct GraphBreak {
  int ops = 0;
  int outputs = 0;        // pending values still held by handles, computed by this graph
  bool compiled = false;  // a cache miss compiled it (else reused code)
};

class LazyContext : public frontend::Context {
 public:
  // `inputs` and `params` are concrete tensors the code may read by name. Code comes from
  // `store` (null: GraphStore::Default()), compiled under `env` (null:
  // CompileEnv::FromEnvironment(); must outlive the context).
  LazyContext(runtime::TensorMap inputs = {}, runtime::TensorMap params = {},
              std::shared_ptr<GraphStore> store = nullptr, const CompileEnv* env = nullptr);
  ~LazyContext() override;

  // A concrete tensor as a value (already materialized).
  frontend::Value Tensor(const runtime::Tensor& t);

  frontend::Value Input(absl::string_view name) override;
  bool HasInput(absl::string_view name) const override { return inputs_.contains(name); }
  frontend::Value Param(absl::string_view name) override;
  frontend::Value Emit(ir::OpCode op, absl::Span<const frontend::Value> operands,
                       ir::Attrs attrs) override;
  const ir::ValueType& TypeOf(ir::ValueId id) const override;

  // Cuts the pending graph and returns `v`'s tensor. Every pending value a live handle
  // still refers to is computed by the same graph (so it is never recomputed later);
  // values no handle refers to are dropped.
  absl::StatusOr<runtime::Tensor> Materialize(const frontend::Value& v);
  // The value of a one-element tensor, e.g. for `if (ctx.Item(err) < 1e-12)`.
  absl::StatusOr<double> Item(const frontend::Value& v);

  const std::vector<GraphBreak>& graphs() const { return graphs_; }
  int compiles() const { return compiles_; }  // cuts whose graph this context compiled
  // Pending (not yet computed) ops.
  int pending_ops() const;

 private:
  struct Slot;
  frontend::Value NewValue(std::shared_ptr<Slot> slot);
  // The current graph's node for a slot (an input node for a computed tensor).
  ir::ValueId NodeFor(const std::shared_ptr<Slot>& slot);
  absl::Status Cut();

  runtime::TensorMap inputs_, params_;
  std::vector<std::weak_ptr<Slot>> slots_;  // by Value id
  // The graph being recorded and the computed tensors it reads.
  std::unique_ptr<ir::GraphBuilder> builder_;
  std::vector<std::shared_ptr<Slot>> graph_inputs_;
  absl::flat_hash_map<const Slot*, ir::ValueId> input_nodes_;
  int epoch_ = 0;
  // Native code by the pending graph's canonical text (structure, shapes and constants).
  std::shared_ptr<GraphStore> store_;
  const CompileEnv* env_;
  // The code this context's graphs used, held so the store keeps it while the context
  // lives (the store itself holds code only weakly).
  absl::flat_hash_map<ContentKey, std::shared_ptr<const CompiledGraph>> code_;
  std::vector<GraphBreak> graphs_;
  int compiles_ = 0;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LAZY_LAZY_CONTEXT_H_
