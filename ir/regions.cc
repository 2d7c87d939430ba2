#include "ir/regions.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace graphjit::ir {
namespace {

absl::Status RegionError(OpCode op, int i, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(OpName(op), ": region ", RegionName(op, i), " ", what));
}

// Region `i`'s inputs must take `operands` in order (the op's from `first` on).
absl::Status CheckInputs(OpCode op, int i, const Graph& region,
                         absl::Span<const ValueType> operands, int first = 0) {
  const std::vector<ValueId> inputs = region.Inputs();
  if (inputs.size() != operands.size()) {
    return RegionError(op, i,
                       absl::StrCat("has ", inputs.size(), " inputs, expected ", operands.size(),
                                    " (one per operand of the ", OpName(op),
                                    first > 0 ? " after its condition)" : ")"));
  }
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Node& in = region.node(inputs[k]);
    if (!(in.type == operands[k])) {
      return RegionError(
          op, i,
          absl::StrCat("input ", k, " '", in.name(), "' is ", TypeToString(in.type),
                       ", but operand ", first + k, " is ", TypeToString(operands[k])));
    }
  }
  return absl::OkStatus();
}

// An if's branches take its operands after the condition and return its declared type.
absl::Status CheckBranches(const std::vector<std::shared_ptr<const Graph>>& regions,
                           absl::Span<const ValueType> operands, const Attrs& attrs) {
  const ValueType want{attrs.Get<DType>("dtype"), attrs.GetDims("shape")};
  for (int i = 0; i < 2; ++i) {
    if (regions[i] == nullptr) return RegionError(OpCode::kIf, i, "is missing");
    const Graph& branch = *regions[i];
    if (absl::Status s = CheckInputs(OpCode::kIf, i, branch, operands.subspan(1), 1); !s.ok()) {
      return s;
    }
    if (branch.outputs().size() != 1 || !(branch.type(branch.outputs()[0]) == want)) {
      const std::string got = branch.outputs().size() == 1
                                  ? TypeToString(branch.type(branch.outputs()[0]))
                                  : absl::StrCat(branch.outputs().size(), " values");
      return RegionError(OpCode::kIf, i,
                         absl::StrCat("must return one ", TypeToString(want), ", returns ", got));
    }
  }
  return absl::OkStatus();
}

// Region `i` (a loop body) returns the carried values' exact types first.
absl::Status CheckCarried(OpCode op, int i, const Graph& body, absl::Span<const ValueType> operands,
                          int64_t carried) {
  for (int64_t k = 0; k < carried; ++k) {
    const ValueType& next = body.type(body.outputs()[k]);
    if (!(next == operands[k])) {
      return RegionError(
          op, i,
          absl::StrCat("returns ", TypeToString(next), " for carried value ", k, ", which is ",
                       TypeToString(operands[k]), ": a carried value keeps its dtype and shape"));
    }
  }
  return absl::OkStatus();
}

// A scan's body takes (carried, a row of each scanned input, invariants) and returns the
// carried types first.
absl::Status CheckScanBody(const std::vector<std::shared_ptr<const Graph>>& regions,
                           absl::Span<const ValueType> operands, const Attrs& attrs) {
  if (regions[0] == nullptr) return RegionError(OpCode::kScan, 0, "is missing");
  const Graph& body = *regions[0];
  const int64_t carried = attrs.GetInt("carried"), scanned = attrs.GetInt("scanned");
  std::vector<ValueType> takes(operands.begin(), operands.end());
  for (int64_t k = carried; k < carried + scanned; ++k) {
    takes[k].shape.erase(takes[k].shape.begin());
  }
  if (absl::Status s = CheckInputs(OpCode::kScan, 0, body, takes); !s.ok()) return s;
  if (static_cast<int64_t>(body.outputs().size()) < carried) {
    return RegionError(OpCode::kScan, 0,
                       absl::StrCat("returns ", body.outputs().size(), " values, expected ",
                                    carried, " carried ones and then the per-row ones"));
  }
  return CheckCarried(OpCode::kScan, 0, body, operands, carried);
}

}  // namespace

int NumRegions(OpCode op) {
  if (op == OpCode::kScan) return 1;
  return op == OpCode::kWhile || op == OpCode::kIf ? 2 : 0;
}

int NumScanOutputs(const Node& n) {
  if (n.op != OpCode::kScan || n.regions.size() != 1) return 0;
  return static_cast<int>(n.regions[0]->outputs().size() - n.attrs.GetInt("carried"));
}

const char* RegionName(OpCode op, int i) {
  if (op == OpCode::kWhile) return i == 0 ? "cond" : "body";
  if (op == OpCode::kIf) return i == 0 ? "then" : "else";
  if (op == OpCode::kScan) return "body";
  return "?";
}

absl::Status CheckRegionSignatures(OpCode op, absl::Span<const ValueType> operands,
                                   const Attrs& attrs,
                                   const std::vector<std::shared_ptr<const Graph>>& regions) {
  const int want = NumRegions(op);
  if (static_cast<int>(regions.size()) != want) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpName(op), ": has ", regions.size(), " regions, expected ", want));
  }
  if (op == OpCode::kIf) return CheckBranches(regions, operands, attrs);
  if (op == OpCode::kScan) return CheckScanBody(regions, operands, attrs);
  if (op != OpCode::kWhile) return absl::OkStatus();
  for (int i = 0; i < want; ++i) {
    if (regions[i] == nullptr) return RegionError(op, i, "is missing");
    if (absl::Status s = CheckInputs(op, i, *regions[i], operands); !s.ok()) return s;
  }
  const Graph& cond = *regions[0];
  const ValueType bool_scalar{DType::kBool, {}};
  if (cond.outputs().size() != 1 || !(cond.type(cond.outputs()[0]) == bool_scalar)) {
    std::string got = cond.outputs().size() == 1 ? TypeToString(cond.type(cond.outputs()[0]))
                                                 : absl::StrCat(cond.outputs().size(), " values");
    return RegionError(op, 0, absl::StrCat("must return one bool[] value, returns ", got));
  }
  const Graph& body = *regions[1];
  const int64_t carried = attrs.GetInt("carried");
  if (static_cast<int64_t>(body.outputs().size()) != carried) {
    return RegionError(op, 1,
                       absl::StrCat("returns ", body.outputs().size(), " values, expected ",
                                    carried, " (one per carried value)"));
  }
  return CheckCarried(op, 1, body, operands, carried);
}

}  // namespace graphjit::ir
