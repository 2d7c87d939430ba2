// Recurrent layers: LSTM, GRU and RNN (opset 7 to 14: directions, activations with their
// alpha and beta, clip, sequence_lens, layout, peepholes, input_forget, linear_before_reset,
// initial states). The input projections of every step are one product before the steps.
// The steps are unrolled over a sequence length known at import, each a product with the
// recurrent weights and a cell of pointwise ops that fusion makes one kernel; over a
// symbolic (or long) one they are a scan op (ir/regions.h) whose body is that cell, so
// one compile serves every length. Steps past a batch entry's sequence_lens keep its state
// and write zeros to Y, as the ONNX reference does (a reverse direction with
// sequence_lens needs a length known at import).
#include <algorithm>
#include <memory>
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

// Steps beyond this run as a scan rather than unrolled: each is a few kernels of the graph.
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
  int64_t hidden = 0, directions = 1;
  int64_t steps = 0;  // known and unrolled, or -1: symbolic (or long), a scan op
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
  if (steps && *steps < 1) {
    return ctx.Unimplemented(absl::StrCat("sequence length ", *steps));
  }
  l.steps = steps && *steps <= kMaxSteps ? *steps : -1;  // -1: a scan over the steps
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

// What one direction's steps produce: h at every step stacked in time order [T, B, H]
// (zero past a sequence's length) and the last states.
struct DirectionOut {
  ValueId ys;
  ValueId h, c = ir::kInvalidValue;
};

// What a step reads besides its input row and states: values of the graph being built
// (the enclosing graph's when unrolled, the scan body's inputs in a scan).
struct StepWeights {
  ValueId r_t = ir::kInvalidValue;   // [H, G * H]
  ValueId r_zr = ir::kInvalidValue;  // GRU: z and r's part of r_t
  ValueId r_h = ir::kInvalidValue;   // GRU: h's part
  ValueId rb_h = ir::kInvalidValue;  // GRU with linear_before_reset: Rbh
  ValueId pi = ir::kInvalidValue, po = ir::kInvalidValue, pf = ir::kInvalidValue;
  ValueId zeros = ir::kInvalidValue;  // [B, H]
  ValueId lens = ir::kInvalidValue;   // [B] i64
};

struct StepOut {
  ValueId h, c, y;
};

// One step: input row x [B, G * H] (projected), states h and c, at time `t` (an i64 scalar
// value, read only with sequence_lens).
StepOut Step(Context& ctx, const Layer& l, const Activation* act, const StepWeights& w, ValueId x,
             ValueId h, ValueId c, ValueId t) {
  const int64_t H = l.hidden;
  const SymExpr B = l.batch;
  auto op = [&](OpCode code, std::initializer_list<ValueId> args) { return ctx.Op(code, args); };
  auto s = [&](double v, ValueId like) { return ctx.ScalarLike(v, like); };
  auto gate = [&](ValueId v, int k) { return SliceAxis(ctx, v, 1, k * H, (k + 1) * H); };
  auto clip = [&](ValueId v) {
    if (l.clip == 0) return v;
    return op(OpCode::kMinimum, {op(OpCode::kMaximum, {v, s(-l.clip, v)}), s(l.clip, v)});
  };
  ValueId h_new, c_new = ir::kInvalidValue;
  if (l.kind == Kind::kLstm) {
    ValueId g = op(OpCode::kAdd, {x, op(OpCode::kMatmul, {h, w.r_t})});
    ValueId gi = gate(g, 0), go = gate(g, 1), gf = gate(g, 2), gc = gate(g, 3);
    if (w.pi != ir::kInvalidValue) {
      gi = op(OpCode::kAdd, {gi, op(OpCode::kMul, {w.pi, c})});
      gf = op(OpCode::kAdd, {gf, op(OpCode::kMul, {w.pf, c})});
    }
    ValueId i = Apply(ctx, act[0], clip(gi));
    ValueId f = l.input_forget ? op(OpCode::kSub, {s(1, i), i}) : Apply(ctx, act[0], clip(gf));
    ValueId cc = Apply(ctx, act[1], clip(gc));
    c_new = op(OpCode::kAdd, {op(OpCode::kMul, {f, c}), op(OpCode::kMul, {i, cc})});
    if (w.po != ir::kInvalidValue) go = op(OpCode::kAdd, {go, op(OpCode::kMul, {w.po, c_new})});
    ValueId o = Apply(ctx, act[0], clip(go));
    h_new = op(OpCode::kMul, {o, Apply(ctx, act[2], c_new)});
  } else if (l.kind == Kind::kGru) {
    ValueId zr =
        op(OpCode::kAdd, {SliceAxis(ctx, x, 1, 0, 2 * H), op(OpCode::kMatmul, {h, w.r_zr})});
    ValueId z = Apply(ctx, act[0], clip(gate(zr, 0)));
    ValueId r = Apply(ctx, act[0], clip(gate(zr, 1)));
    ValueId rec;
    if (l.linear_before_reset) {
      rec = op(OpCode::kMatmul, {h, w.r_h});
      if (w.rb_h != ir::kInvalidValue) rec = op(OpCode::kAdd, {rec, w.rb_h});
      rec = op(OpCode::kMul, {r, rec});
    } else {
      rec = op(OpCode::kMatmul, {op(OpCode::kMul, {r, h}), w.r_h});
    }
    ValueId hh = Apply(ctx, act[1], clip(op(OpCode::kAdd, {gate(x, 2), rec})));
    h_new = op(OpCode::kAdd,
               {op(OpCode::kMul, {op(OpCode::kSub, {s(1, z), z}), hh}), op(OpCode::kMul, {z, h})});
  } else {
    h_new = Apply(ctx, act[0], clip(op(OpCode::kAdd, {x, op(OpCode::kMatmul, {h, w.r_t})})));
  }
  if (c_new == ir::kInvalidValue) c_new = c;
  if (w.lens == ir::kInvalidValue) return {h_new, c_new, h_new};
  // Entries whose sequence ended keep their state and output zeros.
  ValueId live = Reshape(ctx, op(OpCode::kLt, {t, w.lens}), {B, 1});
  return {op(OpCode::kWhere, {live, h_new, h}), op(OpCode::kWhere, {live, c_new, c}),
          op(OpCode::kWhere, {live, h_new, w.zeros})};
}

// The steps as a scan op over the rows of xw [T, B, G * H] (reversed for a reverse
// direction), carrying h, c and the step number; the weights are its invariants.
absl::StatusOr<DirectionOut> ScanDirection(Context& ctx, const Layer& l, const Activation* act,
                                           const StepWeights& outer, ValueId xw, ValueId h0,
                                           ValueId c0, bool reverse) {
  if (reverse && l.lens != ir::kInvalidValue) {
    return ctx.Unimplemented(
        "a reverse direction with sequence_lens over a symbolic (or long) sequence length");
  }
  if (reverse) xw = ReverseRows(ctx, xw);
  std::vector<ValueId> operands = {
      h0, c0,
      ctx.Op(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", DType::kI64}, {"shape", Shape{}}}), xw};
  // The invariants: every weight the step reads, in StepWeights' order.
  std::vector<ValueId StepWeights::*> fields = {
      &StepWeights::r_t,  &StepWeights::r_zr,  &StepWeights::r_h,
      &StepWeights::rb_h, &StepWeights::pi,    &StepWeights::po,
      &StepWeights::pf,   &StepWeights::zeros, &StepWeights::lens};
  for (auto field : fields) {
    if (outer.*field != ir::kInvalidValue) operands.push_back(outer.*field);
  }
  std::vector<ir::ValueType> types;
  for (ValueId v : operands) types.push_back(ctx.type(v));
  types[3].shape.erase(types[3].shape.begin());  // the body takes a row
  ir::GraphBuilder rb("body");
  {
    Context::RegionScope scope(ctx, &rb);
    const std::vector<ValueId> a = RegionInputs(rb, types);
    StepWeights w;
    size_t next = 4;
    for (auto field : fields) {
      if (outer.*field != ir::kInvalidValue) w.*field = a[next++];
    }
    const StepOut out = Step(ctx, l, act, w, a[3], a[0], a[1], a[2]);
    rb.Output(out.h);
    rb.Output(out.c);
    rb.Output(rb.Add(OpCode::kAdd, {a[2], rb.Scalar(1, DType::kI64)}));
    rb.Output(out.y);
  }
  GJ_ASSIGN_OR_RETURN(ir::Graph body, std::move(rb).Build());
  const ir::ValueType y_row = body.type(body.outputs()[3]);
  const ValueId scan =
      ctx.b().Add(OpCode::kScan, operands, {{"carried", int64_t{3}}, {"scanned", int64_t{1}}},
                  {std::make_shared<const ir::Graph>(std::move(body))});
  DirectionOut out;
  out.h = scan;
  out.c = ctx.Op(OpCode::kLoopResult, {scan, c0}, {{"index", int64_t{1}}});
  Shape stacked = y_row.shape;
  stacked.insert(stacked.begin(), ctx.type(xw).shape[0]);
  out.ys = ctx.Op(OpCode::kScanOutput, {scan},
                  {{"index", int64_t{0}}, {"dtype", y_row.dtype}, {"shape", stacked}});
  if (reverse) out.ys = ReverseRows(ctx, out.ys);
  return out;
}

absl::StatusOr<DirectionOut> RunDirection(Context& ctx, const Layer& l, int64_t d, bool reverse) {
  const int gates = NumGates(l.kind);
  const int64_t H = l.hidden;
  const SymExpr T = ctx.type(l.x).shape[0], B = l.batch, I = ctx.type(l.x).shape[2];
  const Activation* act = &l.activations[d * NumActivations(l.kind)];
  auto op = [&](OpCode code, std::initializer_list<ValueId> args) { return ctx.Op(code, args); };

  // Every step's input projection in one product: [T * B, I] @ W^T + Wb (+ Rb).
  StepWeights w;
  ValueId w_t = Transpose(ctx, Row(ctx, l.w, d), {1, 0});  // [I, G * H]
  w.r_t = Transpose(ctx, Row(ctx, l.r, d), {1, 0});        // [H, G * H]
  ValueId xw = op(OpCode::kMatmul, {Reshape(ctx, l.x, {T * B, I}), w_t});
  if (l.bias != ir::kInvalidValue) {
    ValueId b = Row(ctx, l.bias, d);  // [2 * G * H]
    ValueId wb = SliceAxis(ctx, b, 0, 0, gates * H),
            rb = SliceAxis(ctx, b, 0, gates * H, 2 * gates * H);
    if (l.kind == Kind::kGru && l.linear_before_reset) {
      w.rb_h = SliceAxis(ctx, rb, 0, 2 * H, 3 * H);  // applied inside the reset
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
  w.zeros = ctx.Op(OpCode::kFull, {}, {{"value", 0.0}, {"dtype", dtype}, {"shape", Shape{B, H}}});
  ValueId h = l.h0 != ir::kInvalidValue ? Row(ctx, l.h0, d) : w.zeros;
  ValueId c = l.c0 != ir::kInvalidValue ? Row(ctx, l.c0, d) : w.zeros;
  if (l.peep != ir::kInvalidValue) {
    ValueId p = Row(ctx, l.peep, d);  // [3 * H]: i o f
    w.pi = SliceAxis(ctx, p, 0, 0, H);
    w.po = SliceAxis(ctx, p, 0, H, 2 * H);
    w.pf = SliceAxis(ctx, p, 0, 2 * H, 3 * H);
  }
  // GRU's recurrent weights of z and r, and of h apart (reset before or after its product).
  if (l.kind == Kind::kGru) {
    w.r_zr = SliceAxis(ctx, w.r_t, 1, 0, 2 * H);
    w.r_h = SliceAxis(ctx, w.r_t, 1, 2 * H, 3 * H);
  }
  w.lens = l.lens;
  if (l.steps < 0) return ScanDirection(ctx, l, act, w, xw, h, c, reverse);

  std::vector<ValueId> ys(l.steps, ir::kInvalidValue);
  for (int64_t n = 0; n < l.steps; ++n) {
    const int64_t t = reverse ? l.steps - 1 - n : n;
    ValueId x = Reshape(ctx, SliceAxis(ctx, xw, 0, t, t + 1), {B, gates * H});
    const ValueId time = l.lens != ir::kInvalidValue
                             ? ctx.b().Scalar(static_cast<double>(t), DType::kI64)
                             : ir::kInvalidValue;
    const StepOut out = Step(ctx, l, act, w, x, h, c, time);
    h = out.h;
    c = out.c;
    ys[t] = Reshape(ctx, out.y, {1, B, H});
  }
  DirectionOut out;
  out.h = h;
  out.c = c;
  out.ys = ys.size() == 1 ? ys[0] : ctx.Op(OpCode::kConcat, ys, {{"axis", int64_t{0}}});
  return out;
}

template <Kind kKind>
absl::Status Recurrent(Context& ctx) {
  GJ_ASSIGN_OR_RETURN(Layer l, ReadLayer(ctx, kKind));
  const bool reverse = ctx.AttrString("direction", "forward") == "reverse";
  const SymExpr B = l.batch, H(l.hidden);
  std::vector<ValueId> ys, hs, cs;
  const SymExpr T = ctx.type(l.x).shape[0];
  for (int64_t d = 0; d < l.directions; ++d) {
    GJ_ASSIGN_OR_RETURN(DirectionOut o, RunDirection(ctx, l, d, reverse || d == 1));
    ys.push_back(Reshape(ctx, o.ys, {T, 1, B, H}));
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
