// A vector's lanes stored: whole, or the lanes of a mask, where masked stores are slow
// (AVX's vmaskmovps on AMD's Zen 1 to 3, KernelEmitter::MaskedStoresAreSlow) and the mask
// is a constant prefix, as plain stores of power-of-two pieces.
#include <bit>
#include <optional>
#include <vector>

#include "compiler/codegen/codegen_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"

namespace graphjit::compiler::codegen_internal {

using ir::DType;

void KernelEmitter::StoreLanes(int buffer, llvm::Value* ptr, llvm::Value* value,
                               llvm::Value* mask) {
  if (ptr == nullptr || failed()) return;
  const DType dtype = program_.buffers[buffer].dtype;
  if (dtype == DType::kBool) {
    const auto* type = llvm::cast<llvm::VectorType>(value->getType());
    value = body_.CreateZExt(value, llvm::VectorType::get(body_.getInt8Ty(), type));
  }
  const llvm::Align align(ir::DTypeSize(dtype));
  if (mask == nullptr) {
    body_.CreateAlignedStore(value, ptr, align);
    return;
  }
  StoreMasked(value, ptr, align, mask);
}

void KernelEmitter::StoreMasked(llvm::Value* value, llvm::Value* ptr, llvm::Align align,
                                llvm::Value* mask) {
  if (MaskedStoresAreSlow()) {
    if (const std::optional<int> count = ConstantPrefix(mask); count.has_value()) {
      return StorePrefix(value, ptr, align, *count);
    }
  }
  body_.CreateMaskedStore(value, ptr, align, mask);
}

std::optional<int> KernelEmitter::ConstantPrefix(llvm::Value* mask) {
  auto* c = llvm::dyn_cast<llvm::Constant>(mask);
  if (c == nullptr) return std::nullopt;
  const int lanes =
      static_cast<int>(llvm::cast<llvm::FixedVectorType>(mask->getType())->getNumElements());
  int count = 0;
  while (count < lanes && c->getAggregateElement(count)->isOneValue()) ++count;
  for (int j = count; j < lanes; ++j) {
    if (!c->getAggregateElement(j)->isNullValue()) return std::nullopt;
  }
  return count;
}

void KernelEmitter::StorePrefix(llvm::Value* value, llvm::Value* ptr, llvm::Align align,
                                int count) {
  const auto* type = llvm::cast<llvm::FixedVectorType>(value->getType());
  const int lanes = static_cast<int>(type->getNumElements());
  int at = 0;
  for (int piece = std::bit_floor(static_cast<unsigned>(lanes)); piece >= 1; piece /= 2) {
    if (count - at < piece) continue;
    llvm::Value* part = nullptr;
    if (piece == 1) {
      part = body_.CreateExtractElement(value, body_.getInt64(at));
    } else if (piece == lanes) {
      part = value;
    } else {
      std::vector<int> picked(piece);
      for (int j = 0; j < piece; ++j) picked[j] = at + j;
      part = body_.CreateShuffleVector(value, picked);
    }
    body_.CreateAlignedStore(
        part, at == 0 ? ptr : body_.CreateGEP(type->getElementType(), ptr, body_.getInt64(at)),
        align);
    at += piece;
  }
}

}  // namespace graphjit::compiler::codegen_internal
