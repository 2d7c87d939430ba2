// GraphStore: compiled graphs by the content key of their traced graph (compiler/compiled/
// graph_key.h), shared by every cache entry, Jit function and lazy context that compiles
// the same thing. Held weakly, like every ContentStore (compiler/store/content_store.h).
#ifndef GRAPHJIT_COMPILER_COMPILED_GRAPH_STORE_H_
#define GRAPHJIT_COMPILER_COMPILED_GRAPH_STORE_H_

#include <memory>

#include "compiler/compiled/compiled_graph.h"
#include "compiler/store/content_store.h"

namespace graphjit::compiler {

class GraphStore : public ContentStore<CompiledGraph> {
 public:
  // The process-wide store that Jit functions and lazy contexts use by default.
  static std::shared_ptr<GraphStore> Default();
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_GRAPH_STORE_H_
