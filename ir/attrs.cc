#include "ir/attrs.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace graphjit::ir {

absl::string_view AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt:
      return "int";
    case AttrKind::kInts:
      return "ints";
    case AttrKind::kFloat:
      return "float";
    case AttrKind::kFloats:
      return "floats";
    case AttrKind::kDim:
      return "dim";
    case AttrKind::kDims:
      return "dims";
    case AttrKind::kDType:
      return "dtype";
    case AttrKind::kBool:
      return "bool";
    case AttrKind::kString:
      return "string";
  }
  return "?";
}

void Attrs::Set(absl::string_view name, AttrValue value) {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, absl::string_view n) { return item.first < n; });
  if (it != items_.end() && it->first == name) {
    it->second = std::move(value);
  } else {
    items_.insert(it, {std::string(name), std::move(value)});
  }
}

const AttrValue* Attrs::Find(absl::string_view name) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), name,
                             [](const auto& item, absl::string_view n) { return item.first < n; });
  return it != items_.end() && it->first == name ? &it->second : nullptr;
}

namespace {

// Shortest text that parses back to the same double ("inf", "-inf", "nan" for the
// non-finite values).
std::string FloatText(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // The shortest text that reads back as the same double (so -10 prints as -10.0, not
  // -1e+01); std::to_chars guarantees the round trip.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, ec == std::errc() ? end : buf);
  // Keep a float-looking spelling so `2.0` does not read as an int.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string QuoteString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string AttrValueToString(const AttrValue& v) {
  struct Printer {
    std::string operator()(int64_t x) const { return absl::StrCat(x); }
    std::string operator()(const std::vector<int64_t>& x) const {
      return absl::StrCat("[", absl::StrJoin(x, ", "), "]");
    }
    std::string operator()(double x) const { return FloatText(x); }
    std::string operator()(const std::vector<double>& x) const {
      std::vector<std::string> parts;
      parts.reserve(x.size());
      for (double d : x) parts.push_back(FloatText(d));
      return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
    }
    std::string operator()(const SymExpr& x) const { return x.ToString(); }
    std::string operator()(const std::vector<SymExpr>& x) const { return ShapeToString(x); }
    std::string operator()(DType x) const { return std::string(DTypeName(x)); }
    std::string operator()(bool x) const { return x ? "true" : "false"; }
    std::string operator()(const std::string& x) const { return QuoteString(x); }
  };
  return std::visit(Printer{}, v);
}

}  // namespace graphjit::ir
