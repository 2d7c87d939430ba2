#include "compiler/lower/kernel_ir.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/check.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler {

namespace {

enum class ScalarClass : uint8_t { kBinary, kCompare, kUnary };

struct ScalarFacts {
  const char* name;
  ScalarClass cls;
  int cost;
};

// Indexed by ScalarOp: the same lists generate the enum, so the order matches.
constexpr ScalarFacts kScalarFacts[] = {
#define GJ_SCALAR_OP(name, spelling, cls, cost) {spelling, ScalarClass::k##cls, cost},
#include "compiler/lower/scalar_ops.def"
#undef GJ_SCALAR_OP
#define GJ_FLOAT_MATH(name, spelling, cost, ...) {spelling, ScalarClass::kUnary, cost},
#include "runtime/float_math.def"
#undef GJ_FLOAT_MATH
};
static_assert(sizeof(kScalarFacts) / sizeof(kScalarFacts[0]) == kNumScalarOps);

const ScalarFacts& FactsOf(ScalarOp op) {
  GJ_CHECK(static_cast<int>(op) < kNumScalarOps) << "bad ScalarOp " << static_cast<int>(op);
  return kScalarFacts[static_cast<int>(op)];
}

// ops.def's Scalar column names a ScalarOp (kScalarOf_Add is ScalarOp::kAdd) or None. A
// name that is no ScalarOp does not compile.
#define GJ_SCALAR_OP(name, ...) \
  [[maybe_unused]] constexpr std::optional<ScalarOp> kScalarOf_##name = ScalarOp::k##name;
#include "compiler/lower/scalar_ops.def"
#undef GJ_SCALAR_OP
#define GJ_FLOAT_MATH(name, ...) \
  [[maybe_unused]] constexpr std::optional<ScalarOp> kScalarOf_##name = ScalarOp::k##name;
#include "runtime/float_math.def"
#undef GJ_FLOAT_MATH
[[maybe_unused]] constexpr std::optional<ScalarOp> kScalarOf_None = std::nullopt;

constexpr std::optional<ScalarOp> kScalarOfOp[] = {
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, lowering, scalar, ...) \
  kScalarOf_##scalar,
#include "ir/ops.def"
#undef GJ_OP
};

// Exactly the Pointwise ops have a scalar op.
#define GJ_OP(name, spelling, min_arity, max_arity, schema, rule, lowering, scalar, ...) \
  static_assert((ir::OpLowering::k##lowering == ir::OpLowering::kPointwise) ==           \
                    kScalarOf_##scalar.has_value(),                                      \
                "ir/ops.def: op " spelling                                               \
                " is Pointwise without a Scalar op, or has one "                         \
                "without being Pointwise");
#include "ir/ops.def"
#undef GJ_OP

}  // namespace

bool IsUnary(ScalarOp op) { return FactsOf(op).cls == ScalarClass::kUnary; }
bool IsComparison(ScalarOp op) { return FactsOf(op).cls == ScalarClass::kCompare; }
const char* ScalarOpName(ScalarOp op) { return FactsOf(op).name; }
int ScalarOpCost(ScalarOp op) { return FactsOf(op).cost; }

bool IsTranscendental(ScalarOp op) { return ScalarOpCost(op) >= 8; }

std::optional<ScalarOp> ScalarOpFor(ir::OpCode op) { return kScalarOfOp[static_cast<int>(op)]; }

namespace {

ExprPtr Make(Expr e) { return std::make_shared<const Expr>(std::move(e)); }

bool IsConstI(const ExprPtr& e, int64_t* v = nullptr) {
  if (e->kind != ExprKind::kConst || e->dtype != ir::DType::kI64) return false;
  if (v != nullptr) *v = e->i_value;
  return true;
}

// Folded constants follow the run-time semantics: i64 wraps, division floors.
using runtime::FloorDivI64;
using runtime::FloorModI64;
using runtime::WrapAdd;
using runtime::WrapMul;
using runtime::WrapSub;

}  // namespace

int ExpectedOperands(ExprKind kind, ScalarOp op) {
  switch (kind) {
    case ExprKind::kConst:
    case ExprKind::kLoopVar:
    case ExprKind::kSymbol:
      return 0;
    case ExprKind::kLoad:
      return -1;
    case ExprKind::kOp:
      if (static_cast<int>(op) >= kNumScalarOps) return -1;
      return IsUnary(op) ? 1 : 2;
    case ExprKind::kSelect:
      return 3;
    case ExprKind::kCast:
      return 1;
  }
  return -1;
}

ExprPtr ConstF(double v, ir::DType dtype) {
  Expr e{ExprKind::kConst, dtype};
  e.f_value = v;
  // A float constant's i_value is unused, but it must not be an undefined conversion.
  e.i_value = runtime::SaturatingToI64(v);
  if (dtype == ir::DType::kBool) e.i_value = v != 0;
  return Make(std::move(e));
}

ExprPtr ConstI(int64_t v) {
  Expr e{ExprKind::kConst, ir::DType::kI64};
  e.i_value = v;
  e.f_value = static_cast<double>(v);
  return Make(std::move(e));
}

ExprPtr ConstBool(bool v) { return ConstF(v ? 1.0 : 0.0, ir::DType::kBool); }

ExprPtr LoopVar(int index) {
  Expr e{ExprKind::kLoopVar, ir::DType::kI64};
  e.index = index;
  return Make(std::move(e));
}

ExprPtr SymbolValue(int index) {
  Expr e{ExprKind::kSymbol, ir::DType::kI64};
  e.index = index;
  return Make(std::move(e));
}

ExprPtr Load(int buffer, ir::DType dtype, std::vector<ExprPtr> indices) {
  Expr e{ExprKind::kLoad, dtype};
  e.index = buffer;
  e.operands = std::move(indices);
  return Make(std::move(e));
}

ExprPtr Op(ScalarOp op, ExprPtr a, ExprPtr b) {
  GJ_CHECK(a != nullptr && (IsUnary(op) == (b == nullptr)))
      << "bad operands for " << ScalarOpName(op);
  int64_t x = 0, y = 0;
  // Fold and simplify i64 index arithmetic so affine indices stay readable and cheap.
  if (b != nullptr && a->dtype == ir::DType::kI64) {
    bool ca = IsConstI(a, &x), cb = IsConstI(b, &y);
    switch (op) {
      case ScalarOp::kAdd:
        if (ca && cb) return ConstI(WrapAdd(x, y));
        if (ca && x == 0) return b;
        if (cb && y == 0) return a;
        break;
      case ScalarOp::kSub:
        if (ca && cb) return ConstI(WrapSub(x, y));
        if (cb && y == 0) return a;
        break;
      case ScalarOp::kMul:
        if (ca && cb) return ConstI(WrapMul(x, y));
        if ((ca && x == 0) || (cb && y == 0)) return ConstI(0);
        if (ca && x == 1) return b;
        if (cb && y == 1) return a;
        break;
      case ScalarOp::kDiv:
        if (ca && cb) return ConstI(FloorDivI64(x, y));
        if (cb && y == 1) return a;
        break;
      case ScalarOp::kMod:
        if (ca && cb) return ConstI(FloorModI64(x, y));
        if (cb && y == 1) return ConstI(0);
        break;
      default:
        break;
    }
  }
  Expr e{ExprKind::kOp, IsComparison(op) ? ir::DType::kBool : a->dtype};
  e.op = op;
  e.operands.push_back(std::move(a));
  if (b != nullptr) e.operands.push_back(std::move(b));
  return Make(std::move(e));
}

ExprPtr Select(ExprPtr cond, ExprPtr a, ExprPtr b) {
  Expr e{ExprKind::kSelect, a->dtype};
  e.operands = {std::move(cond), std::move(a), std::move(b)};
  return Make(std::move(e));
}

ExprPtr Cast(ExprPtr x, ir::DType dtype) {
  if (x->dtype == dtype) return x;
  Expr e{ExprKind::kCast, dtype};
  e.operands = {std::move(x)};
  return Make(std::move(e));
}

std::string ExprToString(const ExprPtr& e) {
  switch (e->kind) {
    case ExprKind::kConst:
      return ir::IsFloat(e->dtype) ? absl::StrCat(e->f_value) : absl::StrCat(e->i_value);
    case ExprKind::kLoopVar:
      return absl::StrCat("i", e->index);
    case ExprKind::kSymbol:
      return absl::StrCat("s", e->index);
    case ExprKind::kLoad: {
      std::vector<std::string> idx;
      for (const ExprPtr& i : e->operands) idx.push_back(ExprToString(i));
      return absl::StrCat("b", e->index, "[", absl::StrJoin(idx, ", "), "]");
    }
    case ExprKind::kOp:
      if (IsUnary(e->op)) {
        return absl::StrCat(ScalarOpName(e->op), "(", ExprToString(e->operands[0]), ")");
      }
      return absl::StrCat("(", ExprToString(e->operands[0]), " ", ScalarOpName(e->op), " ",
                          ExprToString(e->operands[1]), ")");
    case ExprKind::kSelect:
      return absl::StrCat("select(", ExprToString(e->operands[0]), ", ",
                          ExprToString(e->operands[1]), ", ", ExprToString(e->operands[2]), ")");
    case ExprKind::kCast:
      return absl::StrCat(ir::DTypeName(e->dtype), "(", ExprToString(e->operands[0]), ")");
  }
  return "?";
}

std::vector<ExprPtr*> MutableKernelExprs(Kernel* k) {
  std::vector<ExprPtr*> roots;
  for (ExprPtr& e : k->loops) roots.push_back(&e);
  for (ExprPtr& e : k->store_indices) roots.push_back(&e);
  for (ExprPtr* e : {&k->value, &k->reduce_extent, &k->finish_scale, &k->lhs, &k->rhs, &k->values,
                     &k->values_width}) {
    roots.push_back(e);
  }
  for (ExprPtr& e : k->sum_indices) roots.push_back(&e);
  roots.push_back(&k->epilogue);
  return roots;
}

std::vector<const ExprPtr*> KernelExprs(const Kernel& k) {
  std::vector<ExprPtr*> roots = MutableKernelExprs(const_cast<Kernel*>(&k));
  return std::vector<const ExprPtr*>(roots.begin(), roots.end());
}

std::vector<int*> MutableKernelWrites(Kernel* k) {
  std::vector<int*> writes = {&k->out};
  if (k->kind == KernelKind::kAttention) {
    writes.push_back(&k->scores);
    writes.push_back(&k->sum_out);
  }
  return writes;
}

std::vector<int> KernelWrites(const Kernel& k) {
  std::vector<int> writes;
  for (int* b : MutableKernelWrites(const_cast<Kernel*>(&k))) writes.push_back(*b);
  return writes;
}

std::vector<ExprPtr> KernelExtents(const Kernel& k) {
  std::vector<ExprPtr> extents = k.loops;
  if (ExprPtr var_extent = VarExtent(k)) extents.push_back(std::move(var_extent));
  return extents;
}

ExprPtr* MutableVarExtent(Kernel* k) {
  switch (FactsOf(k->kind).var) {
    case KernelKindVar::kNone:
      return nullptr;
    case KernelKindVar::kReduce:
      return &k->reduce_extent;
    case KernelKindVar::kColumn:
      return &k->values_width;
  }
  return nullptr;
}

ExprPtr VarExtent(const Kernel& k) {
  const ExprPtr* extent = MutableVarExtent(const_cast<Kernel*>(&k));  // read only
  return extent == nullptr ? nullptr : *extent;
}

int NumLoopVars(const Kernel& k) {
  return static_cast<int>(k.loops.size()) + (FactsOf(k.kind).var != KernelKindVar::kNone ? 1 : 0);
}

int DefaultStoreRank(const Kernel& k) {
  const int loops = static_cast<int>(k.loops.size());
  switch (FactsOf(k.kind).store) {
    case KernelKindStore::kLoops:
      return loops;
    case KernelKindStore::kLoopsAndVar:
      return loops + 1;
    case KernelKindStore::kProduct:
      return loops - 1;
  }
  return loops;
}

namespace {

void CollectLoads(const Expr* e, std::set<int>* loads) {
  if (e == nullptr) return;
  if (e->kind == ExprKind::kLoad) loads->insert(e->index);
  for (const ExprPtr& o : e->operands) CollectLoads(o.get(), loads);
}

}  // namespace

std::set<int> KernelLoads(const Kernel& k) {
  std::set<int> loads;
  for (const ExprPtr* e : KernelExprs(k)) CollectLoads(e->get(), &loads);
  return loads;
}

bool UsesLoopVar(const Expr* e, int var) {
  if (e->kind == ExprKind::kLoopVar) return e->index == var;
  for (const ExprPtr& o : e->operands) {
    if (UsesLoopVar(o.get(), var)) return true;
  }
  return false;
}

namespace {

bool SeparableIndex(const Expr* e, int a, int b) {
  if (!UsesLoopVar(e, a) || !UsesLoopVar(e, b)) return true;
  if (e->kind != ExprKind::kOp || e->operands.size() != 2) return false;
  const Expr* x = e->operands[0].get();
  const Expr* y = e->operands[1].get();
  auto free_of_vars = [](const Expr* f) {
    return f->kind == ExprKind::kConst || f->kind == ExprKind::kSymbol;
  };
  switch (e->op) {
    case ScalarOp::kAdd:
    case ScalarOp::kSub:
      return SeparableIndex(x, a, b) && SeparableIndex(y, a, b);
    case ScalarOp::kMul:
      return (free_of_vars(x) && SeparableIndex(y, a, b)) ||
             (free_of_vars(y) && SeparableIndex(x, a, b));
    default:
      return false;
  }
}

}  // namespace

int64_t PackedPanelWidth(const Expr* e, const std::vector<ExprPtr>& dims, int v, int k) {
  if (e == nullptr || e->kind != ExprKind::kLoad) return 0;
  const auto& ix = e->operands;
  const size_t r = ix.size();
  if (r < 3 || dims.size() != r || dims.back()->kind != ExprKind::kConst) return 0;
  const std::optional<int64_t> width = dims.back()->i_value;
  auto is_var = [](const ExprPtr& x, int var) {
    return x->kind == ExprKind::kLoopVar && x->index == var;
  };
  auto is_v_by_width = [&](const ExprPtr& x, ScalarOp op) {
    return x->kind == ExprKind::kOp && x->op == op && x->operands.size() == 2 &&
           is_var(x->operands[0], v) && x->operands[1]->kind == ExprKind::kConst &&
           x->operands[1]->i_value == width;
  };
  if (!width || !is_v_by_width(ix[r - 1], ScalarOp::kMod) || !is_var(ix[r - 2], k) ||
      !is_v_by_width(ix[r - 3], ScalarOp::kDiv)) {
    return 0;
  }
  for (size_t i = 0; i + 3 < r; ++i) {
    if (UsesLoopVar(ix[i].get(), v) || UsesLoopVar(ix[i].get(), k)) return 0;
  }
  return *width;
}

bool SeparableLoad(const Expr* e, int a, int b) {
  if (e == nullptr || e->kind != ExprKind::kLoad) return false;
  return std::all_of(e->operands.begin(), e->operands.end(),
                     [&](const ExprPtr& ix) { return SeparableIndex(ix.get(), a, b); });
}

namespace {

// The print hooks of kernel_kinds.def: a kernel's body, after its `kernel NAME for LOOPS:`
// line, storing to `target`.
std::string PrintPointwise(const Kernel& k, const std::string& target) {
  return absl::StrCat("    ", target, " = ", ExprToString(k.value), "\n");
}

std::string PrintReduce(const Kernel& k, const std::string& target) {
  return absl::StrCat(
      "    ", target, " = ", k.combine == ScalarOp::kMax ? "max" : "sum", " over i", k.loops.size(),
      " < ", ExprToString(k.reduce_extent), " of ", ExprToString(k.value),
      k.finish_scale ? absl::StrCat(" * ", ExprToString(k.finish_scale)) : "", "\n");
}

std::string PrintArgReduce(const Kernel& k, const std::string& target) {
  return absl::StrCat("    ", target, " = ", k.combine == ScalarOp::kMin ? "argmin" : "argmax",
                      " over i", k.loops.size(), " < ", ExprToString(k.reduce_extent), " of ",
                      ExprToString(k.value), "\n");
}

std::string PrintScan(const Kernel& k, const std::string& target) {
  return absl::StrCat("    ", target, " = running sum over i", k.loops.size(), " < ",
                      ExprToString(k.reduce_extent), " of ", ExprToString(k.value), "\n");
}

const char* MatmulOrderName(MatmulOrder order) {
  switch (order) {
    case MatmulOrder::kDot:
      return "dot";
    case MatmulOrder::kAxpy:
      return "axpy";
    case MatmulOrder::kTiles:
      return "tiles";
  }
  return "?";
}

std::string PrintMatmul(const Kernel& k, const std::string& target) {
  return absl::StrCat(
      "    ", target, " = matmul(", MatmulOrderName(k.order), ") lhs ", ExprToString(k.lhs),
      " rhs ", ExprToString(k.rhs), "\n",
      k.epilogue ? absl::StrCat("      then ", target, " = ", ExprToString(k.epilogue), "\n") : "");
}

std::string PrintExternMatmul(const Kernel& k, const std::string& target) {
  return absl::StrCat("    ", target, " = extern_matmul(blas) lhs &", ExprToString(k.lhs), " rhs &",
                      ExprToString(k.rhs), k.transpose_rhs ? " transposed" : "", "\n");
}

std::string PrintAttention(const Kernel& k, const std::string& target) {
  std::vector<std::string> sum;
  for (const ExprPtr& s : k.sum_indices) sum.push_back(ExprToString(s));
  return absl::StrCat(
      "    ", target, ", b", k.sum_out, "[", absl::StrJoin(sum, ", "), "] = attention over i",
      k.loops.size() - 2, " < ", ExprToString(k.loops[k.loops.size() - 2]), " with scores b",
      k.scores, " = lhs ", ExprToString(k.lhs), " rhs ", ExprToString(k.rhs), "\n      softmax of ",
      ExprToString(k.value), "\n      times i", k.loops.size(), " < ", ExprToString(k.values_width),
      " of ", ExprToString(k.values), "\n");
}

// Indexed by KernelKind: a kind without its print hook does not compile.
using PrintFn = std::string (*)(const Kernel&, const std::string&);
constexpr PrintFn kPrintKernel[] = {
#define GJ_KERNEL_KIND(name, ...) &Print##name,
#include "compiler/lower/kernel_kinds.def"
#undef GJ_KERNEL_KIND
};

}  // namespace

std::string ProgramToString(const Program& p) {
  // Temps have no offsets before plan_workspace (lowering's steps can be printed after).
  const bool planned = std::none_of(p.buffers.begin(), p.buffers.end(), [](const Buffer& b) {
    return b.kind == BufferKind::kTemp && b.workspace_offset == nullptr;
  });
  std::string out = absl::StrCat(
      "program ", p.name, " (symbols: ", absl::StrJoin(p.symbols, ", "), "; workspace ",
      planned ? absl::StrCat(p.workspace_bytes.ToString(), " bytes") : "not planned", ")\n");
  static const char* const kKinds[] = {"input", "param", "output", "temp"};
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const Buffer& b = p.buffers[i];
    absl::StrAppend(&out, "  b", i, " ", kKinds[static_cast<int>(b.kind)], " ", b.name, " : ",
                    ir::DTypeName(b.dtype), ir::ShapeToString(b.shape));
    if (b.kind == BufferKind::kTemp) {
      absl::StrAppend(&out, " @ workspace+",
                      b.workspace_offset ? ExprToString(b.workspace_offset) : "?");
    } else {
      absl::StrAppend(&out, " = args[", b.arg_index, "]");
    }
    absl::StrAppend(&out, "\n");
  }
  for (const Kernel& k : p.kernels) {
    std::vector<std::string> loops;
    for (size_t i = 0; i < k.loops.size(); ++i) {
      loops.push_back(absl::StrCat("i", i, " < ", ExprToString(k.loops[i])));
    }
    std::vector<std::string> store;
    for (const ExprPtr& s : k.store_indices) store.push_back(ExprToString(s));
    std::string target = absl::StrCat(
        "b", k.out, store.empty() ? "" : absl::StrCat("[", absl::StrJoin(store, ", "), "]"));
    absl::StrAppend(&out, "  kernel ", k.name, k.once ? " (once)" : "", " for ",
                    absl::StrJoin(loops, ", "), ":\n");
    absl::StrAppend(&out, kPrintKernel[static_cast<int>(k.kind)](k, target));
  }
  return out;
}

void DropBuffers(const std::set<int>& dropped, Program* p) {
  if (dropped.empty()) return;
  std::vector<int> renumber(p->buffers.size(), -1);
  std::vector<Buffer> kept;
  for (int b = 0; b < static_cast<int>(p->buffers.size()); ++b) {
    if (dropped.count(b)) continue;
    renumber[b] = static_cast<int>(kept.size());
    kept.push_back(std::move(p->buffers[b]));
  }
  p->buffers = std::move(kept);
  for (Buffer& b : p->buffers) {
    if (b.alias_of >= 0) b.alias_of = renumber[b.alias_of];
  }
  absl::flat_hash_map<const Expr*, ExprPtr> memo;
  std::function<ExprPtr(const ExprPtr&)> map = [&](const ExprPtr& e) -> ExprPtr {
    if (e == nullptr) return nullptr;
    if (auto it = memo.find(e.get()); it != memo.end()) return it->second;
    ExprPtr out = e;
    if (e->kind == ExprKind::kLoad || !e->operands.empty()) {
      Expr copy = *e;
      if (e->kind == ExprKind::kLoad) copy.index = renumber[e->index];
      for (ExprPtr& o : copy.operands) o = map(o);
      out = std::make_shared<const Expr>(std::move(copy));
    }
    memo[e.get()] = out;
    return out;
  };
  for (Kernel& k : p->kernels) {
    for (ExprPtr* e : MutableKernelExprs(&k)) *e = map(*e);
    for (int* b : MutableKernelWrites(&k)) *b = renumber[*b];
  }
}

std::string RenumberedKernelName(absl::string_view name, int position) {
  size_t underscore = name.find('_');
  absl::string_view what = underscore == absl::string_view::npos ? "" : name.substr(underscore);
  return absl::StrCat("k", position, what);
}

}  // namespace graphjit::compiler
