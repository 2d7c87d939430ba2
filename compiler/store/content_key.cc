#include "compiler/store/content_key.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/codegen/native_code.h"
#include "ir/check.h"

// Header-only use of xxHash: the inlined XXH3 needs no link-time library.
#define XXH_INLINE_ALL
#include <xxhash.h>

#ifndef GRAPHJIT_VERSION
#error "GRAPHJIT_VERSION must be defined by the build"
#endif

namespace graphjit::compiler {
ContentHasher::ContentHasher() : state_(XXH3_createState()) {
  GJ_CHECK(state_ != nullptr) << "XXH3_createState";
  XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_));
}

ContentHasher::~ContentHasher() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }

void ContentHasher::Bytes(const void* data, size_t n) {
  auto* state = static_cast<XXH3_state_t*>(state_);
  uint64_t len = n;
  XXH3_128bits_update(state, &len, sizeof(len));
  if (n > 0) XXH3_128bits_update(state, data, n);
}

ContentKey ContentHasher::Finish() {
  XXH128_hash_t h = XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_));
  return {h.high64, h.low64};
}

std::string ContentKey::ToHex() const { return absl::StrFormat("%016x%016x", hi, lo); }

const char* GraphjitVersion() { return GRAPHJIT_VERSION; }

namespace {

// The NT_GNU_BUILD_ID note among the PT_NOTE segments of the loaded object `info`.
std::string BuildIdOf(const dl_phdr_info& info) {
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info.dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info.dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof(ElfW(Nhdr));
      const char* desc = name + ((note->n_namesz + 3) & ~3u);
      const char* next = desc + ((note->n_descsz + 3) & ~3u);
      if (next > end) break;
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        std::string hex;
        for (uint32_t b = 0; b < note->n_descsz; ++b) {
          absl::StrAppend(&hex, absl::Hex(static_cast<unsigned char>(desc[b]), absl::kZeroPad2));
        }
        return hex;
      }
      p = next;
    }
  }
  return "";
}

}  // namespace

const std::string& BuildId() {
  static const std::string* id = [] {
    // The object whose code this function is: the executable, or the shared library
    // graphjit is linked into.
    Dl_info self;
    auto* result = new std::string;
    if (dladdr(reinterpret_cast<const void*>(&BuildId), &self) == 0) return result;
    struct Search {
      const void* base;
      std::string* id;
    } search{self.dli_fbase, result};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
          auto* s = static_cast<Search*>(data);
          // The load base of an executable's first segment is its image base.
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const ElfW(Phdr)& ph = info->dlpi_phdr[i];
            if (ph.p_type == PT_LOAD && ph.p_offset == 0 &&
                reinterpret_cast<const void*>(info->dlpi_addr + ph.p_vaddr) == s->base) {
              *s->id = BuildIdOf(*info);
              return 1;
            }
          }
          return 0;
        },
        &search);
    return result;
  }();
  return *id;
}

std::string JitIdentity() {
  // Once per process: describing the target asks the JIT engine.
  static const std::string* identity = [] {
    HostTarget t = DescribeHostTarget();
    return new std::string(absl::StrCat("graphjit=", GraphjitVersion(), "\nllvm=", t.llvm_version,
                                        "\ntriple=", t.triple, "\ncpu=", t.cpu_name,
                                        "\nfeatures=", t.cpu_features, "\nl2=", t.l2_bytes, "\n"));
  }();
  return *identity;
}

ContentKey KernelContentKey(const std::string& unit_text, const CompileOptions& codegen) {
  ContentHasher h;
  // The version changes whenever codegen emits other code for the same kernel text, so
  // that older objects in a disk or remote cache never load: v2 register-tiled matmuls,
  // v3 f32 sums accumulating in f64, ..., v7 jammed heads' products splitting k into
  // accumulator sets, v8 attention in one kernel, v9 products rounded before they are
  // added (no contraction) and attention's block max as a compare-and-select, v10 the
  // baseline tier's one-head attention, lean jammed rows and marked vector loops, and a
  // symbolic attention's block loops emitted once, v11 the baseline's own vectors for maps
  // and reductions, and narrower max_vector_bytes compiling for the host without AVX-512,
  // v12 the baseline's attention taking a KV head's query heads together and jammed rows
  // addressing their rows once per block, v13 f32 erf inline (vectors) rather than erff,
  // v14 O2 maps on codegen's own vectors (pairs, a masked rest, stride-2 loads), v15
  // vector selects uniform across the lanes as branches, v16 the BLAS helper taking ldb
  // and ldc (products split by columns), ..., v19 tiles gathering an operand at
  // f(row) + g(k) (a convolution's windows) as they pack it, v20 products with epilogues
  // (C stored at f(m) + g(n) too), v21 loads and stores consecutive in memory through
  // indices split by divisions ([m, n / W, n % W]) as vectors, v22 a maximum or minimum
  // with a constant as one compare and select, and tiles over packed weights prefetching
  // the panel three ahead, with fewer rows where that computes fewer rows past M, v23
  // windows packed a run of consecutive elements per image row, v24 also a stride-2
  // convolution's (every other element), v25 C's vectors across a row end of a padded
  // buffer stored and loaded as two runs rather than scattered and gathered, v26 N's last
  // panel computing only its vectors in N where a part-full one wastes 5% or more, v27
  // O2 maps over a stride-1 stencil's rows (a depthwise convolution) four rows at a time
  // (none with a transcendental), v28 sigmoid and f32 erf on a clamped exp (one power of
  // two, sigmoid 0 below -88.37), v29 tiles reading weights packed as their lhs in place
  // (pack_weight_rows) and prefetching the next tile's rows, v30 tiles prefetching their
  // epilogue's streamed loads (a residual) and, over a B beyond the caches, B's rows ahead,
  // v31 windows' row addresses computed once per block of k, v32 their column offsets once
  // per panel and row tables by panels per block, v33 stencils of more than 9 taps in
  // vectors as wide as their rows, reductions over a strided axis in vectors of outputs,
  // and x pow 2 as x * x in every tier, v34 such stencils' rows as the parts of one vector
  // where a row fits one, v35 their parts' masks compared rather than shuffled, v36 maps
  // between layouts (a buffer read or written transposed) in register-transposed blocks,
  // v37 plain stores for whole tiles and blocks and constant rests below 64-byte vectors.
  h.Text("graphjit-kernel-key-v37");
  h.Text(JitIdentity());
  // Only options that change the code; keep_ir, emit_asm and keep_object change what is kept.
  h.Text(absl::StrCat("tile_matmuls=", codegen.tile_matmuls, ",tier=", CodeTierName(codegen.tier),
                      ",max_vector_bytes=", codegen.max_vector_bytes, "\n"));
  h.Text(unit_text);
  return h.Finish();
}

}  // namespace graphjit::compiler
