#include "studies/powerlaws.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "compiler/jit.h"
#include "frontend/ops.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "models/random_init.h"

namespace graphjit::studies {
namespace {

using frontend::Value;
using ir::Clock;
using ir::DType;
using runtime::Tensor;
using runtime::TensorMap;

absl::StatusOr<Tensor> F64(std::vector<int64_t> shape, const std::vector<double>& values) {
  return Tensor::FromDoubles(DType::kF64, std::move(shape), values);
}

// Uniform [0, 1) in row-major order from `rng` (the lecture's rng.random).
absl::StatusOr<Tensor> Uniform(std::vector<int64_t> shape, std::mt19937_64& rng) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> v(count);
  for (double& x : v) x = uniform(rng);
  return F64(std::move(shape), v);
}

// Demo 1 (a): for each alpha, 2^-alpha, 10^-alpha and 2^(1/alpha).
std::vector<Value> LossFactorsFn(frontend::Context& ctx) {
  Value alpha = ctx.Input("alpha");
  Value two = frontend::Scalar(alpha, 2.0);
  return {Pow(two, -alpha), Pow(frontend::Scalar(alpha, 10.0), -alpha),
          Pow(two, Div(frontend::Scalar(alpha, 1.0), alpha))};
}

// Demo 1 (b): L = E + A N^-alpha, L - E, and the local log-log slopes of both between
// neighbouring N (differences of logs of the graph's own values).
compiler::TraceFn ChinchillaFn(double e, double a, double alpha) {
  return [=](frontend::Context& ctx) -> std::vector<Value> {
    Value n = ctx.Input("n");
    Value loss = Pow(n, frontend::Scalar(n, -alpha)) * a + e;
    Value reducible = loss - e;
    const ir::SymExpr k = n.shape()[0];
    auto step = [&](const Value& v) { return Slice(v, 0, 1, k) - Slice(v, 0, 0, k - 1); };
    Value log_n_step = step(Log(n));
    return {loss, reducible, -(step(Log(loss)) / log_n_step), -(step(Log(reducible)) / log_n_step)};
  };
}

// Demo 2 (a): samples [reps, n] -> the mean squared error of each row's mean.
compiler::TraceFn MeanSquaredErrorFn(double mean) {
  return [mean](frontend::Context& ctx) -> std::vector<Value> {
    Value err = ReduceMean(ctx.Input("samples"), 1) - mean;
    return {ReduceMean(err * err, 0)};
  };
}

// The lecture's smooth target: sum_j sin(2 pi x_j) per row of [rows, d].
Value Target(const Value& x) { return ReduceSum(Sin(x * (2 * std::numbers::pi)), 1); }

// Demo 2 (c): inputs alpha (f64 []), capacity (i64 [c], pieces remembered) and data
// (f64 [m], samples seen). The ranks k = 1..K are an iota, which constant folding turns
// into a constant vector at compile time; p and everything after it depend on the input
// alpha, so the 10^6-element probabilities, their running sum and the D x 10^6 terms of
// the data curve are computed by the compiled code.
compiler::TraceFn ZipfFn(int64_t pieces) {
  return [pieces](frontend::Context& ctx) -> std::vector<Value> {
    Value alpha = ctx.Input("alpha");
    Value capacity = ctx.Input("capacity");
    Value data = ctx.Input("data");
    Value k = Iota(ctx, {pieces}, 0, DType::kF64) + 1.0;
    Value w = Pow(k, -(alpha + 1.0));
    Value p = w / ReduceSum(w, 0);
    // tail[n - 1] = sum_{k > n} p_k: what a model that remembers the n most frequent
    // pieces still gets wrong.
    Value tail = frontend::Scalar(p, 1.0) - CumSum(p, 0);
    Value remembered = Gather(tail, capacity - frontend::Scalar(capacity, 1.0));
    // sum_k p_k (1 - p_k)^D = sum_k p_k exp(D log1p(-p_k)): the mass of the pieces not
    // seen once in D samples. log1p keeps (1 - p)^D accurate where p is tiny.
    Value row = Reshape(p, {1, pieces});
    Value d = Reshape(data, {data.shape()[0], 1});
    Value unseen = ReduceSum(row * Exp(d * Log1p(-row)), 1);
    return {remembered, unseen};
  };
}

absl::Status Validate(const PowerLawOptions& o) {
  auto bad = [](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("power-law study: ", what));
  };
  for (double a : o.alphas) {
    if (!(a > 0)) return bad(absl::StrCat("alpha ", a, " must be > 0"));
  }
  if (o.chinchilla_n.size() < 2) return bad("chinchilla_n needs at least two N");
  for (double n : o.chinchilla_n) {
    if (!(n > 0)) return bad(absl::StrCat("N = ", n, " must be > 0"));
  }
  if (o.mean_reps < 1) return bad("mean_reps must be >= 1");
  for (const std::vector<int64_t>* sizes : {&o.mean_n, &o.nn_dims, &o.nn_train}) {
    if (sizes->size() < (sizes == &o.nn_dims ? 1u : 2u)) return bad("too few sizes to fit");
    for (int64_t n : *sizes) {
      if (n < 1) return bad(absl::StrCat("size ", n, " must be >= 1"));
    }
  }
  if (o.nn_test < 1) return bad("nn_test must be >= 1");
  if (!(o.zipf_alpha > 0)) return bad("zipf_alpha must be > 0");
  if (o.zipf_pieces < 1) return bad("zipf_pieces must be >= 1");
  if (o.zipf_capacity.size() < 2 || o.zipf_data.size() < 2) return bad("too few Zipf points");
  for (int64_t n : o.zipf_capacity) {
    if (n < 1 || n > o.zipf_pieces) {
      return bad(absl::StrCat("capacity ", n, " is outside [1, ", o.zipf_pieces, "]"));
    }
  }
  for (double d : o.zipf_data) {
    if (!(d > 0)) return bad(absl::StrCat("D = ", d, " must be > 0"));
  }
  return absl::OkStatus();
}

// The study's Jit functions, kept so their compile counts can be summed.
class Functions {
 public:
  explicit Functions(const compiler::CompileEnv* env) : env_(env) {}
  absl::StatusOr<compiler::JitFunction*> Add(std::string name, compiler::TraceFn fn) {
    // The default policy, auto: exact shapes until a dim changes, then symbolic.
    compiler::JitOptions options;
    options.compile.env = env_;
    GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::JitFunction> f,
                        compiler::Jit(std::move(name), std::move(fn), {}, options));
    functions_.push_back(std::move(f));
    return functions_.back().get();
  }
  compiler::entries::CacheStats stats() const {
    compiler::entries::CacheStats total;
    for (const auto& f : functions_) total += f->stats();
    return total;
  }

 private:
  const compiler::CompileEnv* env_;
  std::vector<std::unique_ptr<compiler::JitFunction>> functions_;
};

absl::StatusOr<ScalingCurve> Curve(std::string name, std::vector<double> x, std::vector<double> y,
                                   double theory) {
  ScalingCurve c;
  c.name = std::move(name);
  c.x = std::move(x);
  c.y = std::move(y);
  absl::StatusOr<compiler::LogLogFit> fit = compiler::FitLogLog(c.x, c.y);
  if (!fit.ok()) {
    return absl::Status(fit.status().code(), absl::StrCat(c.name, ": ", fit.status().message()));
  }
  c.fit = *fit;
  c.theory_slope = theory;
  return c;
}

}  // namespace

std::vector<Value> NearestNeighborFn(frontend::Context& ctx) {
  Value test = ctx.Input("test");
  Value train = ctx.Input("train");
  // |a|^2 + |b|^2 - 2 a.b, as the lecture writes it: [T, 1] + [n] - 2 [T, n].
  Value d2 = ReduceSum(test * test, 1, /*keepdim=*/true) + ReduceSum(train * train, 1) -
             2.0 * Matmul(test, TransposeLast2(train));
  Value nearest = ArgMin(d2, 1);
  Value err = Gather(Target(train), nearest) - Target(test);
  return {nearest, ReduceMean(err * err, 0)};
}

absl::StatusOr<PowerLawStudy> RunPowerLawStudy(const PowerLawOptions& o) {
  GJ_RETURN_IF_ERROR(Validate(o));
  const auto start = Clock::now();
  PowerLawStudy s;
  s.options = o;
  Functions fns(o.env);

  // ---- Demo 1: exponents and the irreducible term.
  auto part = Clock::now();
  {
    GJ_ASSIGN_OR_RETURN(compiler::JitFunction * factors, fns.Add("loss_factors", LossFactorsFn));
    const int64_t count = static_cast<int64_t>(o.alphas.size());
    GJ_ASSIGN_OR_RETURN(Tensor alpha, F64({count}, o.alphas));
    absl::StatusOr<std::vector<Tensor>> out = factors->Run({{"alpha", alpha}});
    if (!out.ok()) return out.status();
    for (int64_t i = 0; i < count; ++i) {
      s.factors.push_back(
          {o.alphas[i], (*out)[0].ValueAt(i), (*out)[1].ValueAt(i), (*out)[2].ValueAt(i)});
    }

    GJ_ASSIGN_OR_RETURN(
        compiler::JitFunction * chin,
        fns.Add("chinchilla", ChinchillaFn(o.chinchilla_e, o.chinchilla_a, o.chinchilla_alpha)));
    const int64_t k = static_cast<int64_t>(o.chinchilla_n.size());
    GJ_ASSIGN_OR_RETURN(Tensor n, F64({k}, o.chinchilla_n));
    out = chin->Run({{"n", n}});
    if (!out.ok()) return out.status();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int64_t i = 0; i < k; ++i) {
      s.chinchilla.push_back({o.chinchilla_n[i], (*out)[0].ValueAt(i), (*out)[1].ValueAt(i),
                              i + 1 < k ? (*out)[2].ValueAt(i) : nan,
                              i + 1 < k ? (*out)[3].ValueAt(i) : nan});
    }
  }
  s.demo1_seconds = ir::SecondsSince(part);

  // ---- Demo 2 (a): estimating a mean, MSE = 1/n.
  part = Clock::now();
  {
    GJ_ASSIGN_OR_RETURN(compiler::JitFunction * mse,
                        fns.Add("mean_mse", MeanSquaredErrorFn(o.mean_true)));
    std::mt19937_64 rng(o.mean_seed);
    std::vector<double> x, y;
    for (int64_t n : o.mean_n) {
      Tensor samples = models::RandomNormal(DType::kF64, {o.mean_reps, n}, rng, 1.0, o.mean_true);
      GJ_ASSIGN_OR_RETURN(std::vector<Tensor> out, mse->Run({{"samples", samples}}));
      x.push_back(static_cast<double>(n));
      y.push_back(out[0].ValueAt(0));
    }
    GJ_ASSIGN_OR_RETURN(s.mean_estimation,
                        Curve("mean estimation", std::move(x), std::move(y), -1.0));
  }
  s.mean_seconds = ir::SecondsSince(part);

  // ---- Demo 2 (b): 1-nearest-neighbour regression, MSE ~ n^(-2/d).
  part = Clock::now();
  {
    GJ_ASSIGN_OR_RETURN(compiler::JitFunction * nn, fns.Add("nearest_neighbor", NearestNeighborFn));
    for (int64_t d : o.nn_dims) {
      std::mt19937_64 rng(static_cast<uint64_t>(d));
      GJ_ASSIGN_OR_RETURN(Tensor test, Uniform({o.nn_test, d}, rng));
      std::vector<double> x, y;
      for (int64_t n : o.nn_train) {
        GJ_ASSIGN_OR_RETURN(Tensor train, Uniform({n, d}, rng));
        GJ_ASSIGN_OR_RETURN(std::vector<Tensor> out, nn->Run({{"test", test}, {"train", train}}));
        x.push_back(static_cast<double>(n));
        y.push_back(out[1].ValueAt(0));
      }
      GJ_ASSIGN_OR_RETURN(ScalingCurve c, Curve(absl::StrCat("d=", d), std::move(x), std::move(y),
                                                -2.0 / static_cast<double>(d)));
      s.nearest_neighbor.push_back(std::move(c));
    }
  }
  s.nn_seconds = ir::SecondsSince(part);

  // ---- Demo 2 (c): Zipf pieces, capacity- and data-limited.
  part = Clock::now();
  {
    GJ_ASSIGN_OR_RETURN(compiler::JitFunction * zipf,
                        fns.Add("zipf_pieces", ZipfFn(o.zipf_pieces)));
    std::vector<double> capacity(o.zipf_capacity.begin(), o.zipf_capacity.end());
    absl::StatusOr<Tensor> alpha = F64({}, {o.zipf_alpha});
    absl::StatusOr<Tensor> cap =
        Tensor::FromDoubles(DType::kI64, {static_cast<int64_t>(capacity.size())}, capacity);
    absl::StatusOr<Tensor> data = F64({static_cast<int64_t>(o.zipf_data.size())}, o.zipf_data);
    for (const auto* t : {&alpha, &cap, &data}) {
      if (!t->ok()) return t->status();
    }
    GJ_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                        zipf->Run({{"alpha", *alpha}, {"capacity", *cap}, {"data", *data}}));
    const double a = o.zipf_alpha;
    absl::StatusOr<ScalingCurve> c = Curve("capacity-limited", capacity, out[0].ToDoubles(), -a);
    if (!c.ok()) return c.status();
    s.zipf_capacity = *std::move(c);
    c = Curve("data-limited", o.zipf_data, out[1].ToDoubles(), -a / (1 + a));
    if (!c.ok()) return c.status();
    s.zipf_data = *std::move(c);
  }
  s.zipf_seconds = ir::SecondsSince(part);

  const compiler::entries::CacheStats stats = fns.stats();
  s.compiles = stats.compiles;
  s.compile_seconds = stats.compile_seconds;
  s.seconds = ir::SecondsSince(start);
  return s;
}

}  // namespace graphjit::studies
