// Node attributes: a small sorted name -> value map whose allowed names and kinds come
// from each op's schema in ir/ops.def.
#ifndef GRAPHJIT_IR_ATTRS_H_
#define GRAPHJIT_IR_ATTRS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/string_view.h"
#include "ir/check.h"
#include "ir/dtype.h"
#include "ir/sym_expr.h"

namespace graphjit::ir {

enum class AttrKind { kInt, kInts, kFloat, kFloats, kDim, kDims, kDType, kBool, kString };

using AttrValue = std::variant<int64_t, std::vector<int64_t>, double, std::vector<double>, SymExpr,
                               std::vector<SymExpr>, DType, bool, std::string>;

// The kind an AttrValue holds (the variant's alternatives are in AttrKind order).
inline AttrKind KindOf(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }
absl::string_view AttrKindName(AttrKind kind);

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init) {
    for (const auto& [k, v] : init) Set(k, v);
  }

  void Set(absl::string_view name, AttrValue value);
  bool Has(absl::string_view name) const { return Find(name) != nullptr; }
  const AttrValue* Find(absl::string_view name) const;

  // Typed access; CHECK-fails if missing or of another kind (the verifier rules that out
  // for every node of a verified graph).
  template <typename T>
  const T& Get(absl::string_view name) const {
    const AttrValue* v = Find(name);
    GJ_CHECK(v != nullptr) << "missing attribute '" << name << "'";
    GJ_CHECK(std::holds_alternative<T>(*v)) << "attribute '" << name << "' has another kind";
    return std::get<T>(*v);
  }
  int64_t GetInt(absl::string_view name) const { return Get<int64_t>(name); }
  double GetFloat(absl::string_view name) const { return Get<double>(name); }
  const SymExpr& GetDim(absl::string_view name) const { return Get<SymExpr>(name); }
  const Shape& GetDims(absl::string_view name) const { return Get<std::vector<SymExpr>>(name); }

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }

  friend bool operator==(const Attrs& a, const Attrs& b) { return a.items_ == b.items_; }

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;  // sorted by name
};

// Text of one attribute value as the IR printer writes it.
std::string AttrValueToString(const AttrValue& v);

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_ATTRS_H_
