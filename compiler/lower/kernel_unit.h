// KernelUnit: one kernel of a program as a program of its own, in a canonical form, so
// that equal kernels - the layers of a model, the S-independent projections of exact
// entries - are recognized as equal and compiled once. Buffers become args numbered by
// first use (temps too: their workspace address is passed), symbols are renumbered by
// first use, names are dropped; `text` spells everything codegen reads, exactly.
#ifndef GRAPHJIT_COMPILER_LOWER_KERNEL_UNIT_H_
#define GRAPHJIT_COMPILER_LOWER_KERNEL_UNIT_H_

#include <string>
#include <vector>

#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

struct KernelUnit {
  Program program;           // one kernel; every buffer an arg (args[i] is buffer i)
  std::vector<int> buffers;  // unit buffer i is program buffer buffers[i]
  // Unit symbol j is program symbol symbols[j]; a kernel with a parallel loop has two
  // more, its range [begin, end) (Kernel::range_symbol), which the caller passes.
  std::vector<int> symbols;
  std::string text;  // canonical: equal text, equal machine code
};

// The unit of `program.kernels[kernel]`.
KernelUnit MakeKernelUnit(const Program& program, int kernel);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_KERNEL_UNIT_H_
