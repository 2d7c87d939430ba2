// The kernel program's verifier: the invariants codegen, the program evaluator and the
// back end rely on, checked after every lowering step (compiler/lower/lower.h) as the IR
// verifier is after every graph pass, so a lowering bug is reported by the step that
// made it rather than as a crash or wrong code further down.
#ifndef GRAPHJIT_COMPILER_LOWER_VERIFY_PROGRAM_H_
#define GRAPHJIT_COMPILER_LOWER_VERIFY_PROGRAM_H_

#include "absl/status/status.h"
#include "compiler/lower/kernel_ir.h"

namespace graphjit::compiler {

// OK, or InvalidArgument naming the first broken buffer or kernel and what was expected:
// every buffer, symbol and loop variable an expression names exists (a loop variable of
// its own kernel), each expression has its kind's operand count (a load one i64 index per
// dim of its buffer, a select a bool condition), buffer shapes and dim expressions agree,
// args have an arg index below num_args, an output written in place aliases an input,
// kernels have unique names, the fields their kind needs, store indices for every dim of
// the buffer they write, never write an input or a parameter, and their parallel loop and
// range symbols exist. For programs as lowering makes them (kernel units, which leave
// Buffer::shape empty, are not its input).
absl::Status VerifyProgram(const Program& program);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_LOWER_VERIFY_PROGRAM_H_
