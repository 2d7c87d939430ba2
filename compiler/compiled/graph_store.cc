#include "compiler/compiled/graph_store.h"

namespace graphjit::compiler {

std::shared_ptr<CodeStore> CodeStore::Default() {
  // Never destroyed: code may still be held by static objects at exit.
  static auto* store = new std::shared_ptr<CodeStore>(std::make_shared<CodeStore>());
  return *store;
}

}  // namespace graphjit::compiler
