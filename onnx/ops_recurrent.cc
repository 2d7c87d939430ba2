// Recurrent layers: LSTM, GRU and RNN (opset 7 to 14: directions, activations with their
// alpha and beta, clip, sequence_lens, layout, peepholes, input_forget, linear_before_reset,
// initial states). The input projections of every step are one product before the steps;
// the steps are unrolled over the sequence length, which must be known at import (a model
// with a symbolic one is imported at its call's shapes, onnx/specialize.h), each step a
// product with the recurrent weights and a cell of pointwise ops that fusion makes one
// kernel. Steps past a batch entry's sequence_lens keep its state and write zeros to Y, as
// the ONNX reference does.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/sym_bounds.h"
#include "onnx/op_helpers.h"
#include "onnx/ops.h"

namespace graphjit::onnx {
namespace {

using ir::DType;
using ir::OpCode;
using ir::Shape;
using ir::SymExpr;
using ir::ValueId;

// Steps beyond this are refused rather than unrolled: each is a few kernels of the graph.
constexpr int64_t kMaxSteps = 4096;

enum class Kind { kLstm, kGru, kRnn };

// Gates per kind, in ONNX's order of W's rows: LSTM i o f c, GRU z r h, RNN one.
int NumGates(Kind kind) { return kind == Kind::kLstm ? 4 : kind == Kind::kGru ? 3 : 1; }
// Activations per direction: LSTM f g h, GRU f g, RNN f.
int NumActivations(Kind kind) { return kind == Kind::kLstm ? 3 : kind == Kind::kGru ? 2 : 1; }

// One activation of the `activations` attribute, with its alpha and beta.
struct Activation {
  std::string name;  // lower case
  double alpha = 0, beta = 0;
};

bool TakesAlpha(const std::string& f) {
  return f == "affine" || f == "leakyrelu" || f == "thresholdedrelu" || f == "scaledtanh" ||
         f == "hardsigmoid" || f == "elu";
}
bool TakesBeta(const std::string& f) {
  return f == "affine" || f == "scaledtanh" || f == "hardsigmoid";
}
double DefaultAlpha(const std::string& f) {
  if (f == "leakyrelu") return 0.01;
  if (f == "hardsigmoid") return 0.2;
  return 1.0;  // affine, thresholdedrelu, scaledtanh, elu
}
double DefaultBeta(const std::string& f) { return f == "hardsigmoid" ? 0.5 : 0.0; }

// The activations of every direction (NumActivations each), the defaults where the node
// names none; activation_alpha and activation_beta are consumed in order by the functions
// that take them, as ONNX Runtime reads them.
absl::StatusOr<std::vector<Activation>> Activations(const Context& ctx, Kind kind, int directions) {
  std::vector<std::string> names;
  if (const pb::AttributeProto* a = ctx.Attr("activations")) {
    for (const std::string& s : a->strings()) names.push_back(absl::AsciiStrToLower(s));
  } else {
    const std::vector<std::string> defaults =
        kind == Kind::kLstm  ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
        : kind == Kind::kGru ? std::vector<std::string>{"sigmoid", "tanh"}
                             : std::vector<std::string>{"tanh"};
    for (int d = 0; d < directions; ++d)
      names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (static_cast<int>(names.size()) != NumActivations(kind) * directions) {
    return ctx.Invalid(absl::StrCat("has ", names.size(), " activations, expected ",
                                    NumActivations(kind) * directions, " (", NumActivations(kind),
                                    " per direction)"));
  }
  std::vector<float> alphas, betas;
  if (const pb::AttributeProto* a = ctx.Attr("activation_alpha"))
    alphas.assign(a->floats().begin(), a->floats().end());
  if (const pb::AttributeProto* a = ctx.Attr("activation_beta"))
    betas.assign(a->floats().begin(), a->floats().end());
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& f : names) {
    static const char* const kKnown[] = {
        "relu",       "tanh",        "sigmoid", "affine",   "leakyrelu", "thresholdedrelu",
        "scaledtanh", "hardsigmoid", "elu",     "softsign", "softplus"};
    if (std::find(std::begin(kKnown), std::end(kKnown), f) == std::end(kKnown)) {
      return ctx.Unimplemented(absl::StrCat("activation '", f, "'"));
    }
    Activation a{f, DefaultAlpha(f), DefaultBeta(f)};
    if (TakesAlpha(f) && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (TakesBeta(f) && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  return out;
}

ValueId Apply(Context& ctx, const Activation& f, ValueId x) {
  auto s = [&](double v) { return ctx.ScalarLike(v, x); };
  auto mul = [&](ValueId a, ValueId b) { return ctx.Op(OpCode::kMul, {a, b}); };
  auto add = [&](ValueId a, ValueId b) { return ctx.Op(OpCode::kAdd, {a, b}); };
  const std::string& n = f.name;
  if (n == "sigmoid") return ctx.Op(OpCode::kSigmoid, {x});
  if (n == "tanh") return ctx.Op(OpCode::kTanh, {x});
  if (n == "relu") return ctx.Op(OpCode::kMaximum, {x, s(0)});
  if (n == "affine") return add(mul(x, s(f.alpha)), s(f.beta));
  if (n == "leakyrelu") {
    return ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {x, s(0)}), mul(x, s(f.alpha)), x});
  }
  if (n == "thresholdedrelu") {
    return ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kGt, {x, s(f.alpha)}), x, s(0)});
  }
  if (n == "scaledtanh") return mul(s(f.alpha), ctx.Op(OpCode::kTanh, {mul(x, s(f.beta))}));
  if (n == "hardsigmoid") {
    ValueId lin = add(mul(x, s(f.alpha)), s(f.beta));
    return ctx.Op(OpCode::kMaximum, {ctx.Op(OpCode::kMinimum, {lin, s(1)}), s(0)});
  }
  if (n == "elu") {
    ValueId em1 = ctx.Op(OpCode::kSub, {ctx.Op(OpCode::kExp, {x}), s(1)});
    return ctx.Op(OpCode::kWhere, {ctx.Op(OpCode::kLt, {x, s(0)}), mul(em1, s(f.alpha)), x});
  }
  if (n == "softsign") {
    return ctx.Op(OpCode::kDiv, {x, add(s(1), ctx.Op(OpCode::kAbs, {x}))});
  }
  return ctx.Op(OpCode::kLog, {add(ctx.Op(OpCode::kExp, {x}), s(1))});  // softplus
}

ValueId SliceAxis(Context& ctx, ValueId x, int64_t axis, SymExpr start, SymExpr end) {
  return ctx.Op(OpCode::kSlice, {x}, {{"axis", axis}, {"start", start}, {"end", end}});
}

// Row `d` of a [D, ...] value, without the leading axis.
ValueId Row(Context& ctx, ValueId x, int64_t d) {
  Shape shape = ctx.type(x).shape;
  shape.erase(shape.begin());
  return Reshape(ctx, SliceAxis(ctx, x, 0, d, d + 1), shape);
}

// The layer's inputs, normalized to layout 0: X [T, B, I], states [D, B, H].
struct Layer {
  Kind kind;
  int64_t hidden = 0, steps = 0, directions = 1;
  SymExpr batch;
  ValueId x, w, r;
  ValueId bias = ir::kInvalidValue;  // [D, 2 * G * H]
  ValueId lens = ir::kInvalidValue;  // [B] i64
  ValueId h0 = ir::kInvalidValue, c0 = ir::kInvalidValue, peep = ir::kInvalidValue;
  std::vector<Activation> activations;
  double clip = 0;  // 0: none
  bool input_forget = false, linear_before_reset = false;
};

absl::StatusOr<Layer> ReadLayer(Context& ctx, Kind kind) {
  Layer l;
  l.kind = kind;
  GJ_RETURN_IF_ERROR(ctx.ExpectInputs(3, kind == Kind::kLstm ? 8 : 6));
  GJ_ASSIGN_OR_RETURN(l.x, ctx.InNode(0));
  GJ_ASSIGN_OR_RETURN(l.w, ctx.InNode(1));
  GJ_ASSIGN_OR_RETURN(l.r, ctx.InNode(2));
  if (!ir::IsFloat(ctx.type(l.x).dtype)) return ctx.Unimplemented("a recurrent layer of integers");
  const std::string direction = ctx.AttrString("direction", "forward");
  if (direction == "bidirectional") {
    l.directions = 2;
  } else if (direction != "forward" && direction != "reverse") {
    return ctx.Invalid(
        absl::StrCat("direction '", direction, "' (expected forward, reverse or bidirectional)"));
  }
  const int64_t layout = ctx.AttrInt("layout", 0);
  if (layout != 0 && layout != 1) return ctx.Invalid(absl::StrCat("layout ", layout));
  if (ctx.type(l.x).rank() != 3 || ctx.type(l.w).rank() != 3 || ctx.type(l.r).rank() != 3) {
    return ctx.Invalid("X, W and R must have rank 3");
  }
  if (layout == 1) l.x = Transpose(ctx, l.x, {1, 0, 2});
  const Shape xs = ctx.type(l.x).shape;
  const std::optional<int64_t> steps = xs[0].AsConstant();
  if (!steps) {
    return ctx.Unimplemented(absl::StrCat("the sequence length ", xs[0].ToString(),
                                          " is symbolic (steps are unrolled at import)"));
  }
  if (*steps < 1 || *steps > kMaxSteps) {
    return ctx.Unimplemented(
        absl::StrCat("sequence length ", *steps, " (graphjit unrolls 1 to ", kMaxSteps, ")"));
  }
  l.steps = *steps;
  l.batch = xs[1];
  const int gates = NumGates(kind);
  const int64_t hidden = ctx.AttrInt("hidden_size", 0);
  const Shape ws = ctx.type(l.w).shape, rs = ctx.type(l.r).shape;
  if (hidden <= 0 || !ir::ProvablyEqual(ws[0], l.directions).value_or(false) ||
      !ir::ProvablyEqual(ws[1], gates * hidden).value_or(false) ||
      !ir::ProvablyEqual(ws[2], xs[2]).value_or(false) ||
      !ir::ProvablyEqual(rs[0], l.directions).value_or(false) ||
      !ir::ProvablyEqual(rs[1], gates * hidden).value_or(false) ||
      !ir::ProvablyEqual(rs[2], hidden).value_or(false)) {
    return ctx.Invalid(absl::StrCat(
        "W ", ir::ShapeToString(ws), " and R ", ir::ShapeToString(rs), " do not fit hidden_size ",
        hidden, ", ", l.directions, " direction(s) and input size ", xs[2].ToString(),
        " (expected W [D, ", gates, "*H, I], R [D, ", gates, "*H, H])"));
  }
  l.hidden = hidden;
  const DType dtype = ctx.type(l.x).dtype;
  auto state_input = [&](int i, ValueId* out) -> absl::Status {
    if (!ctx.HasInput(i)) return absl::OkStatus();
    GJ_ASSIGN_OR_RETURN(*out, ctx.InNode(i));
    if (layout == 1) *out = Transpose(ctx, *out, {1, 0, 2});
    return absl::OkStatus();
  };
  if (ctx.HasInput(3)) {
    GJ_ASSIGN_OR_RETURN(l.bias, ctx.InNode(3));
  }
  if (ctx.HasInput(4)) {
    GJ_ASSIGN_OR_RETURN(l.lens, ctx.InIndexNode(4));
  }
  GJ_RETURN_IF_ERROR(state_input(5, &l.h0));
  if (kind == Kind::kLstm) {
    GJ_RETURN_IF_ERROR(state_input(6, &l.c0));
    if (ctx.HasInput(7)) {
      GJ_ASSIGN_OR_RETURN(l.peep, ctx.InNode(7));
    }
  }
  // The optional inputs' shapes, as ONNX gives them (states [D, B, H] after the layout).
  auto expect_shape = [&](ValueId v, const char* what, const Shape& want) -> absl::Status {
    if (v == ir::kInvalidValue) return absl::OkStatus();
    const Shape& got = ctx.type(v).shape;
    bool same = got.size() == want.size();
    for (size_t d = 0; same && d < want.size(); ++d)
      same = ir::ProvablyEqual(got[d], want[d]).value_or(false);
    if (same) return absl::OkStatus();
    return ctx.Invalid(
        absl::StrCat(what, " is ", ir::ShapeToString(got), ", expected ", ir::ShapeToString(want)));
  };
  const SymExpr dirs(l.directions);
  GJ_RETURN_IF_ERROR(expect_shape(l.bias, "B", {dirs, SymExpr(2 * gates * hidden)}));
  GJ_RETURN_IF_ERROR(expect_shape(l.lens, "sequence_lens", {l.batch}));
  GJ_RETURN_IF_ERROR(expect_shape(l.h0, "initial_h", {dirs, l.batch, SymExpr(hidden)}));
  GJ_RETURN_IF_ERROR(expect_shape(l.c0, "initial_c", {dirs, l.batch, SymExpr(hidden)}));
  GJ_RETURN_IF_ERROR(expect_shape(l.peep, "P", {dirs, SymExpr(3 * hidden)}));
  for (ValueId v : {l.w, l.r, l.bias, l.h0, l.c0, l.peep}) {
    if (v != ir::kInvalidValue && ctx.type(v).dtype != dtype) {
      return ctx.Invalid(absl::StrCat("inputs of types ", ir::DTypeName(dtype), " and ",
                                      ir::DTypeName(ctx.type(v).dtype)));
    }
  }
  GJ_ASSIGN_OR_RETURN(l.activations, Activations(ctx, kind, static_cast<int>(l.directions)));
  if (ctx.Attr("clip")) l.clip = ctx.AttrFloat("clip", 0);
  l.input_forget = ctx.AttrInt("input_forget", 0) != 0;
  l.linear_before_reset = ctx.AttrInt("linear_before_reset", 0) != 0;
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  return l;
}

// What one direction's steps produce: h at every step (time order) and the last states.
struct DirectionOut {
  std::vector<ValueId> ys;  // [B, H] per step, zero past a sequence's length
  ValueId h, c = ir::kInvalidValue;
};

DirectionOut RunDirection(Context& ctx, const Layer& l, int64_t d, bool reverse) {
  const int gates = NumGates(l.kind);
  const int64_t H = l.hidden;
  const SymExpr T(l.steps), B = l.batch, I = ctx.type(l.x).shape[2];
  const Activation* act = &l.activations[d * NumActivations(l.kind)];
  auto op = [&](OpCode code, std::initializer_list<ValueId> args) { return ctx.Op(code, args); };
  auto s = [&](double v, ValueId like) { return ctx.ScalarLike(v, like); };
  auto gate = [&](ValueId v, int k) { return SliceAxis(ctx, v, 1, k * H, (k + 1) * H); };
  auto clip = [&](ValueId v) {
    if (l.clip == 0) return v;
    return op(OpCode::kMinimum, {op(OpCode::kMaximum, {v, s(-l.clip, v)}), s(l.clip, v)});
  };

  // Every step's input projection in one product: [T * B, I] @ W^T + Wb (+ Rb).
  ValueId w_t = Transpose(ctx, Row(ctx, l.w, d), {1, 0});  // [I, G * H]
  ValueId r_t = Transpose(ctx, Row(ctx, l.r, d), {1, 0});  // [H, G * H]
  ValueId xw = op(OpCode::kMatmul, {Reshape(ctx, l.x, {T * B, I}), w_t});
  ValueId rb_h = ir::kInvalidValue;  // GRU's Rbh, applied inside the reset with lbr
  if (l.bias != ir::kInvalidValue) {
    ValueId b = Row(ctx, l.bias, d);  // [2 * G * H]
    ValueId wb = SliceAxis(ctx, b, 0, 0, gates * H),
            rb = SliceAxis(ctx, b, 0, gates * H, 2 * gates * H);
    if (l.kind == Kind::kGru && l.linear_before_reset) {
      rb_h = SliceAxis(ctx, rb, 0, 2 * H, 3 * H);
      rb = ctx.Op(OpCode::kConcat,
                  {SliceAxis(ctx, rb, 0, 0, 2 * H),
                   ctx.Op(OpCode::kFull, {},
                          {{"value", 0.0}, {"dtype", ctx.type(b).dtype}, {"shape", Shape{H}}})},
                  {{"axis", int64_t{0}}});
    }
    xw = op(OpCode::kAdd, {xw, op(OpCode::kAdd, {wb, rb})});
  }
  xw = Reshape(ctx, xw, {T, B, gates * H});

  const ir::DType dtype = ctx.type(l.x).dtype;
  ValueId zeros =
      ctx.Op(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", dtype}, {"shape", Shape{B, H}}});
  DirectionOut out;
  out.h = l.h0 != ir::kInvalidValue ? Row(ctx, l.h0, d) : zeros;
  ValueId c = l.c0 != ir::kInvalidValue ? Row(ctx, l.c0, d) : zeros;
  ValueId pi = ir::kInvalidValue, po = ir::kInvalidValue, pf = ir::kInvalidValue;
  if (l.peep != ir::kInvalidValue) {
    ValueId p = Row(ctx, l.peep, d);  // [3 * H]: i o f
    pi = SliceAxis(ctx, p, 0, 0, H);
    po = SliceAxis(ctx, p, 0, H, 2 * H);
    pf = SliceAxis(ctx, p, 0, 2 * H, 3 * H);
  }
  // GRU's recurrent weights of z and r, and of h apart (reset before or after its product).
  ValueId r_zr = ir::kInvalidValue, r_h = ir::kInvalidValue;
  if (l.kind == Kind::kGru) {
    r_zr = SliceAxis(ctx, r_t, 1, 0, 2 * H);
    r_h = SliceAxis(ctx, r_t, 1, 2 * H, 3 * H);
  }
  out.ys.assign(l.steps, ir::kInvalidValue);
  for (int64_t n = 0; n < l.steps; ++n) {
    const int64_t t = reverse ? l.steps - 1 - n : n;
    ValueId x = Reshape(ctx, SliceAxis(ctx, xw, 0, t, t + 1), {B, gates * H});
    ValueId h_new, c_new = ir::kInvalidValue;
    if (l.kind == Kind::kLstm) {
      ValueId g = op(OpCode::kAdd, {x, op(OpCode::kMatmul, {out.h, r_t})});
      ValueId gi = gate(g, 0), go = gate(g, 1), gf = gate(g, 2), gc = gate(g, 3);
      if (pi != ir::kInvalidValue) {
        gi = op(OpCode::kAdd, {gi, op(OpCode::kMul, {pi, c})});
        gf = op(OpCode::kAdd, {gf, op(OpCode::kMul, {pf, c})});
      }
      ValueId i = Apply(ctx, act[0], clip(gi));
      ValueId f = l.input_forget ? op(OpCode::kSub, {s(1, i), i}) : Apply(ctx, act[0], clip(gf));
      ValueId cc = Apply(ctx, act[1], clip(gc));
      c_new = op(OpCode::kAdd, {op(OpCode::kMul, {f, c}), op(OpCode::kMul, {i, cc})});
      if (po != ir::kInvalidValue) go = op(OpCode::kAdd, {go, op(OpCode::kMul, {po, c_new})});
      ValueId o = Apply(ctx, act[0], clip(go));
      h_new = op(OpCode::kMul, {o, Apply(ctx, act[2], c_new)});
    } else if (l.kind == Kind::kGru) {
      ValueId zr =
          op(OpCode::kAdd, {SliceAxis(ctx, x, 1, 0, 2 * H), op(OpCode::kMatmul, {out.h, r_zr})});
      ValueId z = Apply(ctx, act[0], clip(gate(zr, 0)));
      ValueId r = Apply(ctx, act[0], clip(gate(zr, 1)));
      ValueId rec;
      if (l.linear_before_reset) {
        rec = op(OpCode::kMatmul, {out.h, r_h});
        if (rb_h != ir::kInvalidValue) rec = op(OpCode::kAdd, {rec, rb_h});
        rec = op(OpCode::kMul, {r, rec});
      } else {
        rec = op(OpCode::kMatmul, {op(OpCode::kMul, {r, out.h}), r_h});
      }
      ValueId hh = Apply(ctx, act[1], clip(op(OpCode::kAdd, {gate(x, 2), rec})));
      h_new = op(OpCode::kAdd, {op(OpCode::kMul, {op(OpCode::kSub, {s(1, z), z}), hh}),
                                op(OpCode::kMul, {z, out.h})});
    } else {
      h_new = Apply(ctx, act[0], clip(op(OpCode::kAdd, {x, op(OpCode::kMatmul, {out.h, r_t})})));
    }
    if (l.lens != ir::kInvalidValue) {
      // Entries whose sequence ended keep their state and output zeros.
      ValueId live = Reshape(
          ctx, op(OpCode::kLt, {ctx.b().Scalar(static_cast<double>(t), ir::DType::kI64), l.lens}),
          {B, 1});
      out.ys[t] = op(OpCode::kWhere, {live, h_new, zeros});
      out.h = op(OpCode::kWhere, {live, h_new, out.h});
      if (c_new != ir::kInvalidValue) c = op(OpCode::kWhere, {live, c_new, c});
    } else {
      out.ys[t] = h_new;
      out.h = h_new;
      if (c_new != ir::kInvalidValue) c = c_new;
    }
  }
  out.c = c;
  return out;
}

template <Kind kKind>
absl::Status Recurrent(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(Layer l, ReadLayer(ctx, kKind));
  const bool reverse = ctx.AttrString("direction", "forward") == "reverse";
  const SymExpr B = l.batch, H(l.hidden);
  std::vector<ValueId> ys, hs, cs;
  for (int64_t d = 0; d < l.directions; ++d) {
    DirectionOut o = RunDirection(ctx, l, d, reverse || d == 1);
    std::vector<ValueId> steps;
    for (ValueId y : o.ys) steps.push_back(Reshape(ctx, y, {1, 1, B, H}));
    ys.push_back(steps.size() == 1 ? steps[0]
                                   : ctx.Op(OpCode::kConcat, steps, {{"axis", int64_t{0}}}));
    hs.push_back(Reshape(ctx, o.h, {1, B, H}));
    cs.push_back(Reshape(ctx, o.c, {1, B, H}));
  }
  auto join = [&](const std::vector<ValueId>& parts, int64_t axis) {
    return parts.size() == 1 ? parts[0] : ctx.Op(OpCode::kConcat, parts, {{"axis", axis}});
  };
  ValueId y = join(ys, 1), h = join(hs, 0), c = join(cs, 0);  // [T, D, B, H], [D, B, H]
  if (ctx.AttrInt("layout", 0) == 1) {
    y = Transpose(ctx, y, {2, 0, 1, 3});
    h = Transpose(ctx, h, {1, 0, 2});
    c = Transpose(ctx, c, {1, 0, 2});
  }
  GJ_RETURN_IF_ERROR(ctx.BuilderStatus());
  if (ctx.WantsOutput(0)) GJ_RETURN_IF_ERROR(ctx.SetOut(0, y));
  if (ctx.WantsOutput(1)) GJ_RETURN_IF_ERROR(ctx.SetOut(1, h));
  if (kKind == Kind::kLstm && ctx.WantsOutput(2)) GJ_RETURN_IF_ERROR(ctx.SetOut(2, c));
  return absl::OkStatus();
}

}  // namespace

void AddRecurrentOps(OpTable* t) {
  (*t)["LSTM"] = Recurrent<Kind::kLstm>;
  (*t)["GRU"] = Recurrent<Kind::kGru>;
  (*t)["RNN"] = Recurrent<Kind::kRnn>;
}

}  // namespace graphjit::onnx
