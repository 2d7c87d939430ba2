#include "compiler/lower/lower.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/lower/simplify_index.h"
#include "ir/check.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;
using ir::ValueId;

bool IsLayout(OpCode op) {
  return op == OpCode::kTranspose || op == OpCode::kReshape || op == OpCode::kExpand ||
         op == OpCode::kSlice || op == OpCode::kConcat;
}

bool IsConstOne(const ir::SymExpr& d) { return d.AsConstant() == 1; }

class Lowerer {
 public:
  explicit Lowerer(const ir::Graph& g) : g_(g) {
    for (const std::string& s : g.Symbols()) prog_.symbols.push_back(s);
    prog_.name = g.name();
    users_.resize(g.num_nodes());
    for (ValueId id = 0; id < g.num_nodes(); ++id) {
      for (ValueId v : g.node(id).operands) users_[v].push_back(id);
    }
    is_output_.assign(g.num_nodes(), false);
    for (ValueId out : g.outputs()) is_output_[out] = true;
    buffer_of_.assign(g.num_nodes(), -1);
    cost_.assign(g.num_nodes(), 0);
  }

  absl::StatusOr<LoweredGraph> Run() {
    if (absl::Status s = CreateArgBuffers(); !s.ok()) return s;
    for (ValueId id = 0; id < g_.num_nodes(); ++id) {
      if (absl::Status s = LowerNode(id); !s.ok()) return s;
    }
    if (absl::Status s = WriteOutputs(); !s.ok()) return s;
    PlanWorkspace();
    out_.program = std::move(prog_);
    return std::move(out_);
  }

 private:
  // ---- expressions ---------------------------------------------------------------------

  ExprPtr Sym(const ir::SymExpr& e) {
    ExprPtr sum = ConstI(0);
    for (const ir::SymExpr::TermView& t : e.Terms()) {
      ExprPtr product = ConstI(t.coeff);
      for (const ir::SymExpr::AtomView& a : t.factors) {
        ExprPtr atom;
        switch (a.kind) {
          case ir::SymExpr::AtomView::Kind::kSymbol: {
            auto it = std::find(prog_.symbols.begin(), prog_.symbols.end(), a.name);
            GJ_CHECK(it != prog_.symbols.end()) << "symbol " << a.name << " not collected";
            atom = SymbolValue(static_cast<int>(it - prog_.symbols.begin()));
            break;
          }
          case ir::SymExpr::AtomView::Kind::kFloorDiv:
            atom = Op(ScalarOp::kDiv, Sym(*a.lhs), Sym(*a.rhs));
            break;
          case ir::SymExpr::AtomView::Kind::kMod:
            atom = Op(ScalarOp::kMod, Sym(*a.lhs), Sym(*a.rhs));
            break;
          case ir::SymExpr::AtomView::Kind::kMax:
            atom = Op(ScalarOp::kMax, Sym(*a.lhs), Sym(*a.rhs));
            break;
          case ir::SymExpr::AtomView::Kind::kMin:
            atom = Op(ScalarOp::kMin, Sym(*a.lhs), Sym(*a.rhs));
            break;
        }
        product = Op(ScalarOp::kMul, product, atom);
      }
      sum = Op(ScalarOp::kAdd, sum, product);
    }
    return sum;
  }

  std::vector<ExprPtr> Dims(const ir::Shape& shape) {
    std::vector<ExprPtr> dims;
    for (const ir::SymExpr& d : shape) dims.push_back(Sym(d));
    return dims;
  }

  // The index into an operand of shape `in` for the result index `idx` of shape `out`
  // under numpy broadcasting: size-1 operand dims read element 0.
  std::vector<ExprPtr> BroadcastIndex(const ir::Shape& in, const ir::Shape& out,
                                      const std::vector<ExprPtr>& idx) {
    std::vector<ExprPtr> r;
    size_t offset = out.size() - in.size();
    for (size_t d = 0; d < in.size(); ++d) {
      bool broadcast = IsConstOne(in[d]) && !IsConstOne(out[d + offset]);
      r.push_back(broadcast ? ConstI(0) : idx[d + offset]);
    }
    return r;
  }

  // Row-major reshape: same non-1 dims in order map directly; otherwise through the flat
  // index.
  std::vector<ExprPtr> ReshapeIndex(const ir::Shape& in, const ir::Shape& out,
                                    const std::vector<ExprPtr>& idx) {
    std::vector<size_t> in_pos, out_pos;
    for (size_t d = 0; d < in.size(); ++d) {
      if (!IsConstOne(in[d])) in_pos.push_back(d);
    }
    for (size_t d = 0; d < out.size(); ++d) {
      if (!IsConstOne(out[d])) out_pos.push_back(d);
    }
    bool same = in_pos.size() == out_pos.size();
    for (size_t i = 0; same && i < in_pos.size(); ++i) same = in[in_pos[i]] == out[out_pos[i]];
    std::vector<ExprPtr> r(in.size(), ConstI(0));
    if (same) {
      for (size_t i = 0; i < in_pos.size(); ++i) r[in_pos[i]] = idx[out_pos[i]];
      return r;
    }
    ExprPtr flat = ConstI(0);
    for (size_t d = 0; d < out.size(); ++d) {
      flat = Op(ScalarOp::kAdd, Op(ScalarOp::kMul, flat, Sym(out[d])), idx[d]);
    }
    ExprPtr stride = ConstI(1);
    for (size_t d = in.size(); d-- > 0;) {
      ExprPtr q = Op(ScalarOp::kDiv, flat, stride);
      r[d] = d == 0 ? q : Op(ScalarOp::kMod, q, Sym(in[d]));
      stride = Op(ScalarOp::kMul, stride, Sym(in[d]));
    }
    return r;
  }

  // The value of node `v` at index `idx`: a load if it lives in a buffer, else its
  // expression inlined.
  ExprPtr Value(ValueId v, const std::vector<ExprPtr>& idx) {
    if (buffer_of_[v] >= 0) return LoadBuffer(buffer_of_[v], idx);
    return Inline(v, idx);
  }

  ExprPtr LoadBuffer(int b, const std::vector<ExprPtr>& idx) {
    reads_.push_back(b);
    return Load(b, prog_.buffers[b].dtype, idx);
  }

  ExprPtr Inline(ValueId v, const std::vector<ExprPtr>& idx) {
    const ir::Node& n = g_.node(v);
    const ir::Shape& out = n.type.shape;
    auto operand = [&](int i, const std::vector<ExprPtr>& at) { return Value(n.operands[i], at); };
    auto broadcast = [&](int i) {
      return operand(i, BroadcastIndex(g_.type(n.operands[i]).shape, out, idx));
    };
    if (std::optional<ScalarOp> op = ScalarOpFor(n.op)) {  // the Pointwise ops
      if (IsUnary(*op)) return Op(*op, operand(0, idx));
      return Op(*op, broadcast(0), broadcast(1));
    }
    // Every other op by hand; the ones that never reach here have their case labels
    // generated from ir/ops.def, so a new Index op fails to compile (-Werror=switch)
    // until it has a case.
    switch (n.op) {
      case OpCode::kConstant: {
        // Constants of one element are inlined (larger ones are param buffers); a constant
        // of no elements is never read (every loop over it runs zero times).
        const auto& value = n.attrs.Get<std::vector<double>>("value");
        return ConstF(value.empty() ? 0.0 : value[0], n.type.dtype);
      }
      case OpCode::kFull:
        return ConstF(n.attrs.GetFloat("value"), n.type.dtype);
      case OpCode::kIota: {
        int64_t axis = n.attrs.GetInt("axis");
        if (axis < 0) axis += n.type.rank();
        return Cast(idx[axis], n.type.dtype);
      }
      case OpCode::kWhere:
        return Select(broadcast(0), broadcast(1), broadcast(2));
      case OpCode::kCast:
        return Cast(operand(0, idx), n.type.dtype);
      case OpCode::kTranspose: {
        const auto& perm = n.attrs.Get<std::vector<int64_t>>("perm");
        std::vector<ExprPtr> in(perm.size());
        for (size_t i = 0; i < perm.size(); ++i) in[perm[i]] = idx[i];
        return operand(0, in);
      }
      case OpCode::kReshape:
        return operand(0, ReshapeIndex(g_.type(n.operands[0]).shape, out, idx));
      case OpCode::kExpand:
        return broadcast(0);
      case OpCode::kSlice: {
        int axis = *ir::NormalizeAxis(n.attrs.GetInt("axis"), n.type.rank(), "slice");
        std::vector<ExprPtr> in = idx;
        in[axis] = Op(ScalarOp::kAdd, idx[axis], Sym(n.attrs.GetDim("start")));
        return operand(0, in);
      }
      case OpCode::kConcat: {
        int axis = *ir::NormalizeAxis(n.attrs.GetInt("axis"), n.type.rank(), "concat");
        // Later pieces first, so the outermost select picks the first piece. Each piece's
        // index is clamped into range: select evaluates both arms, so every load must be
        // in bounds even where its value is discarded.
        ExprPtr result;
        ir::SymExpr offset = 0;
        std::vector<std::pair<ir::SymExpr, ValueId>> starts;
        for (ValueId p : n.operands) {
          starts.push_back({offset, p});
          offset = offset + g_.type(p).shape[axis];
        }
        for (size_t i = starts.size(); i-- > 0;) {
          const ir::SymExpr& start = starts[i].first;
          ExprPtr size = Sym(g_.type(starts[i].second).shape[axis]);
          std::vector<ExprPtr> in = idx;
          ExprPtr local = Op(ScalarOp::kSub, idx[axis], Sym(start));
          in[axis] = Op(ScalarOp::kMax, Op(ScalarOp::kMin, local, Op(ScalarOp::kSub, size, ConstI(1))),
                        ConstI(0));
          ExprPtr piece = Value(starts[i].second, in);
          result = result == nullptr
                       ? piece
                       : Select(Op(ScalarOp::kLt, idx[axis], Sym(start + g_.type(starts[i].second).shape[axis])),
                                piece, result);
        }
        return result;
      }
      case OpCode::kCausalMask: {
        size_t r = out.size();
        ir::SymExpr offset = out[r - 1] - out[r - 2];
        ExprPtr keep = Op(ScalarOp::kLe, idx[r - 1], Op(ScalarOp::kAdd, idx[r - 2], Sym(offset)));
        return Select(keep, operand(0, idx), ConstF(-INFINITY, n.type.dtype));
      }
      case OpCode::kInput:
      case OpCode::kParam:  // always buffers
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, lowering, ...) \
  GJ_NOT_INLINED_##lowering(name)
#define GJ_NOT_INLINED_Source(name)
#define GJ_NOT_INLINED_Index(name)
#define GJ_NOT_INLINED_IndexComposite(name)
#define GJ_NOT_INLINED_Pointwise(name) case OpCode::k##name:
#define GJ_NOT_INLINED_Kernel(name) case OpCode::k##name:
#define GJ_NOT_INLINED_Composite(name) case OpCode::k##name:
#include "ir/ops.def"
#undef GJ_OP
#undef GJ_NOT_INLINED_Source
#undef GJ_NOT_INLINED_Index
#undef GJ_NOT_INLINED_IndexComposite
#undef GJ_NOT_INLINED_Pointwise
#undef GJ_NOT_INLINED_Kernel
#undef GJ_NOT_INLINED_Composite
        break;
    }
    GJ_CHECK(false) << "no inline lowering for " << ir::OpName(n.op);
    return nullptr;
  }

  // ---- buffers and kernels -------------------------------------------------------------

  int AddBuffer(std::string name, const ir::ValueType& type, BufferKind kind) {
    Buffer b;
    b.name = std::move(name);
    b.dtype = type.dtype;
    b.shape = type.shape;
    b.dims = Dims(type.shape);
    b.kind = kind;
    if (kind != BufferKind::kTemp) b.arg_index = prog_.num_args++;
    prog_.buffers.push_back(std::move(b));
    def_kernel_.push_back(static_cast<int>(prog_.kernels.size()));
    last_use_.push_back(-1);
    return static_cast<int>(prog_.buffers.size()) - 1;
  }

  absl::Status CreateArgBuffers() {
    for (ValueId id : g_.Inputs()) {
      buffer_of_[id] = AddBuffer(g_.node(id).name(), g_.type(id), BufferKind::kInput);
      out_.args.push_back({ArgBinding::Kind::kInput, g_.node(id).name(), id});
    }
    for (ValueId id : g_.Params()) {
      buffer_of_[id] = AddBuffer(g_.node(id).name(), g_.type(id), BufferKind::kParam);
      out_.args.push_back({ArgBinding::Kind::kParam, g_.node(id).name(), id});
    }
    for (ValueId id = 0; id < g_.num_nodes(); ++id) {
      const ir::Node& n = g_.node(id);
      if (n.op == OpCode::kConstant && n.attrs.Get<std::vector<double>>("value").size() > 1) {
        buffer_of_[id] = AddBuffer(absl::StrCat("const", id), n.type, BufferKind::kParam);
        out_.args.push_back({ArgBinding::Kind::kConstant, "", id});
      }
    }
    return absl::OkStatus();
  }

  // Appends a kernel, recording which buffers it reads (for the workspace plan).
  void AddKernel(Kernel k) {
    int index = static_cast<int>(prog_.kernels.size());
    for (int b : reads_) last_use_[b] = std::max(last_use_[b], index);
    reads_.clear();
    prog_.kernels.push_back(std::move(k));
  }

  std::vector<ExprPtr> LoopVars(size_t n) {
    std::vector<ExprPtr> vars;
    for (size_t i = 0; i < n; ++i) vars.push_back(LoopVar(static_cast<int>(i)));
    return vars;
  }

  std::string KernelName(ValueId id, const char* what = "") {
    return absl::StrCat("k", prog_.kernels.size(), "_", ir::OpName(g_.node(id).op), what);
  }

  // Inlining cost of a node: arithmetic ops it would repeat per use (transcendentals 8,
  // other arithmetic 1, layout and constants free), counting inlined producers.
  int Cost(ValueId id) const {
    const ir::Node& n = g_.node(id);
    if (buffer_of_[id] >= 0) return 0;
    std::optional<ScalarOp> scalar = ScalarOpFor(n.op);
    int own = IsLayout(n.op) || ir::IsSourceOp(n.op) || n.op == OpCode::kCast ? 0
              : scalar.has_value()                                           ? ScalarOpCost(*scalar)
                                                                             : 1;
    for (ValueId v : n.operands) own += cost_[v];
    return own;
  }

  // Whether a matmul reads its rhs through a transpose (then its loop order is k
  // innermost and its lhs is re-evaluated for every n).
  bool RhsTransposed(ValueId mm) const {
    ValueId v = g_.node(mm).operands[1];
    while (buffer_of_[v] < 0 && IsLayout(g_.node(v).op)) {
      if (g_.node(v).op == OpCode::kTranspose) return true;
      v = g_.node(v).operands[0];
    }
    return false;
  }

  bool ShouldMaterialize(ValueId id) {
    const ir::Node& n = g_.node(id);
    if (ir::LoweringOf(n.op) == ir::OpLowering::kKernel || is_output_[id]) return true;
    if (cost_[id] <= 1) return false;
    if (users_[id].size() > 1) return true;
    for (ValueId u : users_[id]) {
      if (g_.node(u).op != OpCode::kMatmul) continue;
      bool is_lhs = g_.node(u).operands[0] == id;
      // An inlined matmul operand is re-evaluated per output element, except the lhs of
      // an n-innermost (axpy) matmul, evaluated once per (m, k).
      if (!is_lhs || RhsTransposed(u)) return true;
    }
    return false;
  }

  absl::Status LowerNode(ValueId id) {
    const ir::Node& n = g_.node(id);
    if (n.op == OpCode::kInput || n.op == OpCode::kParam || buffer_of_[id] >= 0) return absl::OkStatus();
    if (ir::LoweringOf(n.op) == ir::OpLowering::kComposite) {
      return absl::UnimplementedError(absl::StrCat("lower: %", id, " (", ir::OpName(n.op),
                                                   ") is a composite op; run the decompose "
                                                   "pass before lowering"));
    }
    cost_[id] = Cost(id);
    if (!ShouldMaterialize(id)) return absl::OkStatus();
    int out = -1;
    if (is_output_[id]) {
      out = OutputBuffer(id);
    } else {
      out = AddBuffer(absl::StrCat("t", id), n.type, BufferKind::kTemp);
    }
    switch (n.op) {
      case OpCode::kReduceSum:
      case OpCode::kReduceMax:
      case OpCode::kReduceMean:
      case OpCode::kArgMin:
      case OpCode::kArgMax:
        LowerReduce(id, out);
        break;
      case OpCode::kCumSum:
        LowerScan(id, out);
        break;
      case OpCode::kMatmul:
        LowerMatmul(id, out);
        break;
      case OpCode::kKvWrite:
        LowerKvWrite(id, out);
        break;
      case OpCode::kGather:
        LowerGather(id, out);
        break;
      // Every other op is materialized by a pointwise kernel of its inlined value; a new
      // Kernel op of ir/ops.def fails to compile (-Werror=switch) until it has a case.
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, lowering, ...) \
  GJ_POINTWISE_KERNEL_##lowering(name)
#define GJ_POINTWISE_KERNEL_Kernel(name)
#define GJ_POINTWISE_KERNEL_Source(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_Pointwise(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_Index(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_IndexComposite(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_Composite(name) case OpCode::k##name:
#include "ir/ops.def"
#undef GJ_OP
#undef GJ_POINTWISE_KERNEL_Kernel
#undef GJ_POINTWISE_KERNEL_Source
#undef GJ_POINTWISE_KERNEL_Pointwise
#undef GJ_POINTWISE_KERNEL_Index
#undef GJ_POINTWISE_KERNEL_IndexComposite
#undef GJ_POINTWISE_KERNEL_Composite
      {
        Kernel k{KernelKind::kPointwise, KernelName(id), out};
        k.loops = Dims(n.type.shape);
        k.value = Inline(id, LoopVars(n.type.rank()));
        AddKernel(std::move(k));
      }
    }
    buffer_of_[id] = out;
    cost_[id] = 0;  // consumers load it: no recomputation
    return absl::OkStatus();
  }

  // The output arg for the first graph output equal to `id`.
  int OutputBuffer(ValueId id) {
    const auto& outs = g_.outputs();
    int index = static_cast<int>(std::find(outs.begin(), outs.end(), id) - outs.begin());
    int b = AddBuffer(absl::StrCat("out", index), g_.type(id), BufferKind::kOutput);
    ArgBinding arg{ArgBinding::Kind::kOutput, "", id, index};
    out_.args.push_back(arg);
    written_outputs_.push_back(index);
    return b;
  }

  void LowerReduce(ValueId id, int out) {
    const ir::Node& n = g_.node(id);
    const ir::Shape& in = g_.type(n.operands[0]).shape;
    int axis = *ir::NormalizeAxis(n.attrs.GetInt("axis"), static_cast<int>(in.size()), "reduce");
    bool keep = n.attrs.Get<bool>("keepdim");
    Kernel k{KernelKind::kReduce, KernelName(id), out};
    k.loops = Dims(n.type.shape);
    std::vector<ExprPtr> vars = LoopVars(n.type.rank());
    std::vector<ExprPtr> in_idx;
    for (int d = 0, o = 0; d < static_cast<int>(in.size()); ++d) {
      if (d == axis) {
        in_idx.push_back(LoopVar(n.type.rank()));
        if (keep) ++o;
      } else {
        in_idx.push_back(vars[o++]);
      }
    }
    k.reduce_extent = Sym(in[axis]);
    k.value = Value(n.operands[0], in_idx);
    k.combine = n.op == OpCode::kReduceMax ? ScalarOp::kMax : ScalarOp::kAdd;
    if (n.op == OpCode::kReduceMean) {
      k.finish_scale = Op(ScalarOp::kDiv, ConstF(1.0, n.type.dtype), Cast(k.reduce_extent, n.type.dtype));
    }
    if (n.op == OpCode::kArgMin || n.op == OpCode::kArgMax) {
      k.kind = KernelKind::kArgReduce;
      k.combine = n.op == OpCode::kArgMin ? ScalarOp::kMin : ScalarOp::kMax;
    }
    AddKernel(std::move(k));
  }

  // cumsum: the loops run over every dim but the axis, the scan variable (loop variable
  // rank - 1) along it; each prefix sum is stored where the scan is.
  void LowerScan(ValueId id, int out) {
    const ir::Node& n = g_.node(id);
    const ir::Shape& shape = n.type.shape;
    const int rank = n.type.rank();
    const int axis = *ir::NormalizeAxis(n.attrs.GetInt("axis"), rank, "cumsum");
    Kernel k{KernelKind::kScan, KernelName(id), out};
    std::vector<ExprPtr> idx;
    for (int d = 0, o = 0; d < rank; ++d) {
      if (d == axis) {
        idx.push_back(LoopVar(rank - 1));
      } else {
        k.loops.push_back(Sym(shape[d]));
        idx.push_back(LoopVar(o++));
      }
    }
    k.reduce_extent = Sym(shape[axis]);
    k.value = Value(n.operands[0], idx);
    k.store_indices = idx;
    AddKernel(std::move(k));
  }

  // The product size (M*N*K of one batch) from which a float matmul goes to BLAS
  // (kExternMatmul) instead of generated loops. Measured on the 2-core Zen 3 dev machine
  // (one [M,K] @ [K,N] kernel, generated axpy loops vs graphjit_rt_matmul_*, medians, us):
  //   f64 8x8x8 0.24 vs 0.05; 16^3 0.53 vs 0.13; 64^3 26.1 vs 7.2; 16x344x128 106 vs 23;
  //       256^3 2357 vs 597; M=2 2x344x128 12.9 vs 3.3; N=1 64x1x64 2.2 vs 0.33
  //   f32 16^3 0.38 vs 0.10; 64^3 21.1 vs 3.4; 64x344x128 227 vs 53; 256^3 1184 vs 237
  //   M=1 (gemv, memory-bound) f64 1x344x128 10.8-12.8 vs 6.5-7.5, 1x128x344 4.3-6.1 vs
  //       7.6; f32 1x344x128 3.1-4.1 vs 3.3; 1x1024x1024 165 vs 185; 1x2048x512 236 vs 209
  // BLAS wins 1.5-12x on every matrix-matrix product tried, even 8^3; 4096 (16^3) leaves
  // the tiniest products to loops, where the call and a forced operand copy would weigh
  // most. Matrix-vector products with M = 1 are a tie either way, so they stay loops
  // (which also read an inlined lhs without materializing it).
  static constexpr int64_t kExternMatmulMinMacs = 4096;

  // Whether matmul `id` should call BLAS: float, M not the constant 1, and M*N*K known to
  // reach the threshold. Symbolic dims count as 1, so a product only goes to BLAS when its
  // constant dims alone are big enough (the helper handles any run-time size, 0 and 1
  // included).
  bool UseExternMatmul(ValueId id) const {
    const ir::Node& n = g_.node(id);
    if (!ir::IsFloat(n.type.dtype)) return false;
    const ir::Shape& shape = n.type.shape;
    const ir::Shape& a = g_.type(n.operands[0]).shape;
    if (IsConstOne(shape[shape.size() - 2])) return false;
    int64_t macs = 1;
    for (const ir::SymExpr* d : {&shape[shape.size() - 2], &shape.back(), &a.back()}) {
      if (std::optional<int64_t> c = d->AsConstant()) macs *= *c;
    }
    return macs >= kExternMatmulMinMacs;
  }

  // The buffer holding matmul operand `v` (materialized now if it was inlined so far),
  // and whether that buffer holds its last two dims swapped: a transpose of a buffer that
  // swaps only the last two dims is read through BLAS's trans flag instead of copied.
  std::pair<int, bool> OperandBuffer(ValueId v, bool allow_transpose) {
    const ir::Node& n = g_.node(v);
    if (buffer_of_[v] < 0 && allow_transpose && n.op == OpCode::kTranspose &&
        buffer_of_[n.operands[0]] >= 0) {
      const auto& perm = n.attrs.Get<std::vector<int64_t>>("perm");
      const int64_t r = static_cast<int64_t>(perm.size());
      bool last_two = r >= 2 && perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
      for (int64_t i = 0; i + 2 < r; ++i) last_two = last_two && perm[i] == i;
      if (last_two) return {buffer_of_[n.operands[0]], true};
    }
    if (buffer_of_[v] < 0) {
      int b = AddBuffer(absl::StrCat("t", v), n.type, BufferKind::kTemp);
      Kernel k{KernelKind::kPointwise, KernelName(v), b};
      k.loops = Dims(n.type.shape);
      k.value = Inline(v, LoopVars(n.type.rank()));
      AddKernel(std::move(k));
      buffer_of_[v] = b;
      cost_[v] = 0;
    }
    return {buffer_of_[v], false};
  }

  void LowerExternMatmul(ValueId id, int out) {
    const ir::Node& n = g_.node(id);
    const ir::Shape& shape = n.type.shape;
    int nb = static_cast<int>(shape.size()) - 2;
    ir::Shape batch(shape.begin(), shape.begin() + nb);
    const int a = OperandBuffer(n.operands[0], /*allow_transpose=*/false).first;
    const auto [b, b_transposed] = OperandBuffer(n.operands[1], /*allow_transpose=*/true);
    std::vector<ExprPtr> bvars = LoopVars(nb);
    auto origin = [&](int buffer) {
      const ir::Shape& s = prog_.buffers[buffer].shape;
      std::vector<ExprPtr> idx = BroadcastIndex(ir::Shape(s.begin(), s.end() - 2), batch, bvars);
      idx.push_back(ConstI(0));
      idx.push_back(ConstI(0));
      return LoadBuffer(buffer, idx);
    };
    Kernel k{KernelKind::kExternMatmul, KernelName(id, "_blas"), out};
    k.loops = Dims(batch);
    k.loops.push_back(Sym(shape[nb]));
    k.loops.push_back(Sym(shape[nb + 1]));
    k.loops.push_back(Sym(g_.type(n.operands[0]).shape.back()));
    k.lhs = origin(a);
    k.rhs = origin(b);
    k.transpose_rhs = b_transposed;
    AddKernel(std::move(k));
  }

  void LowerMatmul(ValueId id, int out) {
    if (UseExternMatmul(id)) return LowerExternMatmul(id, out);
    const ir::Node& n = g_.node(id);
    const ir::Shape& shape = n.type.shape;
    const ir::Shape& a = g_.type(n.operands[0]).shape;
    const ir::Shape& b = g_.type(n.operands[1]).shape;
    int nb = static_cast<int>(shape.size()) - 2;
    ir::Shape batch(shape.begin(), shape.begin() + nb);
    std::vector<ExprPtr> bvars = LoopVars(nb);
    ExprPtr m = LoopVar(nb), nv = LoopVar(nb + 1), kv = LoopVar(nb + 2);
    std::vector<ExprPtr> a_idx = BroadcastIndex(ir::Shape(a.begin(), a.end() - 2), batch, bvars);
    a_idx.push_back(m);
    a_idx.push_back(kv);
    std::vector<ExprPtr> b_idx = BroadcastIndex(ir::Shape(b.begin(), b.end() - 2), batch, bvars);
    b_idx.push_back(kv);
    b_idx.push_back(nv);
    Kernel k{KernelKind::kMatmul, KernelName(id), out};
    k.loops = Dims(batch);
    k.loops.push_back(Sym(shape[nb]));
    k.loops.push_back(Sym(shape[nb + 1]));
    k.loops.push_back(Sym(a.back()));
    k.lhs = Value(n.operands[0], a_idx);
    k.rhs = Value(n.operands[1], b_idx);
    k.order = InnermostIsVar(k.rhs, nb + 1) ? MatmulOrder::kAxpy : MatmulOrder::kDot;
    AddKernel(std::move(k));
  }

  // True if the first load in `e` indexes its last dim by exactly loop variable `var`
  // (so consecutive `var` values read consecutive elements).
  static bool InnermostIsVar(const ExprPtr& e, int var) {
    if (e->kind == ExprKind::kLoad) {
      const ExprPtr& last = e->operands.back();
      return last->kind == ExprKind::kLoopVar && last->index == var;
    }
    for (const ExprPtr& o : e->operands) {
      if (o->kind == ExprKind::kLoad || o->kind == ExprKind::kOp || o->kind == ExprKind::kSelect ||
          o->kind == ExprKind::kCast) {
        return InnermostIsVar(o, var);
      }
    }
    return false;
  }

  void LowerKvWrite(ValueId id, int out) {
    const ir::Node& n = g_.node(id);
    ValueId cache = n.operands[0];
    const ir::Shape& shape = n.type.shape;
    int rank = static_cast<int>(shape.size());
    // In place when the cache is a graph input nobody else reads and the result is an
    // output: the caller donates the input buffer and gets it back updated.
    bool in_place = g_.node(cache).op == OpCode::kInput && users_[cache].size() == 1 &&
                    !is_output_[cache] && prog_.buffers[out].kind == BufferKind::kOutput;
    if (in_place) {
      prog_.buffers[out].alias_of = buffer_of_[cache];
      out_.args.back().donor_arg = prog_.buffers[buffer_of_[cache]].arg_index;
    } else {
      Kernel copy{KernelKind::kPointwise, KernelName(id, "_copy"), out};
      copy.loops = Dims(shape);
      copy.value = Value(cache, LoopVars(rank));
      AddKernel(std::move(copy));
    }
    const ir::Shape& rows = g_.type(n.operands[1]).shape;
    Kernel k{KernelKind::kPointwise, KernelName(id, "_rows"), out};
    k.loops = Dims(rows);
    std::vector<ExprPtr> vars = LoopVars(rank);
    k.value = Value(n.operands[1], vars);
    k.store_indices = vars;
    k.store_indices[rank - 2] = Op(ScalarOp::kAdd, vars[rank - 2], Sym(n.attrs.GetDim("pos")));
    AddKernel(std::move(k));
  }

  void LowerGather(ValueId id, int out) {
    const ir::Node& n = g_.node(id);
    const ir::Shape& table = g_.type(n.operands[0]).shape;
    int irank = g_.type(n.operands[1]).rank();
    std::vector<ExprPtr> vars = LoopVars(n.type.rank());
    ExprPtr row = Value(n.operands[1], std::vector<ExprPtr>(vars.begin(), vars.begin() + irank));
    // Clamped so a bad index cannot read out of bounds; CompiledGraph::Run rejects
    // out-of-range indices in inputs before running.
    row = Op(ScalarOp::kMax, Op(ScalarOp::kMin, row, Op(ScalarOp::kSub, Sym(table[0]), ConstI(1))),
             ConstI(0));
    std::vector<ExprPtr> t_idx = {row};
    t_idx.insert(t_idx.end(), vars.begin() + irank, vars.end());
    Kernel k{KernelKind::kPointwise, KernelName(id), out};
    k.loops = Dims(n.type.shape);
    k.value = Value(n.operands[0], t_idx);
    AddKernel(std::move(k));
  }

  // Outputs that were not materialized as themselves (an input returned directly, or a
  // node returned twice) get a copy kernel.
  absl::Status WriteOutputs() {
    const auto& outs = g_.outputs();
    for (int i = 0; i < static_cast<int>(outs.size()); ++i) {
      if (std::find(written_outputs_.begin(), written_outputs_.end(), i) != written_outputs_.end()) {
        continue;
      }
      ValueId v = outs[i];
      int b = AddBuffer(absl::StrCat("out", i), g_.type(v), BufferKind::kOutput);
      out_.args.push_back({ArgBinding::Kind::kOutput, "", v, i});
      Kernel k{KernelKind::kPointwise, absl::StrCat("k", prog_.kernels.size(), "_output", i), b};
      k.loops = Dims(g_.type(v).shape);
      k.value = Value(v, LoopVars(g_.type(v).rank()));
      AddKernel(std::move(k));
    }
    return absl::OkStatus();
  }

  // Temps get workspace offsets; a temp reuses the space of one that died before it was
  // defined when their sizes are the same expression (sizes may be symbolic).
  void PlanWorkspace() {
    struct Slot {
      ir::SymExpr size, offset;
      int free_after;
    };
    std::vector<Slot> slots;
    ir::SymExpr total = 0;
    for (size_t b = 0; b < prog_.buffers.size(); ++b) {
      Buffer& buf = prog_.buffers[b];
      if (buf.kind != BufferKind::kTemp) continue;
      ir::SymExpr bytes = ir::NumElements(buf.shape) * ir::DTypeSize(buf.dtype);
      ir::SymExpr size = (bytes + 63) / 64 * 64;
      int def = def_kernel_[b], last = std::max(last_use_[b], def);
      Slot* chosen = nullptr;
      for (Slot& s : slots) {
        if (s.free_after < def && s.size == size) {
          chosen = &s;
          break;
        }
      }
      if (chosen == nullptr) {
        slots.push_back({size, total, last});
        total = total + size;
        chosen = &slots.back();
      }
      chosen->free_after = last;
      buf.workspace_offset = Sym(chosen->offset);
    }
    prog_.workspace_bytes = total;
  }

  const ir::Graph& g_;
  Program prog_;
  LoweredGraph out_;
  std::vector<std::vector<ValueId>> users_;
  std::vector<bool> is_output_;
  std::vector<int> buffer_of_;
  std::vector<int> cost_;
  std::vector<int> def_kernel_, last_use_;  // per buffer
  std::vector<int> reads_;                  // buffers read by the kernel being built
  std::vector<int> written_outputs_;
};

}  // namespace

absl::StatusOr<LoweredGraph> Lower(const ir::Graph& graph, const LowerOptions& options) {
  absl::StatusOr<LoweredGraph> lowered = Lowerer(graph).Run();
  if (lowered.ok() && options.simplify_indices) SimplifyKernelIndices(&lowered->program);
  return lowered;
}

}  // namespace graphjit::compiler
