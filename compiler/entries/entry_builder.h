// EntryBuilder: what a miss does to an entry, outside the cache's lock: trace the
// function with the entry's key, take the content key of the traced graph and its
// weights, and get its code from the code store (code another entry, function or process
// compiled, or a real compile through CompiledGraph::Compile).
#ifndef GRAPHJIT_COMPILER_ENTRIES_ENTRY_BUILDER_H_
#define GRAPHJIT_COMPILER_ENTRIES_ENTRY_BUILDER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/compiled/graph_store.h"
#include "compiler/entries/cache_entry.h"
#include "compiler/entries/guards.h"
#include "compiler/entries/jit_options.h"
#include "frontend/value.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler::entries {

// What a cache compiles: a function over frontend Values and the weights it reads.
struct TracedFunction {
  std::string name;
  std::function<std::vector<frontend::Value>(frontend::Context&)> body;
  runtime::TensorMap weights;
};

class EntryBuilder {
 public:
  // All three must outlive the builder; `options.store` must be set.
  EntryBuilder(const TracedFunction& function, const JitOptions& options,
               const InputSignature& signature);

  // Traces `entry` for its keys: its graph and content key, and under padding the output
  // dims to cut back. A shape error of the function is returned, not cached.
  absl::Status Trace(CacheEntry* entry) const;
  // The code of a traced entry: live code of its content key, or a real compile
  // (`*compiled` tells which).
  absl::StatusOr<std::shared_ptr<const CompiledGraph>> Build(const CacheEntry& entry,
                                                             bool* compiled) const;
  // The same at another code tier (reoptimization), under that tier's content key.
  absl::StatusOr<std::shared_ptr<const CompiledGraph>> BuildAt(const CacheEntry& entry,
                                                               CodeTier tier, bool* compiled) const;

 private:
  const TracedFunction& function_;
  const JitOptions& options_;
  const InputSignature& signature_;
  GraphStore& store_;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_ENTRY_BUILDER_H_
