// What passes may know beyond the graph: the parameter values, when they are fixed.
#ifndef GRAPHJIT_COMPILER_PASSES_PASS_CONTEXT_H_
#define GRAPHJIT_COMPILER_PASSES_PASS_CONTEXT_H_

#include <cstdint>
#include <functional>

#include "runtime/interpreter.h"

namespace graphjit::compiler {

struct PassContext {
  // The graph's named parameters. Passes that compute new weights at compile time
  // (constant_fold, fold_norm_weight) add them here under new names; the optimized graph
  // must be run with this map.
  runtime::TensorMap params;
  // True when parameter values are fixed for the life of the compiled code (inference),
  // so passes may read and fold them. False for graphs whose weights change (training).
  bool params_are_constant = true;
  // The vector width in bytes of graphjit's generated tiles when large products run as
  // them (CompileGraphOptions::products, or auto's choice on this host:
  // ProductsRunAsTiles), else 0. orient_products turns products for the tiles and packs
  // the weights into their panels of two vectors; OpenBLAS packs either operand as fast.
  int tile_vector_bytes = 0;
  // Set when large products run as generated tiles (as tile_vector_bytes): the rows of
  // the register tile the tiles take for an M x N product (N 0 when not a constant) of
  // elements of `element_bytes`. pack_weight_rows packs the weights of a product the tiles
  // compute as their lhs into panels of that many rows.
  std::function<int(int64_t m, int64_t n, int64_t element_bytes)> tile_rows = nullptr;
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_PASSES_PASS_CONTEXT_H_
