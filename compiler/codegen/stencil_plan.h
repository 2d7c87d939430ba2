// How the explicit vector maps (compiler/codegen/codegen_lanes.cc) lay out a stencil: a map
// whose value reads a buffer at several rows of the loop outside its vectors (a depthwise
// convolution's taps). Its rows four at a time, a row in one vector as wide as the row, or
// rows as the parts of one vector, from the map's expressions and constant extents. No
// LLVM here: the numbers the emitted loops run by.
#ifndef GRAPHJIT_COMPILER_CODEGEN_STENCIL_PLAN_H_
#define GRAPHJIT_COMPILER_CODEGEN_STENCIL_PLAN_H_

#include <cstdint>

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler::codegen_internal {

// var's coefficient in `e` where e is linear in var through +, - and products by
// constants ((i3 * 2) + 1: 2); 0 where it is not (or does not mention var).
int64_t Coefficient(const Expr* e, int var);

// What a map's value reads of one buffer at consecutive rows of `row_var` (loads whose
// index at one position is row_var plus offsets: a stride-1 depthwise convolution's taps).
struct Stencil {
  int64_t most_taps = 0;     // the most loads of one buffer at one such index position
  bool shared_rows = false;  // some buffer is read at two or more of those rows
  bool costly = false;       // the value has a transcendental
};
Stencil StencilOf(const Expr* value, int row_var);

// The most taps of a stencil whose rows are computed together (RowsSharingLoads); a
// stencil with more is computed a row at a time, in vectors as wide as its row
// (VectorsPerRow), or with its rows as one vector's parts (RowsAsParts).
inline constexpr int64_t kMaxJammedTaps = 9;

// How many rows of a stencil the O2 maps compute together, each in its own vectors: 4 or 1.
int RowsSharingLoads(const Stencil& stencil);

// How many vectors of `lanes` one evaluation of a stencil of more than kMaxJammedTaps taps
// covers: its whole row of `row_extent` (a constant, else 0), up to 4.
int VectorsPerRow(const Stencil& stencil, int64_t row_extent, int lanes);

// How many rows (of `row_count`, a constant, else 0) of such a stencil one evaluation
// computes as the parts of one vector, where a row of `row_extent` fits one vector of
// `lanes`: 4, 2 or 1.
int RowsAsParts(const Stencil& stencil, int64_t row_extent, int64_t row_count, int lanes,
                const Expr* value);

}  // namespace graphjit::compiler::codegen_internal

#endif  // GRAPHJIT_COMPILER_CODEGEN_STENCIL_PLAN_H_
