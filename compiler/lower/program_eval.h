// A slow, obviously-correct evaluator of kernel programs: it pins down what a Program
// means independently of LLVM, so lowering can be tested on its own and codegen bugs are
// told apart from lowering bugs.
#ifndef GRAPHJIT_COMPILER_LOWER_PROGRAM_EVAL_H_
#define GRAPHJIT_COMPILER_LOWER_PROGRAM_EVAL_H_

#include <cstdint>

#include "absl/status/status.h"
#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// Runs `program` with the calling convention of its entry function (see Program). Loads
// and stores are bounds-checked against each buffer's dims: an out-of-range access is an
// InternalError naming the kernel, never a stray read.
absl::Status EvaluateProgram(const Program& program, void** args, const int64_t* symbols,
                             char* workspace);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_PROGRAM_EVAL_H_
