// Kernel program -> llvm::Module: the function, one internal function per kernel,
// and the canonical loop nests the O2 pipeline's loop vectorizer recognizes. The kernel
// bodies are emitted by codegen_kernels.cc, codegen_matmul.cc, codegen_extern_matmul.cc
// and codegen_attention.cc, their scalar expressions by codegen_expr.cc.
#include "compiler/codegen/codegen.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "compiler/codegen/codegen_emitter.h"
#include "ir/status_macros.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace graphjit::compiler {
namespace codegen_internal {

using ir::DType;

namespace {

llvm::StringRef Ref(absl::string_view s) { return llvm::StringRef(s.data(), s.size()); }

}  // namespace

DType SumType(DType dtype) { return dtype == DType::kF32 ? DType::kF64 : dtype; }

KernelEmitter::KernelEmitter(const Program& program, const Kernel& kernel, llvm::Function* function,
                             const CompileOptions& options)
    : program_(program),
      options_(options),
      kernel_(kernel),
      function_(function),
      module_(*function->getParent()),
      context_(function->getContext()),
      args_(function->getArg(0)),
      symbols_(function->getArg(1)),
      workspace_(function->getArg(2)),
      prologue_(function->getContext()),
      body_(function->getContext()),
      b_(&body_),
      symbol_values_(program.symbols.size(), nullptr),
      buffers_(program.buffers.size()) {
  // No fast-math flags, not even contraction: every product is rounded before it is
  // added, as the interpreter rounds it. Contracting x * x - max(x * x) into one FMA
  // subtracts the rounded max from the exact product, and where the product's rounding
  // is large (x = 3e9 in f32: 2e11) the max element's exp(0) became exp(-2e11) = 0 and a
  // cross_entropy -inf (found by the differential fuzzer). The sums that may split into
  // lanes (dots, reductions) set their own flags; ordered multiply-adds call llvm.fma.
}

llvm::Type* KernelEmitter::ValueType(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return llvm::Type::getFloatTy(context_);
    case DType::kF64:
      return llvm::Type::getDoubleTy(context_);
    case DType::kI64:
      return llvm::Type::getInt64Ty(context_);
    case DType::kBool:
      return llvm::Type::getInt1Ty(context_);
    case DType::kI32:
      return llvm::Type::getInt32Ty(context_);
  }
  Fail("invalid dtype ", static_cast<int>(dtype));
  return llvm::Type::getInt64Ty(context_);
}

llvm::Type* KernelEmitter::MemoryType(DType dtype) {
  return dtype == DType::kBool ? llvm::Type::getInt8Ty(context_) : ValueType(dtype);
}

absl::Status KernelEmitter::Emit() {
  // The entry block is the prologue: symbols, buffer bases, strides and accumulators are
  // put there on first use, so they dominate every loop and are loaded once.
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(context_, "entry", function_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(context_, "body", function_);
  prologue_.SetInsertPoint(entry);
  prologue_.CreateBr(body);
  prologue_.SetInsertPoint(entry->getTerminator());
  body_.SetInsertPoint(body);

  if (kernel_.out < 0 || kernel_.out >= static_cast<int>(program_.buffers.size())) {
    Fail("output buffer b", kernel_.out, " out of range (", program_.buffers.size(), " buffers)");
    return status_;
  }
  if (static_cast<int>(program_.buffers[kernel_.out].dtype) >= ir::kNumDTypes) {
    Fail("output buffer b", kernel_.out, " has an invalid dtype");
    return status_;
  }
  for (const ExprPtr& extent : kernel_.loops) {
    if (!CheckTree(extent, "loop extent")) return status_;
  }
  if (static_cast<int>(kernel_.kind) >= kNumKernelKinds) {
    Fail("unknown kernel kind ", static_cast<int>(kernel_.kind));
    return status_;
  }
  if (FactsOf(kernel_.kind).loops == KernelKindLoops::kProduct && kernel_.loops.size() < 3) {
    Fail("matmul needs loops (batch.., M, N, K), has ", kernel_.loops.size());
    return status_;
  }
  if (kernel_.range_symbol >= 0) {
    if (kernel_.parallel_loop < 0 || kernel_.parallel_loop >= NumLoopVars(kernel_)) {
      Fail("range over loop ", kernel_.parallel_loop, " of ", NumLoopVars(kernel_));
      return status_;
    }
    range_begin_ = Symbol(kernel_.range_symbol);
    range_end_ = Symbol(kernel_.range_symbol + 1);
    if (failed()) return status_;
  }
  loop_vars_.assign(NumLoopVars(kernel_), nullptr);
  for (int i = 0; i < DefaultStoreRank(kernel_); ++i) identity_.push_back(LoopVar(i));

  // Indexed by KernelKind: every kind of kernel_kinds.def has its emitter (declared from
  // the list, so a kind without a definition fails to link).
  static constexpr void (KernelEmitter::* kEmitKernel[])() = {
#define GJ_KERNEL_KIND(name, ...) &KernelEmitter::Emit##name,
#include "compiler/lower/kernel_kinds.def"
#undef GJ_KERNEL_KIND
  };
  (this->*kEmitKernel[static_cast<int>(kernel_.kind)])();
  body_.CreateRetVoid();
  if (!failed()) AddOutAliasScope();
  return status_;
}

void KernelEmitter::AddOutAliasScope() {
  if (!kernel_.out_exclusive) return;
  absl::flat_hash_map<const llvm::Value*, int> buffer_of_base;
  for (size_t b = 0; b < buffers_.size(); ++b) {
    if (buffers_[b].ready && !buffers_[b].failed) {
      buffer_of_base[buffers_[b].base] = static_cast<int>(b);
    }
  }
  // One scope per written buffer: its accesses are in it, every other access (reads of
  // other buffers, writes of the other written buffers) is noalias with it.
  llvm::MDBuilder md(context_);
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(kernel_.name);
  // In KernelWrites' order (not a hash map's), so the emitted IR is the same every run.
  std::vector<std::pair<int, llvm::Metadata*>> scopes;
  for (int b : KernelWrites(kernel_)) {
    const bool seen = std::any_of(scopes.begin(), scopes.end(),
                                  [&](const auto& scope) { return scope.first == b; });
    if (b >= 0 && b < static_cast<int>(buffers_.size()) && buffers_[b].ready &&
        !buffers_[b].failed && !seen) {
      scopes.push_back({b, md.createAnonymousAliasScope(domain, program_.buffers[b].name)});
    }
  }
  if (scopes.empty()) return;
  // Per buffer: its own scope (written buffers) and the scopes it does not alias.
  auto scope_lists = [&](int buffer) {
    std::vector<llvm::Metadata*> own, others;
    for (const auto& [b, scope] : scopes) (b == buffer ? own : others).push_back(scope);
    return std::pair{own, others};
  };
  for (llvm::Instruction& inst : llvm::instructions(*function_)) {
    const llvm::Value* ptr = llvm::getLoadStorePointerOperand(&inst);
    // Element addresses are GEP chains over a buffer's base.
    while (ptr != nullptr && !buffer_of_base.contains(ptr)) {
      const auto* gep = llvm::dyn_cast<llvm::GetElementPtrInst>(ptr);
      ptr = gep != nullptr ? gep->getPointerOperand() : nullptr;
    }
    if (ptr == nullptr) continue;  // an accumulator or staging array, the args array
    const auto [own, others] = scope_lists(buffer_of_base.at(ptr));
    if (!own.empty()) {
      inst.setMetadata(llvm::LLVMContext::MD_alias_scope, llvm::MDNode::get(context_, own));
    }
    if (!others.empty()) {
      inst.setMetadata(llvm::LLVMContext::MD_noalias, llvm::MDNode::get(context_, others));
    }
  }
}

void KernelEmitter::EmitLoop(llvm::Value* extent, int var, absl::FunctionRef<void()> body) {
  EmitLoopFrom(body_.getInt64(0), extent, var, body);
}

std::pair<llvm::Value*, llvm::Value*> KernelEmitter::LoopBounds(int var, llvm::Value* extent) {
  if (range_begin_ == nullptr || var != kernel_.parallel_loop) return {body_.getInt64(0), extent};
  // The caller's range lies within the extent; the min keeps a wrong one in bounds.
  return {range_begin_, body_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, range_end_, extent)};
}

void KernelEmitter::EmitRangedLoop(llvm::Value* extent, int var, absl::FunctionRef<void()> body) {
  auto [begin, end] = LoopBounds(var, extent);
  EmitLoopFrom(begin, end, var, body);
}

void KernelEmitter::EmitRangedBlockedLoop(llvm::Value* extent, int var, int64_t block,
                                          absl::FunctionRef<void(llvm::Value*)> whole,
                                          absl::FunctionRef<void(llvm::Value*)> rest) {
  auto [begin, end] = LoopBounds(var, extent);
  EmitBlockedLoop(end, var, block, whole, rest, begin);
}

void KernelEmitter::EmitLoopFrom(llvm::Value* begin, llvm::Value* extent, int var,
                                 absl::FunctionRef<void()> body) {
  llvm::BranchInst* back =
      EmitCountedLoop(begin, extent, 1, absl::StrCat("i", var), [&](llvm::Value* iv) {
        loop_vars_[var] = iv;
        body();
        loop_vars_[var] = nullptr;
      });
  if (var == vectorize_var_ && options_.tier == CodeTier::kBaseline) {
    // Loop-rotate carries the hint to the rotated latch.
    SetLoopHint(back, llvm::MDNode::get(
                          context_, {llvm::MDString::get(context_, "llvm.loop.vectorize.enable"),
                                     llvm::ConstantAsMetadata::get(body_.getTrue())}));
  }
}

void KernelEmitter::SetLoopHint(llvm::BranchInst* back, llvm::MDNode* hint) {
  // The loop's ID is its first operand, itself.
  llvm::MDNode* id = llvm::MDNode::getDistinct(context_, {nullptr, hint});
  id->replaceOperandWith(0, id);
  back->setMetadata(llvm::LLVMContext::MD_loop, id);
}

llvm::BranchInst* KernelEmitter::EmitCountedLoop(llvm::Value* begin, llvm::Value* end, int64_t step,
                                                 const std::string& name,
                                                 absl::FunctionRef<void(llvm::Value*)> body) {
  // Top-tested loop with an i64 phi from `begin`, `slt` exit test and an nuw/nsw increment:
  // the form LoopRotate and the vectorizer turn into a counted loop.
  llvm::BasicBlock* preheader = body_.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(context_, name + ".header", function_);
  llvm::BasicBlock* loop_body = llvm::BasicBlock::Create(context_, name + ".body", function_);
  llvm::BasicBlock* latch = llvm::BasicBlock::Create(context_, name + ".latch", function_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(context_, name + ".exit", function_);
  body_.CreateBr(header);

  body_.SetInsertPoint(header);
  llvm::PHINode* iv = body_.CreatePHI(body_.getInt64Ty(), 2, name);
  iv->addIncoming(begin, preheader);
  body_.CreateCondBr(body_.CreateICmpSLT(iv, end), loop_body, exit);

  body_.SetInsertPoint(loop_body);
  body(iv);
  body_.CreateBr(latch);

  body_.SetInsertPoint(latch);
  llvm::Value* next = body_.CreateAdd(iv, body_.getInt64(step), name + ".next", /*HasNUW=*/true,
                                      /*HasNSW=*/true);
  iv->addIncoming(next, latch);
  llvm::BranchInst* back = body_.CreateBr(header);
  body_.SetInsertPoint(exit);
  return back;
}

void KernelEmitter::EmitIfElse(llvm::Value* cond, const std::string& name,
                               absl::FunctionRef<void()> then_arm,
                               absl::FunctionRef<void()> else_arm) {
  llvm::BasicBlock* then_block = llvm::BasicBlock::Create(context_, name + ".then", function_);
  llvm::BasicBlock* else_block = llvm::BasicBlock::Create(context_, name + ".else", function_);
  llvm::BasicBlock* joined = llvm::BasicBlock::Create(context_, name + ".done", function_);
  body_.CreateCondBr(cond, then_block, else_block);
  body_.SetInsertPoint(then_block);
  then_arm();
  body_.CreateBr(joined);
  body_.SetInsertPoint(else_block);
  else_arm();
  body_.CreateBr(joined);
  body_.SetInsertPoint(joined);
}

void KernelEmitter::EmitBlockedLoop(llvm::Value* extent, int var, int64_t block,
                                    absl::FunctionRef<void(llvm::Value*)> whole,
                                    absl::FunctionRef<void(llvm::Value*)> rest,
                                    llvm::Value* start) {
  EmitBlocks(
      extent, var, block, whole,
      [&](llvm::Value* first, llvm::Value* left) {
        EmitLoop(left, var, [&] { rest(body_.CreateAdd(first, loop_vars_[var], "", true, true)); });
      },
      start);
}

void KernelEmitter::EmitBlocks(llvm::Value* extent, int var, int64_t block,
                               absl::FunctionRef<void(llvm::Value*)> whole,
                               absl::FunctionRef<void(llvm::Value*, llvm::Value*)> tail,
                               llvm::Value* start) {
  // Without a start the arithmetic is the same as before ranges existed, instruction for
  // instruction (no add of 0 for the optimizer to see through).
  auto from_start = [&](llvm::Value* v) {
    return start == nullptr ? v : body_.CreateAdd(start, v, "", true, true);
  };
  llvm::Value* count = start == nullptr ? extent : body_.CreateSub(extent, start, "", true, true);
  llvm::Value* blocks = body_.CreateSDiv(count, body_.getInt64(block));
  llvm::Value* done = body_.CreateMul(blocks, body_.getInt64(block), "", true, true);
  llvm::Value* left = body_.CreateSub(count, done, "", true, true);
  // A loop of a constant count of 0 (no whole block, or a count the block divides) is not
  // emitted: LLVM would delete it, after paying for it (a jammed kernel's one-row copy
  // was half its IR).
  auto runs = [](llvm::Value* n) {
    const auto* c = llvm::dyn_cast<llvm::ConstantInt>(n);
    return c == nullptr || c->getSExtValue() > 0;
  };
  if (runs(blocks)) {
    EmitLoop(blocks, var, [&] {
      whole(from_start(body_.CreateMul(loop_vars_[var], body_.getInt64(block), "", true, true)));
    });
  }
  if (runs(left)) tail(from_start(done), left);
}

void KernelEmitter::EmitNest(size_t depth, size_t end, absl::FunctionRef<void()> body) {
  if (depth == end) {
    body();
    return;
  }
  llvm::Value* extent = EvalTop(kernel_.loops[depth], DType::kI64, "loop extent");
  EmitRangedLoop(extent, static_cast<int>(depth), [&] { EmitNest(depth + 1, end, body); });
}

llvm::AllocaInst* KernelEmitter::Accumulator(DType dtype) {
  return prologue_.CreateAlloca(ValueType(dtype), nullptr, "acc");
}

llvm::Value* KernelEmitter::Symbol(int index) {
  if (index < 0 || index >= static_cast<int>(symbol_values_.size())) {
    Fail("symbol s", index, " out of range (", symbol_values_.size(), " symbols)");
    return prologue_.getInt64(0);
  }
  llvm::Value*& value = symbol_values_[index];
  if (value == nullptr) {
    llvm::Value* ptr =
        prologue_.CreateConstInBoundsGEP1_64(prologue_.getInt64Ty(), symbols_, index);
    value = prologue_.CreateAlignedLoad(prologue_.getInt64Ty(), ptr, llvm::Align(8),
                                        Ref(program_.symbols[index]));
  }
  return value;
}

const KernelEmitter::BufferAccess* KernelEmitter::Access(int buffer) {
  if (buffer < 0 || buffer >= static_cast<int>(buffers_.size())) {
    Fail("buffer b", buffer, " out of range (", buffers_.size(), " buffers)");
    return nullptr;
  }
  BufferAccess& access = buffers_[buffer];
  if (access.ready) return access.failed ? nullptr : &access;
  access.ready = true;
  access.failed = true;
  const Buffer& buf = program_.buffers[buffer];
  const std::string what = absl::StrCat("buffer b", buffer, " '", buf.name, "'");
  if (static_cast<int>(buf.dtype) >= ir::kNumDTypes) {
    Fail(what, " has an invalid dtype");
    return nullptr;
  }
  if (buf.kind == BufferKind::kTemp) {
    llvm::Value* offset = EvalPrologue(buf.workspace_offset, what + " workspace offset");
    if (failed()) return nullptr;
    access.base =
        prologue_.CreateInBoundsGEP(prologue_.getInt8Ty(), workspace_, offset, Ref(buf.name));
  } else if (buf.kind <= BufferKind::kOutput) {
    if (buf.arg_index < 0 || buf.arg_index >= program_.num_args) {
      Fail(what, " arg index ", buf.arg_index, " out of range (", program_.num_args, " args)");
      return nullptr;
    }
    llvm::Value* slot =
        prologue_.CreateConstInBoundsGEP1_64(prologue_.getPtrTy(), args_, buf.arg_index);
    access.base =
        prologue_.CreateAlignedLoad(prologue_.getPtrTy(), slot, llvm::Align(8), Ref(buf.name));
  } else {
    Fail(what, " has an invalid kind");
    return nullptr;
  }
  // Row-major strides in elements; the dims are i64 expressions over the symbols.
  const size_t rank = buf.dims.size();
  std::vector<llvm::Value*> dims(rank);
  for (size_t d = 0; d < rank; ++d) {
    dims[d] = EvalPrologue(buf.dims[d], absl::StrCat(what, " dim ", d));
  }
  if (failed()) return nullptr;
  access.strides.assign(rank, prologue_.getInt64(1));
  for (size_t d = rank; d-- > 1;) {
    access.strides[d - 1] = prologue_.CreateMul(access.strides[d], dims[d], "",
                                                /*HasNUW=*/false, /*HasNSW=*/true);
  }
  access.failed = false;
  return &access;
}

llvm::Value* KernelEmitter::ElementPtr(int buffer, const std::vector<ExprPtr>& indices) {
  const BufferAccess* access = Access(buffer);
  if (access == nullptr) return nullptr;
  const Buffer& buf = program_.buffers[buffer];
  if (indices.size() != buf.dims.size()) {
    Fail("buffer b", buffer, " '", buf.name, "' of rank ", buf.dims.size(), " indexed with ",
         indices.size(), " indices");
    return nullptr;
  }
  // flat = sum_d index_d * stride_d; nsw because in-bounds indices cannot overflow, which
  // lets SCEV see affine addresses.
  llvm::Value* flat = nullptr;
  for (size_t d = 0; d < indices.size(); ++d) {
    llvm::Value* index = EvalOperand(indices[d], DType::kI64, /*index=*/true);
    llvm::Value* term =
        d + 1 == indices.size() ? index : IndexOp(ScalarOp::kMul, index, access->strides[d]);
    flat = flat == nullptr ? term : IndexOp(ScalarOp::kAdd, flat, term);
  }
  if (flat == nullptr) flat = b_->getInt64(0);
  return b_->CreateInBoundsGEP(MemoryType(buf.dtype), access->base, flat);
}

llvm::Value* KernelEmitter::TargetPtr(int buffer, const std::vector<ExprPtr>& indices) {
  for (const ExprPtr& index : indices) {
    if (!CheckTree(index, "store index")) return nullptr;
  }
  memo_.clear();
  return ElementPtr(buffer, indices);
}

llvm::Value* KernelEmitter::LoadElement(int buffer, llvm::Value* ptr) {
  const DType dtype = program_.buffers[buffer].dtype;
  llvm::Value* value =
      b_->CreateAlignedLoad(MemoryType(dtype), ptr, llvm::Align(ir::DTypeSize(dtype)));
  // Bools are one byte per element; any nonzero byte is true.
  return dtype == DType::kBool ? b_->CreateICmpNE(value, b_->getInt8(0)) : value;
}

void KernelEmitter::StoreElement(int buffer, llvm::Value* ptr, llvm::Value* value) {
  if (ptr == nullptr || failed()) return;
  const DType dtype = program_.buffers[buffer].dtype;
  if (dtype == DType::kBool) value = body_.CreateZExt(value, body_.getInt8Ty());
  body_.CreateAlignedStore(value, ptr, llvm::Align(ir::DTypeSize(dtype)));
}

}  // namespace codegen_internal

namespace {

// A function with Program's calling convention, void(ptr args, ptr symbols, ptr workspace).
llvm::Function* MakeProgramFunction(llvm::Module& module, llvm::GlobalValue::LinkageTypes linkage,
                                    const std::string& name) {
  llvm::LLVMContext& context = module.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(context);
  llvm::FunctionType* type =
      llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr, ptr, ptr}, false);
  llvm::Function* f = llvm::Function::Create(type, linkage, name, &module);
  f->setDoesNotThrow();
  f->getArg(0)->setName("args");
  f->getArg(1)->setName("symbols");
  f->getArg(2)->setName("workspace");
  // Program's calling convention: the args and symbols arrays are only read, and no
  // buffer overlaps them or the workspace. Saying so lets LLVM keep symbols and bases in
  // registers across stores and skip runtime alias checks between temps and args.
  for (unsigned i = 0; i < 3; ++i) {
    f->addParamAttr(i, llvm::Attribute::NoAlias);
    f->addParamAttr(i, llvm::Attribute::NoCapture);
  }
  f->addParamAttr(0, llvm::Attribute::ReadOnly);
  f->addParamAttr(1, llvm::Attribute::ReadOnly);
  return f;
}

std::unique_ptr<llvm::Module> NewModule(const std::string& name, llvm::LLVMContext& context,
                                        const llvm::DataLayout& data_layout,
                                        const std::string& triple) {
  auto module = std::make_unique<llvm::Module>(name.empty() ? "graphjit" : name, context);
  module->setDataLayout(data_layout);
  module->setTargetTriple(triple);
  return module;
}

absl::Status Verify(const llvm::Module& module, const std::string& what) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (llvm::verifyModule(module, &os)) {
    os.flush();
    return absl::InternalError(absl::StrCat(what, ": invalid LLVM module: ", message));
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// Adds `program` to `module` as the external function `function_name`, which runs its
// kernels in order; each kernel is an internal function `prefix<name>` with a single call
// site, which O2's inliner folds into the function. The prefix keeps kernel names (say
// "exp") away from the libm functions the kernels call.
absl::Status AddProgramFunction(llvm::Module& module, const Program& program,
                                const std::string& function_name, const std::string& prefix,
                                const CompileOptions& options) {
  // Created first, so a kernel of the same name cannot take the function's name.
  llvm::Function* fn =
      MakeProgramFunction(module, llvm::GlobalValue::ExternalLinkage, function_name);
  std::vector<llvm::Function*> kernels;
  for (const Kernel& kernel : program.kernels) {
    llvm::Function* f = MakeProgramFunction(module, llvm::GlobalValue::InternalLinkage,
                                            absl::StrCat(prefix, kernel.name));
    codegen_internal::KernelEmitter emitter(program, kernel, f, options);
    GJ_RETURN_IF_ERROR(emitter.Emit());
    kernels.push_back(f);
  }
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  for (llvm::Function* f : kernels) {
    builder.CreateCall(f, {fn->getArg(0), fn->getArg(1), fn->getArg(2)});
  }
  builder.CreateRetVoid();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<llvm::Module>> EmitModule(
    const Program& program, llvm::LLVMContext& context, const llvm::DataLayout& data_layout,
    const std::string& triple, const std::string& function_name, const CompileOptions& options) {
  GJ_RETURN_IF_ERROR(
      CheckVectorBytes(options.max_vector_bytes, "CompileOptions::max_vector_bytes"));
  std::unique_ptr<llvm::Module> module = NewModule(program.name, context, data_layout, triple);
  if (absl::Status s = AddProgramFunction(*module, program, function_name, "gj.", options); !s.ok())
    return s;
  if (absl::Status s = Verify(*module, absl::StrCat("program '", program.name, "'")); !s.ok()) {
    return s;
  }
  return module;
}

absl::StatusOr<std::unique_ptr<llvm::Module>> EmitFunctionsModule(
    const std::vector<const Program*>& programs, const std::vector<std::string>& function_names,
    llvm::LLVMContext& context, const llvm::DataLayout& data_layout, const std::string& triple,
    const CompileOptions& options) {
  if (programs.size() != function_names.size()) {
    return absl::InternalError("EmitFunctionsModule: one function name per program");
  }
  GJ_RETURN_IF_ERROR(
      CheckVectorBytes(options.max_vector_bytes, "CompileOptions::max_vector_bytes"));
  std::unique_ptr<llvm::Module> module = NewModule("kernels", context, data_layout, triple);
  for (size_t i = 0; i < programs.size(); ++i) {
    GJ_RETURN_IF_ERROR(AddProgramFunction(*module, *programs[i], function_names[i],
                                          absl::StrCat("gj.", i, "."), options));
  }
  GJ_RETURN_IF_ERROR(Verify(*module, "kernel module"));
  return module;
}

}  // namespace graphjit::compiler
