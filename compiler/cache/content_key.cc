#include "compiler/cache/content_key.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/codegen/native_code.h"
#include "compiler/compiled_graph.h"
#include "ir/printer.h"

// Header-only use of xxHash: the inlined XXH3 needs no link-time library.
#define XXH_INLINE_ALL
#include <xxhash.h>

#ifndef GRAPHJIT_VERSION
#error "GRAPHJIT_VERSION must be defined by the build"
#endif

namespace graphjit::compiler {
namespace {

// Streams length-prefixed fields, so no two field sequences hash the same bytes.
class Hasher {
 public:
  Hasher() : state_(XXH3_createState()) {
    GJ_CHECK(state_ != nullptr) << "XXH3_createState";
    XXH3_128bits_reset(state_);
  }
  ~Hasher() { XXH3_freeState(state_); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void Bytes(const void* data, size_t n) {
    uint64_t len = n;
    XXH3_128bits_update(state_, &len, sizeof(len));
    if (n > 0) XXH3_128bits_update(state_, data, n);
  }
  void Text(const std::string& s) { Bytes(s.data(), s.size()); }
  ContentKey Finish() {
    XXH128_hash_t h = XXH3_128bits_digest(state_);
    return {h.high64, h.low64};
  }

 private:
  XXH3_state_t* state_;
};

}  // namespace

std::string ContentKey::ToHex() const { return absl::StrFormat("%016x%016x", hi, lo); }

const char* GraphjitVersion() { return GRAPHJIT_VERSION; }

std::string JitIdentity() {
  // Once per process: describing the target asks the JIT engine.
  static const std::string* identity = [] {
    JitTarget t = DescribeJitTarget();
    return new std::string(absl::StrCat("graphjit=", GraphjitVersion(), "\nllvm=", t.llvm_version,
                                        "\ntriple=", t.triple, "\ncpu=", t.cpu_name,
                                        "\nfeatures=", t.cpu_features, "\n"));
  }();
  return *identity;
}

ContentKey KernelContentKey(const std::string& unit_text, const CompileOptions& codegen) {
  Hasher h;
  // The version changes whenever codegen emits other code for the same kernel text, so
  // that older objects in a disk or remote cache never load: v2 register-tiled matmuls,
  // v3 f32 sums accumulating in f64, ..., v7 jammed heads' products splitting k into
  // accumulator sets, v8 attention in one kernel, v9 products rounded before they are
  // added (no contraction) and attention's block max as a compare-and-select.
  h.Text("graphjit-kernel-key-v9");
  h.Text(JitIdentity());
  // Only options that change the code; keep_ir, emit_asm and keep_object change what is kept.
  h.Text(absl::StrCat("tile_matmuls=", codegen.tile_matmuls, "\n"));
  h.Text(unit_text);
  return h.Finish();
}

ContentKey GraphContentKey(const ir::Graph& graph, const runtime::TensorMap& params,
                           const CompileGraphOptions& options) {
  Hasher h;
  h.Text("graphjit-graph-key-v1");
  h.Text(JitIdentity());
  // Only options that change the code; keep_ir and emit_asm change what is kept.
  h.Text(absl::StrCat("optimize=", options.optimize, ",const=", options.params_are_constant,
                      ",tile_matmuls=", options.codegen.tile_matmuls,
                      ",fuse_attention=", options.fuse_attention));
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
