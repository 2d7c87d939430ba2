#include "compiler/lower/program_codec.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/byte_io.h"

namespace graphjit::compiler {
namespace {

// v2: matmul epilogues; v3: kernels run once per workspace, and a workspace header.
constexpr absl::string_view kTag = "graphjit-program-v3";
// Loop variables index a kernel's loops (a handful); anything larger is damage.
constexpr int64_t kMaxLoopVars = 64;

using ir::kNumDTypes;

// --- encoding

class ProgramWriter {
 public:
  // Rows for every expression reachable from the program, operands first.
  void CollectExprs(const LoweredGraph& lowered) {
    const Program& p = lowered.program;
    for (const Buffer& b : p.buffers) {
      for (const ExprPtr& d : b.dims) Collect(d);
      Collect(b.workspace_offset);
    }
    // Every expression field WriteKernel writes (KernelExprs leaves out the ones passes
    // do not rewrite, such as parallel_work).
    for (const Kernel& k : p.kernels) {
      for (const auto* list : {&k.loops, &k.store_indices, &k.sum_indices}) {
        for (const ExprPtr& e : *list) Collect(e);
      }
      for (const ExprPtr* e : {&k.value, &k.reduce_extent, &k.finish_scale, &k.lhs, &k.rhs,
                               &k.values, &k.values_width, &k.parallel_work, &k.epilogue}) {
        Collect(*e);
      }
    }
  }

  std::string Write(const LoweredGraph& lowered) && {
    const Program& p = lowered.program;
    w_.Str(kTag);
    w_.Str(p.name);
    w_.I64(p.num_args);
    w_.I64(static_cast<int64_t>(p.symbols.size()));
    for (const std::string& s : p.symbols) w_.Str(s);
    w_.I64(static_cast<int64_t>(p.buffers.size()));
    w_.I64(static_cast<int64_t>(rows_.size()));
    for (const Expr* e : rows_) WriteExpr(*e);
    for (const Buffer& b : p.buffers) WriteBuffer(b);
    w_.I64(static_cast<int64_t>(p.kernels.size()));
    for (const Kernel& k : p.kernels) WriteKernel(k);
    w_.Sym(p.workspace_bytes);
    w_.I64(static_cast<int64_t>(lowered.args.size()));
    for (const ArgBinding& a : lowered.args) {
      w_.U8(static_cast<uint8_t>(a.kind));
      w_.Str(a.name);
      w_.I64(a.value);
      w_.I64(a.output_index);
      w_.I64(a.donor_arg);
    }
    return std::move(w_).Take();
  }

 private:
  void Collect(const ExprPtr& e) {
    if (e == nullptr || row_of_.contains(e.get())) return;
    for (const ExprPtr& o : e->operands) Collect(o);
    row_of_[e.get()] = static_cast<int64_t>(rows_.size()) + 1;
    rows_.push_back(e.get());
  }
  void Ref(const ExprPtr& e) { w_.I64(e == nullptr ? 0 : row_of_.at(e.get())); }
  void Refs(const std::vector<ExprPtr>& es) {
    w_.I64(static_cast<int64_t>(es.size()));
    for (const ExprPtr& e : es) Ref(e);
  }
  void WriteExpr(const Expr& e) {
    w_.U8(static_cast<uint8_t>(e.kind));
    w_.U8(static_cast<uint8_t>(e.dtype));
    w_.U8(static_cast<uint8_t>(e.op));
    w_.I64(e.index);
    w_.F64(e.f_value);
    w_.I64(e.i_value);
    Refs(e.operands);
  }
  void WriteBuffer(const Buffer& b) {
    w_.Str(b.name);
    w_.U8(static_cast<uint8_t>(b.dtype));
    w_.U8(static_cast<uint8_t>(b.kind));
    w_.I64(b.arg_index);
    w_.I64(b.alias_of);
    w_.I64(static_cast<int64_t>(b.shape.size()));
    for (const ir::SymExpr& d : b.shape) w_.Sym(d);
    Refs(b.dims);
    Ref(b.workspace_offset);
  }
  void WriteKernel(const Kernel& k) {
    w_.U8(static_cast<uint8_t>(k.kind));
    w_.Str(k.name);
    w_.I64(k.out);
    Refs(k.loops);
    Refs(k.store_indices);
    Ref(k.value);
    Ref(k.reduce_extent);
    w_.U8(static_cast<uint8_t>(k.combine));
    Ref(k.finish_scale);
    Ref(k.lhs);
    Ref(k.rhs);
    w_.U8(static_cast<uint8_t>(k.order));
    w_.U8(k.transpose_rhs ? 1 : 0);
    Ref(k.values);
    Ref(k.values_width);
    w_.I64(k.scores);
    w_.I64(k.sum_out);
    Refs(k.sum_indices);
    w_.U8(k.out_exclusive ? 1 : 0);
    w_.I64(k.parallel_loop);
    Ref(k.parallel_work);
    w_.I64(k.parallel_align);
    w_.I64(k.range_symbol);
    Ref(k.epilogue);
    w_.U8(k.once ? 1 : 0);
  }

  ir::ByteWriter w_;
  std::vector<const Expr*> rows_;
  absl::flat_hash_map<const Expr*, int64_t> row_of_;
};

// --- decoding

class ProgramReader {
 public:
  explicit ProgramReader(absl::string_view bytes) : r_(bytes, "lowered program") {}

  absl::StatusOr<LoweredGraph> Read() && {
    LoweredGraph lowered;
    Program& p = lowered.program;
    if (r_.Str("tag") != kTag && r_.ok()) r_.Fail("not a ", kTag, " record");
    p.name = r_.Str("name");
    p.num_args = static_cast<int>(r_.Ranged("num_args", 0, INT32_MAX));
    const int64_t num_symbols = r_.Count("symbols", 8);
    for (int64_t i = 0; i < num_symbols && r_.ok(); ++i) p.symbols.push_back(r_.Str("symbol"));
    num_buffers_ = r_.Count("buffers", 8);
    const int64_t num_rows = r_.Count("expressions", 8);
    for (int64_t i = 0; i < num_rows && r_.ok(); ++i) ReadExpr(p);
    p.buffers.resize(num_buffers_);
    for (Buffer& b : p.buffers) {
      if (!r_.ok()) break;
      ReadBuffer(p, &b);
    }
    CheckLoads(p);
    const int64_t num_kernels = r_.Count("kernels", 8);
    for (int64_t i = 0; i < num_kernels && r_.ok(); ++i) p.kernels.push_back(ReadKernel(p));
    p.workspace_bytes = r_.Sym("workspace bytes");
    const int64_t num_args = r_.Count("args", 8);
    for (int64_t i = 0; i < num_args && r_.ok(); ++i) {
      ArgBinding a;
      a.kind = r_.EnumValue<ArgBinding::Kind>("arg kind", 4);
      a.name = r_.Str("arg name");
      a.value = static_cast<ir::ValueId>(r_.Ranged("arg value", -1, INT32_MAX));
      a.output_index = static_cast<int>(r_.Ranged("arg output index", -1, INT32_MAX));
      a.donor_arg = static_cast<int>(r_.Ranged("arg donor", -1, num_args - 1));
      lowered.args.push_back(std::move(a));
    }
    r_.ExpectEnd();
    if (!r_.ok()) return r_.status();
    return lowered;
  }

 private:
  ExprPtr Ref(absl::string_view what, bool nullable = true) {
    const int64_t ref = r_.Ranged(what, nullable ? 0 : 1, static_cast<int64_t>(rows_.size()));
    return ref == 0 ? nullptr : rows_[ref - 1];
  }
  std::vector<ExprPtr> Refs(absl::string_view what) {
    const int64_t n = r_.Count(what, 8);
    std::vector<ExprPtr> out;
    for (int64_t i = 0; i < n && r_.ok(); ++i) out.push_back(Ref(what, /*nullable=*/false));
    return out;
  }
  int64_t BufferIndex(absl::string_view what, bool optional) {
    return r_.Ranged(what, optional ? -1 : 0, num_buffers_ - 1);
  }

  void ReadExpr(const Program& p) {
    auto e = std::make_shared<Expr>();
    e->kind = r_.EnumValue<ExprKind>("expression kind", static_cast<int>(ExprKind::kCast) + 1);
    e->dtype = r_.EnumValue<ir::DType>("expression dtype", kNumDTypes);
    e->op = r_.EnumValue<ScalarOp>("expression op", kNumScalarOps);
    const int64_t index = r_.I64("expression index");
    e->f_value = r_.F64("expression value");
    e->i_value = r_.I64("expression value");
    e->operands = Refs("expression operands");
    if (!r_.ok()) return;
    const int expected = ExpectedOperands(e->kind, e->op);
    // A load has one operand per dim of its buffer: checked once the buffers are read.
    const size_t want = e->kind == ExprKind::kLoad ? e->operands.size() : expected;
    switch (e->kind) {
      case ExprKind::kLoopVar:
        if (index < 0 || index >= kMaxLoopVars) r_.Fail("loop variable ", index);
        break;
      case ExprKind::kSymbol:
        if (index < 0 || index >= static_cast<int64_t>(p.symbols.size())) {
          r_.Fail("symbol ", index, " of ", p.symbols.size());
        }
        break;
      case ExprKind::kLoad:
        if (index < 0 || index >= num_buffers_) {
          r_.Fail("load of buffer ", index, " of ", num_buffers_);
        }
        loads_.push_back(e.get());
        break;
      default:
        break;
    }
    if (r_.ok() && e->operands.size() != want) {
      r_.Fail("expression row ", rows_.size() + 1, " has ", e->operands.size(),
              " operands, expected ", want);
    }
    e->index = static_cast<int>(index);
    rows_.push_back(std::move(e));
  }

  void ReadBuffer(const Program& p, Buffer* b) {
    b->name = r_.Str("buffer name");
    b->dtype = r_.EnumValue<ir::DType>("buffer dtype", kNumDTypes);
    b->kind = r_.EnumValue<BufferKind>("buffer kind", static_cast<int>(BufferKind::kTemp) + 1);
    b->arg_index = static_cast<int>(r_.Ranged("buffer arg index", -1, p.num_args - 1));
    b->alias_of = static_cast<int>(BufferIndex("buffer alias", /*optional=*/true));
    const int64_t rank = r_.Count("buffer rank", 8);
    for (int64_t d = 0; d < rank && r_.ok(); ++d) b->shape.push_back(r_.Sym("buffer dim"));
    b->dims = Refs("buffer dims");
    b->workspace_offset = Ref("buffer workspace offset");
    if (r_.ok() && b->dims.size() != b->shape.size()) {
      r_.Fail("buffer '", b->name, "' has ", b->shape.size(), " dims and ", b->dims.size(),
              " dim expressions");
    }
  }

  // Each load has one index per dim of the buffer it reads.
  void CheckLoads(const Program& p) {
    for (const Expr* load : loads_) {
      if (!r_.ok()) return;
      const size_t rank = p.buffers[load->index].dims.size();
      if (load->operands.size() != rank) {
        r_.Fail("a load of buffer ", load->index, " (rank ", rank, ") has ", load->operands.size(),
                " indices");
      }
    }
  }

  Kernel ReadKernel(const Program& p) {
    Kernel k;
    k.kind = r_.EnumValue<KernelKind>("kernel kind", kNumKernelKinds);
    k.name = r_.Str("kernel name");
    k.out = static_cast<int>(BufferIndex("kernel output", /*optional=*/false));
    k.loops = Refs("kernel loops");
    k.store_indices = Refs("kernel store indices");
    k.value = Ref("kernel value");
    k.reduce_extent = Ref("kernel reduce extent");
    k.combine = r_.EnumValue<ScalarOp>("kernel combine", kNumScalarOps);
    k.finish_scale = Ref("kernel finish scale");
    k.lhs = Ref("kernel lhs");
    k.rhs = Ref("kernel rhs");
    k.order = r_.EnumValue<MatmulOrder>("kernel matmul order", kNumMatmulOrders);
    k.transpose_rhs = r_.U8("kernel transpose_rhs") != 0;
    k.values = Ref("kernel values");
    k.values_width = Ref("kernel values width");
    k.scores = static_cast<int>(BufferIndex("kernel scores", /*optional=*/true));
    k.sum_out = static_cast<int>(BufferIndex("kernel sum output", /*optional=*/true));
    k.sum_indices = Refs("kernel sum indices");
    k.out_exclusive = r_.U8("kernel out_exclusive") != 0;
    k.parallel_loop = static_cast<int>(r_.Ranged("kernel parallel loop", -1, kMaxLoopVars - 1));
    k.parallel_work = Ref("kernel parallel work");
    k.parallel_align = r_.Ranged("kernel parallel align", 1, INT64_MAX);
    // The range takes two symbols: range_symbol and the next.
    k.range_symbol = static_cast<int>(
        r_.Ranged("kernel range symbol", -1,
                  std::max<int64_t>(-1, static_cast<int64_t>(p.symbols.size()) - 2)));
    k.epilogue = Ref("kernel epilogue");
    k.once = r_.U8("kernel once") != 0;
    return k;
  }

  ir::ByteReader r_;
  int64_t num_buffers_ = 0;
  std::vector<std::shared_ptr<Expr>> rows_;
  std::vector<const Expr*> loads_;
};

}  // namespace

std::string EncodeLoweredGraph(const LoweredGraph& lowered) {
  ProgramWriter writer;
  writer.CollectExprs(lowered);
  return std::move(writer).Write(lowered);
}

absl::StatusOr<LoweredGraph> DecodeLoweredGraph(absl::string_view bytes) {
  return ProgramReader(bytes).Read();
}

}  // namespace graphjit::compiler
