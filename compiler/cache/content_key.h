// Content keys: what identifies compiled code independently of who asked for it. The
// same key means the same machine code, in this cache entry, another entry or another
// Jit function - and, because a key holds no pointers and no hash-map order, in another
// process (the property an on-disk or remote code cache relies on).
#ifndef GRAPHJIT_COMPILER_CACHE_CONTENT_KEY_H_
#define GRAPHJIT_COMPILER_CACHE_CONTENT_KEY_H_

#include <cstdint>
#include <string>

#include "compiler/codegen/native_code.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

struct CompileGraphOptions;  // compiler/compiled_graph.h

// A 128-bit XXH3 hash (xxHash, libxxhash-dev).
struct ContentKey {
  uint64_t hi = 0, lo = 0;
  friend bool operator==(const ContentKey& a, const ContentKey& b) {
    return a.hi == b.hi && a.lo == b.lo;
  }
  template <typename H>
  friend H AbslHashValue(H h, const ContentKey& k) {
    return H::combine(std::move(h), k.hi, k.lo);
  }
  std::string ToHex() const;  // 32 lowercase hex digits
};

// The key of compiling `graph` with `params` under `options` for the JIT's target: the
// canonical graph text (its name left out, so equal graphs of differently named functions
// match), the dtype, shape and bytes of every parameter the graph reads (compiled code
// keeps its weights and may fold them), the options that change code, the host CPU name
// and features, and the LLVM and graphjit versions.
ContentKey GraphContentKey(const ir::Graph& graph, const runtime::TensorMap& params,
                           const CompileGraphOptions& options);

// The key of compiling one kernel unit (compiler/lower/kernel_unit.h) for the JIT's
// target: its canonical text, the CPU name and features, the LLVM and graphjit versions.
ContentKey KernelContentKey(const std::string& unit_text, const CompileOptions& codegen = {});

// What code depends on besides its source, part of every key and the header of every
// stored record: graphjit and LLVM versions, target triple, CPU name and features.
std::string JitIdentity();

// The version of graphjit that produced code, e.g. "0.1.0".
const char* GraphjitVersion();

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_CACHE_CONTENT_KEY_H_
