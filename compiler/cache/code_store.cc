#include "compiler/cache/code_store.h"

#include "absl/strings/str_format.h"

namespace graphjit::compiler {

std::string CodeStoreStats::ToString() const {
  return absl::StrFormat("lookups=%d hits=%d compiles=%d failed=%d live=%d compile=%.3fs", lookups,
                         hits, compiles, failed_compiles, live, compile_seconds);
}

std::shared_ptr<CodeStore> CodeStore::Default() {
  // Never destroyed: code may still be held by static objects at exit.
  static auto* store = new std::shared_ptr<CodeStore>(std::make_shared<CodeStore>());
  return *store;
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
