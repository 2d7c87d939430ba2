// build_kernels: lowering's first step, one walk over the graph in order that builds the
// kernel program. The decisions live beside it, one concern per file: index_exprs (dims
// and index rewrites as expressions), inline_node (a node's value as an expression),
// fusion (which values get buffers) and matmul_strategy (BLAS or loops, loop order).
#include "compiler/lower/build_kernels.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/lower/fusion.h"
#include "compiler/lower/index_exprs.h"
#include "compiler/lower/inline_node.h"
#include "compiler/lower/matmul_strategy.h"
#include "ir/check.h"
#include "ir/status_macros.h"

namespace graphjit::compiler {
namespace {

using ir::OpCode;
using ir::ValueId;

class KernelBuilder {
 public:
  KernelBuilder(const ir::Graph& g, ProductKernels products)
      : g_(g), products_(products), fusion_(g) {
    for (const std::string& s : g.Symbols()) prog_.symbols.push_back(s);
    prog_.name = g.name();
    buffer_of_.assign(g.num_nodes(), -1);
  }

  absl::StatusOr<LoweredGraph> Run() {
    GJ_RETURN_IF_ERROR(CreateArgBuffers());
    for (ValueId id = 0; id < g_.num_nodes(); ++id) {
      GJ_RETURN_IF_ERROR(LowerNode(id));
    }
    GJ_RETURN_IF_ERROR(WriteOutputs());
    out_.program = std::move(prog_);
    return std::move(out_);
  }

 private:
  // ---- expressions ---------------------------------------------------------------------

  ExprPtr Sym(const ir::SymExpr& e) { return SymToExpr(e, prog_.symbols); }

  std::vector<ExprPtr> Dims(const ir::Shape& shape) {
    std::vector<ExprPtr> dims;
    for (const ir::SymExpr& d : shape) dims.push_back(Sym(d));
    return dims;
  }

  // The value of node `v` at index `idx`: a load if it lives in a buffer, else its
  // expression inlined, built once per kernel and index (users meeting in one consumer,
  // x * sigmoid(x), share it, and codegen computes a shared expression once).
  ExprPtr Value(ValueId v, const std::vector<ExprPtr>& idx) {
    if (buffer_of_[v] >= 0) return LoadBuffer(buffer_of_[v], idx);
    std::pair<ValueId, std::vector<const Expr*>> key{v, {}};
    for (const ExprPtr& e : idx) key.second.push_back(e.get());
    if (auto it = inlined_.find(key); it != inlined_.end()) return it->second.value;
    ExprPtr value = Inline(v, idx);
    inlined_[key] = {idx, value};
    return value;
  }

  ExprPtr LoadBuffer(int b, const std::vector<ExprPtr>& idx) {
    return Load(b, prog_.buffers[b].dtype, idx);
  }

  ExprPtr Inline(ValueId v, const std::vector<ExprPtr>& idx) {
    return InlineNode(g_, v, idx, prog_.symbols,
                      [&](ValueId u, const std::vector<ExprPtr>& at) { return Value(u, at); });
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

  void AddKernel(Kernel k) {
    inlined_.clear();
    prog_.kernels.push_back(std::move(k));
  }

  std::string KernelName(ValueId id, const char* what = "") {
    return absl::StrCat("k", prog_.kernels.size(), "_", ir::OpName(g_.node(id).op), what);
  }

  absl::Status LowerNode(ValueId id) {
    const ir::Node& n = g_.node(id);
    if (n.op == OpCode::kInput || n.op == OpCode::kParam || buffer_of_[id] >= 0)
      return absl::OkStatus();
    if (ir::LoweringOf(n.op) == ir::OpLowering::kComposite) {
      return absl::UnimplementedError(absl::StrCat("lower: %", id, " (", ir::OpName(n.op),
                                                   ") is a composite op; run the decompose "
                                                   "pass before lowering"));
    }
    if (ir::LoweringOf(n.op) == ir::OpLowering::kRegion || ir::IsRuntimeOp(n.op)) {
      return absl::UnimplementedError(absl::StrCat(
          "lower: %", id, " (", ir::OpName(n.op), ") is ",
          ir::IsRuntimeOp(n.op) ? "run by its eager kernel" : "control flow",
          "; CompiledGraph runs such a graph as pieces (compiler/compiled/control_flow.h), "
          "each lowered on its own"));
    }
    if (!fusion_.Decide(id, buffer_of_)) return absl::OkStatus();
    int out = -1;
    if (fusion_.is_output(id)) {
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
#define GJ_POINTWISE_KERNEL_Region(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_Runtime(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_Source(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_Pointwise(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_Index(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_IndexComposite(name) case OpCode::k##name:
#define GJ_POINTWISE_KERNEL_Composite(name) case OpCode::k##name:
#include "ir/ops.def"
#undef GJ_OP
#undef GJ_POINTWISE_KERNEL_Kernel
#undef GJ_POINTWISE_KERNEL_Region
#undef GJ_POINTWISE_KERNEL_Runtime
#undef GJ_POINTWISE_KERNEL_Source
#undef GJ_POINTWISE_KERNEL_Pointwise
#undef GJ_POINTWISE_KERNEL_Index
#undef GJ_POINTWISE_KERNEL_IndexComposite
#undef GJ_POINTWISE_KERNEL_Composite
        Materialize(id, out);
    }
    buffer_of_[id] = out;
    fusion_.Materialized(id);  // consumers load it: no recomputation
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
    int axis = ir::ValueOrDie(
        ir::NormalizeAxis(n.attrs.GetInt("axis"), static_cast<int>(in.size()), "reduce"));
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
      k.finish_scale =
          Op(ScalarOp::kDiv, ConstF(1.0, n.type.dtype), Cast(k.reduce_extent, n.type.dtype));
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
    const int axis = ir::ValueOrDie(ir::NormalizeAxis(n.attrs.GetInt("axis"), rank, "cumsum"));
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

  // Pointwise kernels storing node `id`'s value into buffer `out`.
  //  - A concat writes each piece with a kernel of its own at the piece's offset (pieces
  //    that are inlined concats themselves split further), so no element goes through
  //    the select chain that reading a concat inline takes: a padded input is a copy of
  //    its interior and fills of its borders, each a plain loop.
  //  - A reshape loops over its operand's shape and stores through the reshape's index
  //    map instead of over its own shape: the operand's index rewrites (a window's, an
  //    im2col) then read without the div and mod that flattening dims puts into every
  //    load, and the store's own div / mod (if any) are by the merged dims alone. (Not to
  //    rank 0: empty store indices would mean the loops' own.)
  void Materialize(ValueId id, int out) {
    const ir::Node& n = g_.node(id);
    if (n.op == OpCode::kConcat) {
      std::vector<ExprPtr> offsets(n.type.rank(), ConstI(0));
      return MaterializePieces(id, offsets, out);
    }
    if (n.op == OpCode::kReshape && n.type.rank() > 0 &&
        g_.node(n.operands[0]).op == OpCode::kConcat && buffer_of_[n.operands[0]] < 0) {
      // A reshape of an inlined concat (squeezenet's fire modules into the next 1 x 1
      // convolution's layout): its pieces, each stored through the reshape's index map.
      // Read inline, every element took the select chain, and one loop order served
      // pieces of different layouts (a Winograd output beside a plain 1 x 1's).
      const Reshape reshape{g_.type(n.operands[0]).shape, n.type.shape};
      std::vector<ExprPtr> offsets(reshape.from.size(), ConstI(0));
      return MaterializePieces(n.operands[0], offsets, out, &reshape);
    }
    Kernel k{KernelKind::kPointwise, KernelName(id), out};
    if (n.op == OpCode::kReshape && n.type.rank() > 0) {
      const ir::Shape& in = g_.type(n.operands[0]).shape;
      std::vector<ExprPtr> vars = LoopVars(in.size());
      k.loops = Dims(in);
      k.value = Value(n.operands[0], vars);
      k.store_indices = ReshapeIndex(n.type.shape, in, vars, prog_.symbols);
    } else {
      k.loops = Dims(n.type.shape);
      k.value = Inline(id, LoopVars(n.type.rank()));
    }
    AddKernel(std::move(k));
  }

  // A reshape from shape `from` (a concat's) to `to`.
  struct Reshape {
    const ir::Shape& from;
    const ir::Shape& to;
  };

  // Node `v` (a piece of a concat being materialized) stored at `offsets` in buffer `out`,
  // or where `reshape` is set, at the offsets' index (into the outermost concat) reshaped.
  void MaterializePieces(ValueId v, std::vector<ExprPtr> offsets, int out,
                         const Reshape* reshape = nullptr) {
    const ir::Node& n = g_.node(v);
    const int rank = n.type.rank();
    if (n.op == OpCode::kConcat && buffer_of_[v] < 0) {
      const int axis = ir::ValueOrDie(ir::NormalizeAxis(n.attrs.GetInt("axis"), rank, "concat"));
      ir::SymExpr start = 0;
      const ExprPtr base = offsets[axis];
      for (ValueId p : n.operands) {
        offsets[axis] = Op(ScalarOp::kAdd, base, Sym(start));
        MaterializePieces(p, offsets, out, reshape);
        start = start + g_.type(p).shape[axis];
      }
      return;
    }
    Kernel k{KernelKind::kPointwise, KernelName(v), out};
    std::vector<ExprPtr> vars = LoopVars(rank);
    k.loops = Dims(n.type.shape);
    k.value = Value(v, vars);
    for (int d = 0; d < rank; ++d)
      k.store_indices.push_back(Op(ScalarOp::kAdd, vars[d], offsets[d]));
    if (reshape != nullptr) {
      k.store_indices = ReshapeIndex(reshape->to, reshape->from, k.store_indices, prog_.symbols);
    }
    AddKernel(std::move(k));
  }

  // Whether operand `v` of a product is a buffer with its last two dims swapped, which
  // BLAS reads through its trans flag instead of a copy.
  bool ReadsTransposed(ValueId v) {
    const ir::Node& n = g_.node(v);
    return buffer_of_[v] < 0 && n.op == OpCode::kTranspose && buffer_of_[n.operands[0]] >= 0 &&
           SwapsLastTwoAxes(n.attrs.Get<std::vector<int64_t>>("perm"));
  }

  // The buffer holding matmul operand `v` (materialized now if it was inlined so far),
  // and whether that buffer holds its last two dims swapped: a transpose of a buffer that
  // swaps only the last two dims is read through BLAS's trans flag instead of copied.
  std::pair<int, bool> OperandBuffer(ValueId v, bool allow_transpose) {
    const ir::Node& n = g_.node(v);
    if (allow_transpose && ReadsTransposed(v)) return {buffer_of_[n.operands[0]], true};
    if (buffer_of_[v] < 0) {
      int b = AddBuffer(absl::StrCat("t", v), n.type, BufferKind::kTemp);
      Materialize(v, b);
      buffer_of_[v] = b;
      fusion_.Materialized(v);
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
    const ir::Node& n = g_.node(id);
    const ProductKernel how =
        ChooseProductKernel(g_, id, products_, ReadsTransposed(n.operands[1]));
    if (how == ProductKernel::kBlas) return LowerExternMatmul(id, out);
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
    if (how == ProductKernel::kTiles) {
      // Both operands from buffers, as for BLAS (the tiles pack the rhs a vector at a time
      // from a buffer contiguous along n), except weights packed into the tiles' panels
      // (either operand), a convolution's windows and reshapes of a buffer, which the tiles
      // read in place (codegen_tiles.cc): no im2col copy.
      auto in_place = [&](ValueId v, const std::vector<ExprPtr>& idx, int rows, int cols) {
        return buffer_of_[v] < 0 && TilesReadInPlace(g_, v) &&
               SeparableLoad(Value(v, idx).get(), rows, cols);
      };
      if (!IsPackedPanels(g_, n.operands[0]) && !in_place(n.operands[0], a_idx, nb, nb + 2))
        OperandBuffer(n.operands[0], /*allow_transpose=*/false);
      if (!IsPackedPanels(g_, n.operands[1]) && !in_place(n.operands[1], b_idx, nb + 2, nb + 1))
        OperandBuffer(n.operands[1], /*allow_transpose=*/false);
    }
    Kernel k{KernelKind::kMatmul, KernelName(id), out};
    k.loops = Dims(batch);
    k.loops.push_back(Sym(shape[nb]));
    k.loops.push_back(Sym(shape[nb + 1]));
    k.loops.push_back(Sym(a.back()));
    k.lhs = Value(n.operands[0], a_idx);
    k.rhs = Value(n.operands[1], b_idx);
    k.order = how == ProductKernel::kTiles ? MatmulOrder::kTiles : ChooseMatmulOrder(k.rhs, nb + 1);
    if (how == ProductKernel::kTiles) k.name = KernelName(id, "_tiles");
    AddKernel(std::move(k));
  }

  void LowerKvWrite(ValueId id, int out) {
    const ir::Node& n = g_.node(id);
    ValueId cache = n.operands[0];
    const ir::Shape& shape = n.type.shape;
    int rank = static_cast<int>(shape.size());
    // In place when the cache is a graph input nobody else reads and the result is an
    // output: the caller donates the input buffer and gets it back updated.
    bool in_place = g_.node(cache).op == OpCode::kInput && fusion_.users(cache).size() == 1 &&
                    !fusion_.is_output(cache) && prog_.buffers[out].kind == BufferKind::kOutput;
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
      if (std::find(written_outputs_.begin(), written_outputs_.end(), i) !=
          written_outputs_.end()) {
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

  const ir::Graph& g_;
  const ProductKernels products_;
  Program prog_;
  LoweredGraph out_;
  FusionPolicy fusion_;
  std::vector<int> buffer_of_;  // per node: its buffer, or -1 while it is inlined
  // Per node and index (the index expressions' addresses): its inlined expression. The
  // entry owns the index expressions, so no address in a key is freed and reused by
  // another index while the entry lives: a tap at (i2 + 3) once found the expression built
  // for a freed (i2 + 4) at the same address, and the kernel read the wrong row (one
  // process in ten lowered mobilenet_v3_small so; which depended on the allocator).
  struct Inlined {
    std::vector<ExprPtr> idx;
    ExprPtr value;
  };
  absl::flat_hash_map<std::pair<ValueId, std::vector<const Expr*>>, Inlined> inlined_;
  std::vector<int> written_outputs_;
};

}  // namespace

absl::StatusOr<LoweredGraph> BuildKernels(const ir::Graph& graph, ProductKernels products) {
  return KernelBuilder(graph, products).Run();
}

}  // namespace graphjit::compiler
