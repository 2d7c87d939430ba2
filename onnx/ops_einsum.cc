// Einsum: the equation's operands contracted pairwise, each contraction a batched matmul.
// Labels only one operand has (and the output lacks) are summed out first; then the two
// operands are transposed to [batch, free, contracted] and [batch, contracted, free],
// flattened to three dims, multiplied and unflattened, and the result transposed to the
// output's order. Ellipses and repeated labels within one operand (diagonals) are refused.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/status_macros.h"
#include "onnx/context.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::OpCode;
using ir::Shape;
using ir::ValueId;

// An operand: a value and the label of each of its dims.
struct Term {
  ValueId value;
  std::string labels;
};

bool Has(const std::string& labels, char c) { return labels.find(c) != std::string::npos; }

// `t` with its dims reordered to `labels` (a permutation of t.labels).
Term Permute(Context& ctx, const Term& t, const std::string& labels) {
  if (labels == t.labels) return t;
  std::vector<int64_t> perm;
  for (char c : labels) perm.push_back(static_cast<int64_t>(t.labels.find(c)));
  return {Transpose(ctx, t.value, perm), labels};
}

// Sums out the dims of `t` whose labels are not in `keep`.
Term SumOut(Context& ctx, const Term& t, const std::string& keep) {
  std::vector<int> axes;
  std::string rest;
  for (size_t d = 0; d < t.labels.size(); ++d) {
    if (Has(keep, t.labels[d])) {
      rest += t.labels[d];
    } else {
      axes.push_back(static_cast<int>(d));
    }
  }
  if (axes.empty()) return t;
  return {ReduceAxes(ctx, OpCode::kReduceSum, t.value, axes, /*keepdims=*/false), rest};
}

// a and b contracted into the labels of `keep` they have (their shared labels not in
// `keep` are summed over).
Term Contract(Context& ctx, Term a, Term b, const std::string& keep) {
  a = SumOut(ctx, a, keep + b.labels);
  b = SumOut(ctx, b, keep + a.labels);
  std::string batch, free_a, free_b, summed;
  for (char c : a.labels) {
    if (!Has(b.labels, c)) {
      free_a += c;
    } else if (Has(keep, c)) {
      batch += c;
    } else {
      summed += c;
    }
  }
  for (char c : b.labels) {
    if (!Has(a.labels, c)) free_b += c;
  }
  a = Permute(ctx, a, batch + free_a + summed);
  b = Permute(ctx, b, batch + summed + free_b);
  const Shape sa = ctx.type(a.value).shape, sb = ctx.type(b.value).shape;
  const int nb = static_cast<int>(batch.size()), nf = static_cast<int>(free_a.size());
  const int ns = static_cast<int>(summed.size());
  ValueId a3 = Reshape(
      ctx, a.value,
      {DimProduct(sa, 0, nb), DimProduct(sa, nb, nb + nf), DimProduct(sa, nb + nf, nb + nf + ns)});
  ValueId b3 = Reshape(ctx, b.value,
                       {DimProduct(sb, 0, nb), DimProduct(sb, nb, nb + ns),
                        DimProduct(sb, nb + ns, static_cast<int>(sb.size()))});
  ValueId product = ctx.Op(OpCode::kMatmul, {a3, b3});
  Shape out(sa.begin(), sa.begin() + nb + nf);
  out.insert(out.end(), sb.begin() + nb + ns, sb.end());
  return {Reshape(ctx, product, out), batch + free_a + free_b};
}

absl::Status Einsum(Context& ctx) {
  std::string equation;
  for (char c : ctx.AttrString("equation", "")) {
    if (c != ' ') equation += c;
  }
  if (equation.find("...") != std::string::npos) {
    return ctx.Unimplemented(absl::StrCat("Einsum with an ellipsis ('", equation, "')"));
  }
  std::vector<std::string> sides = absl::StrSplit(equation, "->");
  if (equation.empty() || sides.size() > 2) {
    return ctx.Invalid(absl::StrCat("Einsum equation '", equation,
                                    "': expected terms separated by ',', then optionally '->'"));
  }
  std::vector<std::string> terms = absl::StrSplit(sides[0], ',');
  if (static_cast<int>(terms.size()) != ctx.num_inputs()) {
    return ctx.Invalid(absl::StrCat("Einsum equation '", equation, "' has ", terms.size(),
                                    " operands, the node ", ctx.num_inputs(), " inputs"));
  }
  std::vector<Term> operands;
  std::string all;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    GJ_ASSIGN_OR_RETURN(ValueId x, ctx.InNode(i));
    const std::string& t = terms[i];
    if (!ir::IsFloat(ctx.type(x).dtype)) return ctx.Unimplemented("Einsum of integers");
    if (static_cast<int>(t.size()) != ctx.type(x).rank()) {
      return ctx.Invalid(absl::StrCat("Einsum term '", t, "' has ", t.size(), " labels, input ", i,
                                      " rank ", ctx.type(x).rank()));
    }
    for (size_t d = 0; d < t.size(); ++d) {
      if (!std::isalpha(static_cast<unsigned char>(t[d]))) {
        return ctx.Invalid(absl::StrCat("Einsum term '", t, "': labels are letters"));
      }
      if (t.find(t[d]) != d) {
        return ctx.Unimplemented(absl::StrCat("Einsum term '", t, "' repeats label '",
                                              std::string(1, t[d]), "' (a diagonal)"));
      }
    }
    operands.push_back({x, t});
    all += t;
  }
  std::string output;
  if (sides.size() == 2) {
    output = sides[1];
    for (char c : output) {
      if (!Has(all, c) || std::count(output.begin(), output.end(), c) != 1) {
        return ctx.Invalid(absl::StrCat("Einsum output '", output, "': label '", std::string(1, c),
                                        "' must appear once, and in an operand"));
      }
    }
  } else {
    // Implicit output: the labels used once, in alphabetical order.
    for (char c = 'A'; c <= 'z'; ++c) {
      if (std::count(all.begin(), all.end(), c) == 1) output += c;
    }
  }
  // Left to right; each contraction keeps the labels the output or a later operand needs.
  Term acc = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) {
    std::string keep = output;
    for (size_t j = i + 1; j < operands.size(); ++j) keep += operands[j].labels;
    acc = Contract(ctx, acc, operands[i], keep);
    GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  }
  acc = Permute(ctx, SumOut(ctx, acc, output), output);
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  return ctx.SetOut(0, acc.value);
}

}  // namespace

void AddEinsumOps(OpTable* t) { (*t)["Einsum"] = Einsum; }

}  // namespace graphjit::onnx
