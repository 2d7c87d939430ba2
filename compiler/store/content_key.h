// Content keys: what identifies compiled code independently of who asked for it. The
// same key means the same machine code, in this cache entry, another entry or another
// Jit function - and, because a key holds no pointers and no hash-map order, in another
// process (the property an on-disk or remote code cache relies on).
#ifndef GRAPHJIT_COMPILER_STORE_CONTENT_KEY_H_
#define GRAPHJIT_COMPILER_STORE_CONTENT_KEY_H_

#include <cstdint>
#include <string>

#include "compiler/codegen/native_code.h"

namespace graphjit::compiler {

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

// Streams length-prefixed fields into a key, so no two field sequences hash the same
// bytes. Every key of compiled code (kernels here, graphs in compiler/compiled/graph_key.h)
// is one of these.
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;

  void Bytes(const void* data, size_t n);
  void Text(const std::string& s) { Bytes(s.data(), s.size()); }
  ContentKey Finish();

 private:
  void* state_;  // XXH3_state_t, kept out of the header (xxhash.h is used inline)
};

// The key of compiling one kernel unit (compiler/lower/kernel_unit.h) for the JIT's
// target: its canonical text, the CPU name and features, the LLVM and graphjit versions.
ContentKey KernelContentKey(const std::string& unit_text, const CompileOptions& codegen = {});

// What code depends on besides its source, part of every key and the header of every
// stored record: graphjit and LLVM versions, target triple, CPU name and features.
std::string JitIdentity();

// The GNU build id (hex) of the executable or shared object graphjit's code is linked
// into, read once from the loaded ELF notes; empty when it has none (linked without
// --build-id). It changes with any change to the compiler's code, so what the passes and
// lowering produced (the disk cache's graph-level records) is keyed by it: such a record
// is only ever used by the build that wrote it.
const std::string& BuildId();

// The version of graphjit that produced code, e.g. "0.1.0".
const char* GraphjitVersion();

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_CONTENT_KEY_H_
