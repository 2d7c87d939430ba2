// The IR verifier: the one place that says what a well-formed graph is.
#ifndef GRAPHJIT_IR_VERIFIER_H_
#define GRAPHJIT_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/graph.h"

namespace graphjit::ir {

// Checks that `graph` is well formed: operands refer to earlier nodes, every node's arity
// and attributes match its op's schema, every stored type equals the type its shape rule
// infers, input and parameter names are unique and non-empty, and there is at least one
// output, each an existing node. The message names the node (`%7 (matmul)`) and the rule.
// The arity, attribute and type checks are InferType's: a graph whose types_inferred() is
// set (every node from GraphBuilder::Add, untouched since) passed them when it was built.
absl::Status VerifyGraph(const Graph& graph);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_VERIFIER_H_
