#include "compiler/lower/program_eval.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "runtime/scalar_semantics.h"

namespace graphjit::compiler {
namespace {

// Every scalar is carried as a double or an int64 (i64 and bool).
struct Scalar {
  double f = 0;
  int64_t i = 0;
};

// i64 arithmetic, division and float -> i64 casts as the eager kernels do them.
using runtime::FloorDivI64;
using runtime::FloorModI64;
using runtime::WrapAdd;
using runtime::WrapMul;
using runtime::WrapSub;

Scalar FromInt(int64_t v) { return {static_cast<double>(v), v}; }
Scalar FromBool(bool c) { return {double(c), c}; }

// One element of `from` (as carried in a Scalar) as the C++ type T.
template <typename T>
T ElementOf(Scalar x, ir::DType from) {
  switch (from) {
    case ir::DType::kF32:
      return runtime::ConvertElement<T>(static_cast<float>(x.f));
    case ir::DType::kF64:
      return runtime::ConvertElement<T>(x.f);
    case ir::DType::kI64:
      return runtime::ConvertElement<T>(x.i);
    case ir::DType::kBool:
      return runtime::ConvertElement<T>(x.i != 0);
    case ir::DType::kI32:
      return runtime::ConvertElement<T>(static_cast<int32_t>(x.i));
  }
  return T{};
}

// `cast` with the eager kernel's element conversion (runtime/scalar_semantics.h): i64 to
// f32 rounds once, not through double.
Scalar CastScalar(Scalar x, ir::DType from, ir::DType to) {
  switch (to) {
    case ir::DType::kF32:
      return {ElementOf<float>(x, from), 0};
    case ir::DType::kF64:
      return {ElementOf<double>(x, from), 0};
    case ir::DType::kI64:
      return FromInt(ElementOf<int64_t>(x, from));
    case ir::DType::kBool:
      return FromBool(ElementOf<bool>(x, from));
    case ir::DType::kI32:
      return FromInt(ElementOf<int32_t>(x, from));
  }
  return {};
}

// The comparisons, the same for every value type; nullopt: not a comparison.
template <typename T>
std::optional<Scalar> Compare(ScalarOp op, T x, T y) {
  switch (op) {
    case ScalarOp::kEq:
      return FromBool(x == y);
    case ScalarOp::kNe:
      return FromBool(x != y);
    case ScalarOp::kLt:
      return FromBool(x < y);
    case ScalarOp::kLe:
      return FromBool(x <= y);
    case ScalarOp::kGt:
      return FromBool(x > y);
    case ScalarOp::kGe:
      return FromBool(x >= y);
    default:
      return std::nullopt;
  }
}

// A float op computed in T (float for f32), calling the same libm functions as the eager
// kernels and compiled code, so results agree exactly, not within a rounding. nullopt:
// not a float op.
template <typename T>
std::optional<Scalar> FloatOp(ScalarOp op, double a, double b) {
  const T x = static_cast<T>(a), y = static_cast<T>(b);
  auto f = [](T v) { return Scalar{static_cast<double>(v), 0}; };
  if (std::optional<Scalar> c = Compare(op, x, y)) return c;
  switch (op) {
    case ScalarOp::kNeg:
      return f(-x);
    case ScalarOp::kAbs:
      return f(std::abs(x));
    case ScalarOp::kSqrt:
      return f(std::sqrt(x));
    case ScalarOp::kRsqrt:
      return f(T{1} / std::sqrt(x));
    case ScalarOp::kSigmoid:
      return f(T{1} / (T{1} + std::exp(-x)));
#define GJ_FLOAT_MATH(name, spelling, cost, function, ...) \
  case ScalarOp::k##name:                                  \
    return f(function(x));
#include "runtime/float_math.def"
#undef GJ_FLOAT_MATH
    case ScalarOp::kAdd:
      return f(x + y);
    case ScalarOp::kSub:
      return f(x - y);
    case ScalarOp::kMul:
      return f(x * y);
    case ScalarOp::kDiv:
      return f(x / y);
    case ScalarOp::kPow:
      return f(std::pow(x, y));
    case ScalarOp::kMax:
      return f(runtime::MaxOf(x, y));
    case ScalarOp::kMin:
      return f(runtime::MinOf(x, y));
    default:
      return std::nullopt;
  }
}

// i64 (wrapping, floor division with x // 0 = 0) and bool ops; nullopt: not one.
std::optional<Scalar> IntOp(ScalarOp op, int64_t x, int64_t y) {
  if (std::optional<Scalar> c = Compare(op, x, y)) return c;
  switch (op) {
    case ScalarOp::kNeg:
      return FromInt(runtime::WrapNeg(x));
    case ScalarOp::kAbs:
      return FromInt(runtime::WrapAbs(x));
    case ScalarOp::kNot:
      return FromBool(!x);
    case ScalarOp::kAdd:
      return FromInt(WrapAdd(x, y));
    case ScalarOp::kSub:
      return FromInt(WrapSub(x, y));
    case ScalarOp::kMul:
      return FromInt(WrapMul(x, y));
    case ScalarOp::kDiv:
      return FromInt(FloorDivI64(x, y));
    case ScalarOp::kMod:
      return FromInt(FloorModI64(x, y));
    case ScalarOp::kMax:
      return FromInt(std::max(x, y));
    case ScalarOp::kMin:
      return FromInt(std::min(x, y));
    case ScalarOp::kAnd:
      return FromBool(x && y);
    case ScalarOp::kOr:
      return FromBool(x || y);
    default:
      return std::nullopt;
  }
}

class Evaluator {
 public:
  Evaluator(const Program& p, void** args, const int64_t* symbols, char* workspace)
      : p_(p), args_(args), symbols_(symbols), workspace_(workspace) {}

  absl::Status Run() {
    for (const Kernel& k : p_.kernels) {
      kernel_ = &k;
      vars_.assign(k.loops.size() + 3, 0);
      std::vector<int64_t> extents;
      for (const ExprPtr& e : k.loops) extents.push_back(Eval(e).i);
      if (!status_.ok()) return status_;
      // Indexed by KernelKind: a kind of kernel_kinds.def without its Run hook does not
      // compile.
      using RunFn = void (Evaluator::*)(const Kernel&, const std::vector<int64_t>&);
      static constexpr RunFn kRunKernel[] = {
#define GJ_KERNEL_KIND(name, ...) &Evaluator::Run##name,
#include "compiler/lower/kernel_kinds.def"
#undef GJ_KERNEL_KIND
      };
      if (static_cast<int>(k.kind) >= kNumKernelKinds) {
        Fail(absl::StrCat("unknown kernel kind ", static_cast<int>(k.kind)));
        return status_;
      }
      (this->*kRunKernel[static_cast<int>(k.kind)])(k, extents);
      if (!status_.ok()) return status_;
    }
    return absl::OkStatus();
  }

 private:
  // body() at every index of the loops (bound in vars_, last fastest), until an error.
  void Nest(const std::vector<int64_t>& extents, size_t depth, absl::FunctionRef<void()> body) {
    if (!status_.ok()) return;
    if (depth < extents.size()) {
      for (int64_t i = 0; i < extents[depth]; ++i) {
        vars_[depth] = i;
        Nest(extents, depth + 1, body);
      }
      return;
    }
    body();
  }

  // Stores v at the kernel's store indices, or at its kind's default ones.
  void StoreResult(const Kernel& k, Scalar v) {
    std::vector<int64_t> idx;
    if (k.store_indices.empty()) {
      idx.assign(vars_.begin(), vars_.begin() + DefaultStoreRank(k));
    } else {
      for (const ExprPtr& e : k.store_indices) idx.push_back(Eval(e).i);
    }
    Store(k.out, idx, v);
  }

  void RunPointwise(const Kernel& k, const std::vector<int64_t>& extents) {
    Nest(extents, 0, [&] { StoreResult(k, Eval(k.value)); });
  }

  void RunReduce(const Kernel& k, const std::vector<int64_t>& extents) {
    Nest(extents, 0, [&] { StoreResult(k, Reduce(k, extents.size())); });
  }

  void RunArgReduce(const Kernel& k, const std::vector<int64_t>& extents) {
    Nest(extents, 0, [&] { StoreResult(k, ArgReduce(k, extents.size())); });
  }

  void RunScan(const Kernel& k, const std::vector<int64_t>& extents) {
    Nest(extents, 0, [&] { Scan(k, extents.size()); });  // stores as it goes
  }

  // combine (kAdd or kMax) of value over r (loop variable `var`), times finish_scale.
  Scalar Reduce(const Kernel& k, size_t var) {
    ir::DType dt = p_.buffers[k.out].dtype;
    bool fl = ir::IsFloat(dt);
    bool max = k.combine == ScalarOp::kMax;
    Scalar v;
    v.f = max ? -INFINITY : 0.0;
    v.i = max ? INT64_MIN : 0;
    int64_t n = Eval(k.reduce_extent).i;
    for (int64_t r = 0; r < n; ++r) {
      vars_[var] = r;
      Scalar x = Eval(k.value);
      if (fl) {
        v.f = max ? runtime::MaxOf(v.f, x.f) : v.f + x.f;
      } else {
        v.i = max ? runtime::MaxOf(v.i, x.i) : WrapAdd(v.i, x.i);
      }
    }
    if (k.finish_scale) v.f *= Eval(k.finish_scale).f;
    return v;
  }

  // The r of the first extremum of value over r (the scan variable is loop variable
  // `var`): strictly better replaces, so does the first NaN.
  Scalar ArgReduce(const Kernel& k, size_t var) {
    const bool min = k.combine == ScalarOp::kMin;
    const bool fl = ir::IsFloat(k.value->dtype);
    double best_f = min ? INFINITY : -INFINITY;
    int64_t best_i = min ? INT64_MAX : INT64_MIN, index = 0;
    int64_t n = Eval(k.reduce_extent).i;
    for (int64_t r = 0; r < n && status_.ok(); ++r) {
      vars_[var] = r;
      Scalar x = Eval(k.value);
      bool better;
      if (fl) {
        better = std::isnan(x.f) ? !std::isnan(best_f) : min ? x.f < best_f : x.f > best_f;
      } else {
        better = min ? x.i < best_i : x.i > best_i;
      }
      if (better) {
        best_f = x.f;
        best_i = x.i;
        index = r;
      }
    }
    return {static_cast<double>(index), index};
  }

  // Running sums over r, stored at store_indices (or (i.., r)). Doubles hold f32 sums
  // exactly as the compiled scan's f64 accumulator; i64 wraps.
  void Scan(const Kernel& k, size_t var) {
    const bool fl = ir::IsFloat(p_.buffers[k.out].dtype);
    Scalar acc;
    int64_t n = Eval(k.reduce_extent).i;
    for (int64_t r = 0; r < n && status_.ok(); ++r) {
      vars_[var] = r;
      Scalar x = Eval(k.value);
      if (fl) {
        acc.f += x.f;
      } else {
        acc.i = WrapAdd(acc.i, x.i);
      }
      StoreResult(k, acc);
    }
  }

  // body() at every index of the first nb loops (bound in vars_, last fastest), until an
  // error.
  void ForEachBatch(const std::vector<int64_t>& extents, size_t nb,
                    absl::FunctionRef<void()> body) {
    int64_t total = 1;
    for (size_t d = 0; d < nb; ++d) total *= extents[d];
    for (int64_t t = 0; t < total && status_.ok(); ++t) {
      int64_t rest = t;
      for (size_t d = nb; d-- > 0;) {
        vars_[d] = rest % extents[d];
        rest /= extents[d];
      }
      body();
    }
  }

  void RunMatmul(const Kernel& k, const std::vector<int64_t>& extents) {
    size_t nb = extents.size() - 3;
    int64_t M = extents[nb], N = extents[nb + 1], K = extents[nb + 2];
    ForEachBatch(extents, nb, [&] {
      for (int64_t m = 0; m < M; ++m) {
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          vars_[nb] = m;
          vars_[nb + 1] = n;
          for (int64_t kk = 0; kk < K; ++kk) {
            vars_[nb] = m;
            vars_[nb + 1] = n;
            vars_[nb + 2] = kk;
            acc += Eval(k.lhs).f * Eval(k.rhs).f;
          }
          StoreResult(k, Scalar{acc, 0});
          // The epilogue reads the sum back from out at the store indices.
          if (k.epilogue) StoreResult(k, Eval(k.epilogue));
        }
      }
    });
  }

  // Attention as the five kernels it replaces compute it (the kernel's own order of the
  // softmax differs within rounding): per row, the scores through the scratch buffer,
  // their max, p = exp(x - max), the sum of p and p @ V, each rounded to the dtype.
  void RunAttention(const Kernel& k, const std::vector<int64_t>& extents) {
    const size_t nb = extents.size() - 3;
    const int64_t M = extents[nb], N = extents[nb + 1], D = extents[nb + 2];
    const int64_t E = Eval(k.values_width).i;
    const bool f32 = p_.buffers[k.out].dtype == ir::DType::kF32;
    auto op = [&](ScalarOp o, double x, double y = 0) {
      std::optional<Scalar> r = f32 ? FloatOp<float>(o, x, y) : FloatOp<double>(o, x, y);
      return r->f;
    };
    auto round = [&](double x) { return f32 ? static_cast<double>(static_cast<float>(x)) : x; };
    std::vector<double> p(N);
    ForEachBatch(extents, nb, [&] {
      std::vector<int64_t> row(vars_.begin(), vars_.begin() + nb);
      for (int64_t m = 0; m < M && status_.ok(); ++m) {
        vars_[nb] = m;
        for (int64_t j = 0; j < N; ++j) {
          vars_[nb + 1] = j;
          double acc = 0;
          for (int64_t d = 0; d < D; ++d) {
            vars_[nb + 2] = d;
            acc += Eval(k.lhs).f * Eval(k.rhs).f;
          }
          std::vector<int64_t> at = row;
          at.push_back(m);
          at.push_back(j);
          Store(k.scores, at, Scalar{acc, 0});
        }
        double mx = -INFINITY;
        for (int64_t j = 0; j < N; ++j) {
          vars_[nb + 1] = j;
          p[j] = Eval(k.value).f;
          mx = runtime::MaxOf(mx, p[j]);
        }
        mx = round(mx);
        double sum = 0;
        for (int64_t j = 0; j < N; ++j) {
          p[j] = round(op(ScalarOp::kExp, op(ScalarOp::kSub, p[j], mx)));
          sum += p[j];
        }
        for (int64_t e = 0; e < E; ++e) {
          vars_[nb + 3] = e;
          double acc = 0;
          for (int64_t j = 0; j < N; ++j) {
            vars_[nb + 1] = j;
            acc += p[j] * Eval(k.values).f;
          }
          std::vector<int64_t> at;
          for (const ExprPtr& i : k.store_indices) at.push_back(Eval(i).i);
          Store(k.out, at, Scalar{acc, 0});
        }
        std::vector<int64_t> at;
        for (const ExprPtr& i : k.sum_indices) at.push_back(Eval(i).i);
        Store(k.sum_out, at, Scalar{sum, 0});
      }
    });
  }

  // The matrix origins come from the batch's lhs/rhs loads; every element is then read
  // bounds-checked at the origin's batch index.
  void RunExternMatmul(const Kernel& k, const std::vector<int64_t>& extents) {
    if (extents.size() < 3 || k.lhs->kind != ExprKind::kLoad || k.rhs->kind != ExprKind::kLoad) {
      return Fail("extern matmul needs loops (batch.., M, N, K) and lhs/rhs loads");
    }
    size_t nb = extents.size() - 3;
    int64_t M = extents[nb], N = extents[nb + 1], K = extents[nb + 2];
    auto origin = [&](const ExprPtr& load) {
      std::vector<int64_t> idx;
      for (const ExprPtr& i : load->operands) idx.push_back(Eval(i).i);
      if (idx.size() < 2 || idx[idx.size() - 1] != 0 || idx[idx.size() - 2] != 0) {
        Fail("extern matmul operand must be loaded at a matrix origin (.., 0, 0)");
      }
      return idx;
    };
    ForEachBatch(extents, nb, [&] {
      std::vector<int64_t> a = origin(k.lhs), b = origin(k.rhs);
      std::vector<int64_t> c(vars_.begin(), vars_.begin() + nb);
      c.resize(nb + 2);
      if (!status_.ok()) return;
      const size_t ar = a.size(), br = b.size();
      for (int64_t m = 0; m < M && status_.ok(); ++m) {
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          vars_[nb] = m;
          vars_[nb + 1] = n;
          for (int64_t kk = 0; kk < K; ++kk) {
            a[ar - 2] = m;
            a[ar - 1] = kk;
            b[br - 2] = k.transpose_rhs ? n : kk;
            b[br - 1] = k.transpose_rhs ? kk : n;
            acc += LoadValue(k.lhs->index, a).f * LoadValue(k.rhs->index, b).f;
          }
          c[nb] = m;
          c[nb + 1] = n;
          Store(k.out, c, Scalar{acc, 0});
        }
      }
    });
  }

  char* Base(int b) {
    const Buffer& buf = p_.buffers[b];
    if (buf.kind == BufferKind::kTemp) return workspace_ + Eval(buf.workspace_offset).i;
    return static_cast<char*>(args_[buf.arg_index]);
  }

  // The flat element offset of `idx` in buffer b, or -1 (with an error) if out of range.
  int64_t Offset(int b, const std::vector<int64_t>& idx) {
    const Buffer& buf = p_.buffers[b];
    if (idx.size() != buf.dims.size()) {
      Fail(absl::StrCat("buffer b", b, " indexed with ", idx.size(), " indices, rank ",
                        buf.dims.size()));
      return -1;
    }
    int64_t flat = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t dim = Eval(buf.dims[d]).i;
      if (idx[d] < 0 || idx[d] >= dim) {
        Fail(absl::StrCat("index ", idx[d], " out of range [0, ", dim, ") in dim ", d,
                          " of buffer b", b, " (", buf.name, ")"));
        return -1;
      }
      flat = flat * dim + idx[d];
    }
    return flat;
  }

  void Store(int b, const std::vector<int64_t>& idx, Scalar v) {
    int64_t off = Offset(b, idx);
    if (off < 0) return;
    char* base = Base(b);
    switch (p_.buffers[b].dtype) {
      case ir::DType::kF32:
        reinterpret_cast<float*>(base)[off] = static_cast<float>(v.f);
        break;
      case ir::DType::kF64:
        reinterpret_cast<double*>(base)[off] = v.f;
        break;
      case ir::DType::kI64:
        reinterpret_cast<int64_t*>(base)[off] = v.i;
        break;
      case ir::DType::kBool:
        reinterpret_cast<bool*>(base)[off] = v.i != 0;
        break;
      case ir::DType::kI32:
        reinterpret_cast<int32_t*>(base)[off] = static_cast<int32_t>(v.i);
        break;
    }
  }

  Scalar LoadValue(int b, const std::vector<int64_t>& idx) {
    int64_t off = Offset(b, idx);
    if (off < 0) return {};
    const char* base = Base(b);
    switch (p_.buffers[b].dtype) {
      case ir::DType::kF32:
        return {reinterpret_cast<const float*>(base)[off], 0};
      case ir::DType::kF64:
        return {reinterpret_cast<const double*>(base)[off], 0};
      case ir::DType::kI64: {
        int64_t v = reinterpret_cast<const int64_t*>(base)[off];
        return {static_cast<double>(v), v};
      }
      case ir::DType::kBool: {
        int64_t v = reinterpret_cast<const bool*>(base)[off];
        return {static_cast<double>(v), v};
      }
      case ir::DType::kI32: {
        int64_t v = reinterpret_cast<const int32_t*>(base)[off];
        return {static_cast<double>(v), v};
      }
    }
    return {};
  }

  Scalar Eval(const ExprPtr& e) {
    if (!status_.ok()) return {};
    switch (e->kind) {
      case ExprKind::kConst:
        return {e->f_value, e->i_value};
      case ExprKind::kLoopVar:
        return {static_cast<double>(vars_[e->index]), vars_[e->index]};
      case ExprKind::kSymbol:
        return {static_cast<double>(symbols_[e->index]), symbols_[e->index]};
      case ExprKind::kLoad: {
        std::vector<int64_t> idx;
        for (const ExprPtr& i : e->operands) idx.push_back(Eval(i).i);
        return LoadValue(e->index, idx);
      }
      case ExprKind::kSelect:
        return Eval(e->operands[0]).i ? Eval(e->operands[1]) : Eval(e->operands[2]);
      case ExprKind::kCast:
        return CastScalar(Eval(e->operands[0]), e->operands[0]->dtype, e->dtype);
      case ExprKind::kOp:
        break;
    }
    Scalar a = Eval(e->operands[0]);
    Scalar b = IsUnary(e->op) ? Scalar{} : Eval(e->operands[1]);
    std::optional<Scalar> r;
    switch (e->operands[0]->dtype) {
      case ir::DType::kF32:
        r = FloatOp<float>(e->op, a.f, b.f);
        break;
      case ir::DType::kF64:
        r = FloatOp<double>(e->op, a.f, b.f);
        break;
      case ir::DType::kI64:
      case ir::DType::kBool:
        r = IntOp(e->op, a.i, b.i);
        break;
      case ir::DType::kI32:  // a storage type: only casts read it (ir/op.cc)
        break;
    }
    if (r.has_value()) return *r;
    Fail(absl::StrCat("operator ", ScalarOpName(e->op), " on ",
                      ir::DTypeName(e->operands[0]->dtype)));
    return {};
  }

  void Fail(std::string what) {
    if (status_.ok()) {
      status_ = absl::InternalError(absl::StrCat("kernel ", kernel_->name, ": ", what));
    }
  }

  const Program& p_;
  void** args_;
  const int64_t* symbols_;
  char* workspace_;
  const Kernel* kernel_ = nullptr;
  std::vector<int64_t> vars_;
  absl::Status status_;
};

}  // namespace

absl::Status EvaluateProgram(const Program& program, void** args, const int64_t* symbols,
                             char* workspace) {
  return Evaluator(program, args, symbols, workspace).Run();
}

}  // namespace graphjit::compiler
