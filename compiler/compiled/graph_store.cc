#include "compiler/compiled/graph_store.h"

namespace graphjit::compiler {

std::shared_ptr<GraphStore> GraphStore::Default() {
  // Never destroyed: code may still be held by static objects at exit.
  static auto* store = new std::shared_ptr<GraphStore>(std::make_shared<GraphStore>());
  return *store;
}

}  // namespace graphjit::compiler
