#include "compiler/store/content_store.h"

#include "absl/strings/str_format.h"

namespace graphjit::compiler {

std::string StoreStats::ToString() const {
  return absl::StrFormat("lookups=%d hits=%d compiles=%d failed=%d live=%d compile=%.3fs", lookups,
                         hits, compiles, failed_compiles, live, compile_seconds);
}

ModuleStore& ModuleStore::Default() {
  static auto* store = new ModuleStore();
  return *store;
}

KernelStore& KernelStore::Default() {
  static auto* store = new KernelStore();
  return *store;
}

}  // namespace graphjit::compiler
