#include "compiler/compiled/graph_key.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/printer.h"
#include "runtime/jit_helpers.h"

namespace graphjit::compiler {

ContentKey GraphContentKey(const ir::Graph& graph, const runtime::TensorMap& params,
                           const CompileGraphOptions& options) {
  ContentHasher h;
  h.Text("graphjit-graph-key-v1");
  h.Text(JitIdentity());
  // Only options that change the code; keep_ir and emit_asm change what is kept.
  h.Text(absl::StrCat(
      "optimize=", options.optimize, ",const=", options.params_are_constant,
      ",tile_matmuls=", options.codegen.tile_matmuls, ",tier=", CodeTierName(options.codegen.tier),
      ",max_vector_bytes=", options.codegen.max_vector_bytes,
      ",fuse_attention=", options.fuse_attention, ",fuse_epilogues=", options.fuse_epilogues,
      ",fills_once=", options.fills_once,
      // auto's choice depends on the kernels OpenBLAS runs (OPENBLAS_CORETYPE).
      ",products=", ProductKernelsName(ProductsOf(options)), ",blas=", runtime::BlasCoreName(),
      // Not the code, but the compiled graph's calls run on this many.
      ",threads=", ThreadsOf(options), ",min_parallel_work=", options.min_parallel_work));
  ir::Graph renamed = graph;
  renamed.set_name("g");
  h.Text(ir::PrintGraph(renamed));
  std::vector<std::string> names;
  for (ir::ValueId id : graph.Params()) names.push_back(graph.node(id).name());
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    h.Text(name);
    auto it = params.find(name);
    if (it == params.end()) {
      h.Text("<missing>");  // the compile will fail and name it; the key just must differ
      continue;
    }
    h.Text(it->second.TypeString());
    h.Bytes(it->second.raw_data(), it->second.nbytes());
  }
  return h.Finish();
}

}  // namespace graphjit::compiler
