// The content key of a whole graph's compile: what GraphStore (compiler/compiled/
// graph_store.h) finds compiled graphs by, so equal traces share one CompiledGraph.
#ifndef GRAPHJIT_COMPILER_COMPILED_GRAPH_KEY_H_
#define GRAPHJIT_COMPILER_COMPILED_GRAPH_KEY_H_

#include "compiler/compiled/compiled_graph.h"
#include "compiler/store/content_key.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

// The key of compiling `graph` with `params` under `options` for the JIT's target: the
// canonical graph text (its name left out, so equal graphs of differently named functions
// match), the dtype, shape and bytes of every parameter the graph reads (compiled code
// keeps its weights and may fold them), the options that change code, the host CPU name
// and features, and the LLVM and graphjit versions.
ContentKey GraphContentKey(const ir::Graph& graph, const runtime::TensorMap& params,
                           const CompileGraphOptions& options);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_GRAPH_KEY_H_
