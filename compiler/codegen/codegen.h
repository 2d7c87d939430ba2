// Kernel program -> llvm::Module: one function running the kernels in order, each
// kernel an internal function LLVM may inline.
#ifndef GRAPHJIT_COMPILER_CODEGEN_CODEGEN_H_
#define GRAPHJIT_COMPILER_CODEGEN_CODEGEN_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/codegen/native_code.h"
#include "compiler/lower/kernel_ir.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace graphjit::compiler {

// Emits `program` as a module whose external function `function_name` has the signature
// `void(ptr args, ptr symbols, ptr workspace)` (Program's calling convention). The module
// passes llvm::verifyModule; an internal inconsistency of the program is an error.
absl::StatusOr<std::unique_ptr<llvm::Module>> EmitModule(const Program& program,
                                                         llvm::LLVMContext& context,
                                                         const llvm::DataLayout& data_layout,
                                                         const std::string& triple,
                                                         const std::string& function_name,
                                                         const CompileOptions& options = {});

// Emits one module holding each of `programs` as its own external function
// `function_names[i]` (same signature), so several programs share one optimization pipeline
// and one link while staying separately callable.
absl::StatusOr<std::unique_ptr<llvm::Module>> EmitFunctionsModule(
    const std::vector<const Program*>& programs, const std::vector<std::string>& function_names,
    llvm::LLVMContext& context, const llvm::DataLayout& data_layout, const std::string& triple,
    const CompileOptions& options = {});

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_CODEGEN_CODEGEN_H_
