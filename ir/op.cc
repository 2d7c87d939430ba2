// The op table built from ir/ops.def, and the generic arity / attribute checks.
#include "ir/op.h"

#include <array>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/check.h"
#include "ir/shape_rules.h"
#include "ir/status_macros.h"

namespace graphjit::ir {
namespace {

std::vector<AttrSpec> ParseSchema(absl::string_view schema) {
  std::vector<AttrSpec> specs;
  if (schema.empty()) return specs;
  for (absl::string_view item : absl::StrSplit(schema, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, ':');
    GJ_CHECK_EQ(parts.size(), 2u) << "bad schema item '" << item << "'";
    AttrSpec spec;
    spec.name = std::string(parts[0]);
    absl::string_view kind = parts[1];
    if (!kind.empty() && kind.back() == '?') {
      spec.optional = true;
      kind.remove_suffix(1);
    }
    bool found = false;
    for (int k = 0; k <= static_cast<int>(AttrKind::kString); ++k) {
      if (AttrKindName(static_cast<AttrKind>(k)) == kind) {
        spec.kind = static_cast<AttrKind>(k);
        found = true;
      }
    }
    GJ_CHECK(found) << "unknown attribute kind '" << kind << "' in schema";
    specs.push_back(spec);
  }
  return specs;
}

struct OpTable {
  std::array<OpInfo, kNumOps> infos;
  absl::flat_hash_map<std::string, OpCode> by_name;

  OpTable() {
    int i = 0;
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, ...) \
  infos[i++] = OpInfo{OpCode::k##name, spelling, min_arity, max_arity, ParseSchema(schema), &rule};
#include "ir/ops.def"
#undef GJ_OP
    for (const OpInfo& info : infos) by_name.emplace(info.spelling, info.code);
  }
};

const OpTable& Table() {
  static const OpTable* table = new OpTable();
  return *table;
}

}  // namespace

std::string TypeToString(const ValueType& type) {
  return absl::StrCat(DTypeName(type.dtype), ShapeToString(type.shape));
}

const OpInfo& GetOpInfo(OpCode op) { return Table().infos[static_cast<int>(op)]; }

std::optional<OpCode> OpFromName(absl::string_view spelling) {
  auto it = Table().by_name.find(spelling);
  if (it == Table().by_name.end()) return std::nullopt;
  return it->second;
}

absl::Status CheckOperandsAndAttrs(OpCode op, int num_operands, const Attrs& attrs) {
  const OpInfo& info = GetOpInfo(op);
  if (num_operands < info.min_arity || (info.max_arity >= 0 && num_operands > info.max_arity)) {
    std::string expected = info.max_arity < 0 ? absl::StrCat("at least ", info.min_arity)
                           : info.min_arity == info.max_arity
                               ? absl::StrCat(info.min_arity)
                               : absl::StrCat(info.min_arity, " to ", info.max_arity);
    return absl::InvalidArgumentError(
        absl::StrCat(info.spelling, " takes ", expected, " operand(s), got ", num_operands));
  }
  for (const AttrSpec& spec : info.attrs) {
    const AttrValue* v = attrs.Find(spec.name);
    if (v == nullptr) {
      if (spec.optional) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          info.spelling, " requires attribute '", spec.name, "' (", AttrKindName(spec.kind), ")"));
    }
    if (KindOf(*v) != spec.kind) {
      return absl::InvalidArgumentError(absl::StrCat(info.spelling, " attribute '", spec.name,
                                                     "' must be ", AttrKindName(spec.kind),
                                                     ", got ", AttrKindName(KindOf(*v))));
    }
  }
  for (const auto& [name, value] : attrs.items()) {
    bool known = false;
    for (const AttrSpec& spec : info.attrs) known |= spec.name == name;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrCat(info.spelling, " has no attribute '", name, "'"));
    }
  }
  return absl::OkStatus();
}

namespace {

// i32 is a storage type (ir/dtype.h): made by inputs, params and casts, read by casts.
absl::Status CheckStorageOnly(OpCode op, absl::Span<const ValueType> in, const ValueType& out) {
  if (op == OpCode::kCast) return absl::OkStatus();
  for (const ValueType& t : in) {
    if (t.dtype == DType::kI32) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpName(op), ": operand ", TypeToString(t),
                       " is i32, a storage type: cast it to i64 to compute"));
    }
  }
  if (out.dtype == DType::kI32 && op != OpCode::kInput && op != OpCode::kParam) {
    return absl::InvalidArgumentError(absl::StrCat(
        OpName(op), ": i32 is a storage type (inputs, params, casts): make i64 and cast it"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ValueType> InferType(OpCode op, absl::Span<const ValueType> in, const Attrs& attrs) {
  if (absl::Status s = CheckOperandsAndAttrs(op, static_cast<int>(in.size()), attrs); !s.ok()) {
    return s;
  }
  absl::StatusOr<ValueType> out = GetOpInfo(op).shape_rule(op, in, attrs);
  if (out.ok()) GJ_RETURN_IF_ERROR(CheckStorageOnly(op, in, *out));
  return out;
}

absl::StatusOr<int> NormalizeAxis(int64_t axis, int rank, absl::string_view what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " axis ", axis, " is out of range for rank ", rank));
  }
  return static_cast<int>(a);
}

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the right, as numpy does.
    const SymExpr* da = i < rank - a.size() ? nullptr : &a[i - (rank - a.size())];
    const SymExpr* db = i < rank - b.size() ? nullptr : &b[i - (rank - b.size())];
    if (da == nullptr) {
      out[i] = *db;
    } else if (db == nullptr || *da == *db) {
      out[i] = *da;
    } else if (da->AsConstant() == 1) {
      out[i] = *db;
    } else if (db->AsConstant() == 1) {
      out[i] = *da;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot broadcast ", ShapeToString(a), " with ", ShapeToString(b), ": dim ",
                       i, " is ", da->ToString(), " vs ", db->ToString()));
    }
  }
  return out;
}

}  // namespace graphjit::ir
