// graphjit-study's studies of the lectures' other questions: 3 graph breaks, 5 FLOPs,
// 6 power laws.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/analysis/flops.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/compiled/graph_store.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "studies/decode_loop.h"
#include "studies/lazy_demo.h"
#include "studies/powerlaws.h"
#include "studies/six_nd.h"
#include "tools/study_common.h"
#include "tools/study_table.h"

namespace graphjit::study {

using ir::Clock;
using runtime::Tensor;
using runtime::TensorMap;
using tools::Table;

// ---- 3. graph breaks ------------------------------------------------------------------

absl::Status StudyBreaks(const CodeSource& source, tools::JsonWriter& json) {
  std::printf("== 3. Graph breaks: iterate y <- tanh(y @ W) until the change is < 1e-12 ==\n\n");
  Progress("breaks: running ...");
  absl::StatusOr<studies::LazyDemoResult> r = studies::RunLazyDemo(200, 1e-12, &source.env);
  ProgressDone();
  if (!r.ok()) return r.status();
  std::vector<int> ops;
  int empty = 0;
  for (const compiler::GraphBreak& g : r->graphs) {
    if (g.ops == 0) {
      ++empty;
    } else if (std::find(ops.begin(), ops.end(), g.ops) == ops.end()) {
      ops.push_back(g.ops);
    }
  }
  Table t({"way", "graphs", "ops per graph", "compiles", "time", "max |diff| vs eager"});
  t.Add({"lazy, data-dependent stop", absl::StrCat(r->graphs.size()), absl::StrJoin(ops, ", "),
         absl::StrCat(r->compiles), tools::FormatSeconds(r->lazy_seconds),
         absl::StrFormat("%.1e", r->max_abs_diff)});
  t.Add({"fixed count, traced (unrolled)", "1", absl::StrCat(r->unrolled_ops),
         absl::StrCat(r->unrolled_compiles),
         tools::FormatSeconds(r->unrolled_compile_seconds + r->unrolled_run_seconds),
         absl::StrFormat("%.1e", r->unrolled_max_abs_diff)});
  t.Add({"structured while loop", "1", absl::StrCat(r->while_ops, " (cond + body inside)"),
         absl::StrCat("1 (", r->while_compiled, " pieces)"),
         tools::FormatSeconds(r->while_compile_seconds + r->while_run_seconds),
         absl::StrFormat("%.1e", r->while_max_abs_diff)});
  t.Print();
  json.Key("graph_breaks")
      .BeginObject()
      .Member("iterations", r->iterations)
      .Member("graphs", static_cast<int64_t>(r->graphs.size()))
      .Member("empty_graphs", empty)
      .Member("final_graph_empty", r->graphs.back().ops == 0)
      .Member("compiles", r->compiles)
      .Member("max_abs_diff", r->max_abs_diff)
      .Member("lazy_seconds", r->lazy_seconds)
      .Member("unrolled_ops", r->unrolled_ops)
      .Member("unrolled_compile_seconds", r->unrolled_compile_seconds)
      .Member("unrolled_run_seconds", r->unrolled_run_seconds)
      .Member("while_iterations", r->while_iterations)
      .Member("while_ops", r->while_ops)
      .Member("while_compiled_pieces", r->while_compiled)
      .Member("while_compile_seconds", r->while_compile_seconds)
      .Member("while_run_seconds", r->while_run_seconds)
      .Member("while_max_abs_diff", r->while_max_abs_diff)
      .Member("while_same_bits_as_lazy", r->while_same_bits_as_lazy)
      .Array("ops_per_graph", ops)
      .EndObject();
  Observations({
      absl::StrFormat("%d iterations became %zu graphs: %zu of %s ops, one per stopping test, "
                      "and a final empty one (y_new was already computed by the last test's "
                      "graph).",
                      r->iterations, r->graphs.size(), r->graphs.size() - empty,
                      absl::StrJoin(ops, ", "), empty),
      absl::StrFormat("Every graph has the same structure on new data, so the structural-hash "
                      "cache compiled %d time(s) for %zu graphs; fusion stops at each break and "
                      "every result round-trips through memory.",
                      r->compiles, r->graphs.size()),
      absl::StrFormat("With the count known up front the loop traces into one graph of %d ops: "
                      "one compile (%s) and one run (%s), against %s for the lazy loop.",
                      r->unrolled_ops, tools::FormatSeconds(r->unrolled_compile_seconds),
                      tools::FormatSeconds(r->unrolled_run_seconds),
                      tools::FormatSeconds(r->lazy_seconds)),
      absl::StrFormat("As a structured while (frontend::While, the lecture's lax.while_loop) "
                      "the stopping test stays in the graph: one graph, one compile (%s) of its "
                      "cond and body, and one call that ran %d trips in compiled code (%s) "
                      "with no graph break and no return to the caller; its result is %s the "
                      "lazy loop's.",
                      tools::FormatSeconds(r->while_compile_seconds), r->while_iterations,
                      tools::FormatSeconds(r->while_run_seconds),
                      r->while_same_bits_as_lazy ? "bit for bit" : "not bit for bit"),
  });
  return absl::OkStatus();
}

// ---- 5. FLOPs -------------------------------------------------------------------------

absl::Status StudyFlops(tools::JsonWriter& json) {
  std::printf(
      "== 5. Where C = 6ND comes from: FLOPs counted on forward and autodiff graphs ==\n\n");
  Progress("flops: tracing and differentiating ...");
  absl::StatusOr<std::vector<studies::SixNRow>> rows = studies::SeedSixNTable();
  ProgressDone();
  if (!rows.ok()) return rows.status();
  studies::Gpt3Compute gpt3;
  std::fputs(studies::FormatSixNReport(*rows, gpt3).c_str(), stdout);
  json.Key("flops").BeginObject().Key("rows").BeginArray();
  for (const studies::SixNRow& r : *rows) {
    json.BeginObject()
        .Member("name", r.name)
        .Member("spec", r.spec)
        .Member("params", r.num_params)
        .Member("forward_flops_per_token", r.forward_per_token())
        .Member("train_flops_per_token", r.train_per_token())
        .Member("train_over_6n", r.train_over_6n())
        .Member("context_over_width", r.context_over_width())
        .EndObject();
  }
  json.EndArray()
      .Member("gpt3_flops", gpt3.flops())
      .Member("gpt3_pf_days", gpt3.pf_days())
      .Member("gpt3_attention_share", gpt3.attention_share())
      .EndObject();
  const studies::SixNRow& lin = rows->front();
  const studies::SixNRow *narrow = nullptr, *widest = nullptr;
  for (const studies::SixNRow& r : *rows) {
    if (r.context_over_width() <= 0) continue;
    if (narrow == nullptr || r.context_over_width() > narrow->context_over_width()) narrow = &r;
    if (widest == nullptr || r.context_over_width() < widest->context_over_width()) widest = &r;
  }
  std::vector<std::string> obs = {absl::StrFormat(
      "The linear layer: forward %.0f FLOPs per parameter per token, training "
      "%.0f: backward computes two matmuls (input and weight gradients) per "
      "forward one.",
      lin.forward_per_token() / lin.num_params, lin.train_per_token() / lin.num_params)};
  if (narrow != nullptr && widest != nullptr) {
    obs.push_back(absl::StrFormat(
        "6N misses attention's QK^T and weighted sum, which grow with context x width: at T/d = "
        "%.2f (%s) training is %.3f x 6N, at T/d = %.2f (%s) only %.3f x 6N.",
        narrow->context_over_width(), narrow->name, narrow->train_over_6n(),
        widest->context_over_width(), widest->name, widest->train_over_6n()));
  }
  obs.push_back(absl::StrFormat(
      "GPT-3: 6 x %.3g x %.3g = %.3g FLOPs = %.0f PF-days; attention "
      "adds %.1f%% to its forward FLOPs.",
      gpt3.num_params, gpt3.tokens, gpt3.flops(), gpt3.pf_days(), 100 * gpt3.attention_share()));
  Observations(obs);
  return absl::OkStatus();
}

// ---- 6. power laws ----------------------------------------------------------------------

void CurveJson(tools::JsonWriter& json, const studies::ScalingCurve& c) {
  json.Member("name", c.name)
      .Array("x", c.x)
      .Array("y", c.y)
      .Member("slope", c.fit.slope)
      .Member("intercept", c.fit.intercept)
      .Member("r_squared", c.fit.r_squared)
      .Member("theory_slope", c.theory_slope);
}

// "0.9487 (-5.1%)": a loss factor and the change it means.
std::string Factor(double f) { return absl::StrFormat("%.4f (%+.1f%%)", f, 100 * (f - 1)); }

absl::Status StudyPowerLaws(const CodeSource& source, tools::JsonWriter& json) {
  std::printf("== 6. Power laws, and why they appear (lecture 4, demos 1 and 2) ==\n\n");
  Progress("powerlaws: compiling and running ...");
  studies::PowerLawOptions options;
  options.env = &source.env;
  absl::StatusOr<studies::PowerLawStudy> r = studies::RunPowerLawStudy(options);
  ProgressDone();
  if (!r.ok()) return r.status();
  const studies::PowerLawOptions& o = r->options;

  std::printf("(1a) A pure power law L = A N^-alpha is the line log L = log A - alpha log N.\n");
  Table f({"alpha", "loss factor per 2x N", "per 10x N", "N factor that halves the loss"});
  for (const studies::LossFactors& x : r->factors) {
    f.Add({absl::StrFormat("%g", x.alpha), Factor(x.per_doubling), Factor(x.per_tenfold),
           absl::StrFormat("%.3g", x.halving_multiplier)});
  }
  f.Print();
  std::printf(
      "\n(1b) With the irreducible term: L(N) = E + A N^-alpha, E = %g, A = %g, alpha = %g "
      "(Chinchilla's N term). Local slopes are -d log y / d log N to the next N.\n",
      o.chinchilla_e, o.chinchilla_a, o.chinchilla_alpha);
  Table c({"N", "L(N)", "L - E", "local slope of L", "local slope of L - E"});
  for (const studies::ChinchillaPoint& p : r->chinchilla) {
    const bool last = std::isnan(p.loss_slope);
    c.Add({absl::StrFormat("%.0e", p.n), absl::StrFormat("%.4f", p.loss),
           absl::StrFormat("%.4f", p.reducible), last ? "" : absl::StrFormat("%.4f", p.loss_slope),
           last ? "" : absl::StrFormat("%.4f", p.reducible_slope)});
  }
  c.Print();

  const studies::ScalingCurve& mean = r->mean_estimation;
  std::printf(
      "\n(2a) Estimating a mean: MSE of the mean of n samples of N(%g, 1), %lld "
      "repetitions per n.\n",
      o.mean_true, static_cast<long long>(o.mean_reps));
  Table m({"n", "MSE", "n x MSE"});
  for (size_t i = 0; i < mean.x.size(); ++i) {
    m.Add({absl::StrFormat("%g", mean.x[i]), absl::StrFormat("%.5f", mean.y[i]),
           absl::StrFormat("%.3f", mean.x[i] * mean.y[i])});
  }
  m.Print();
  std::printf("  fitted log-log slope %.3f (theory %g: MSE = sigma^2 / n)\n", mean.fit.slope,
              mean.theory_slope);

  std::printf(
      "\n(2b) 1-nearest-neighbour regression of sum_j sin(2 pi x_j) on [0, 1)^d, %lld "
      "test points: MSE by training points n.\n",
      static_cast<long long>(o.nn_test));
  std::vector<std::string> header = {"d"};
  for (int64_t n : o.nn_train) header.push_back(absl::StrCat("n=", n));
  header.push_back("fitted slope");
  header.push_back("theory -2/d");
  Table nn(header);
  for (size_t i = 0; i < r->nearest_neighbor.size(); ++i) {
    const studies::ScalingCurve& cv = r->nearest_neighbor[i];
    std::vector<std::string> row = {absl::StrCat(o.nn_dims[i])};
    for (double y : cv.y) row.push_back(absl::StrFormat("%.2e", y));
    row.push_back(absl::StrFormat("%.3f", cv.fit.slope));
    row.push_back(absl::StrFormat("%.3f", cv.theory_slope));
    nn.Add(row);
  }
  nn.Print();

  const studies::ScalingCurve& cap = r->zipf_capacity;
  const studies::ScalingCurve& data = r->zipf_data;
  std::printf("\n(2c) Zipf \"knowledge pieces\": p_k ~ k^-%g over %lld pieces.\n", 1 + o.zipf_alpha,
              static_cast<long long>(o.zipf_pieces));
  Table z({"n", "mass after the n most frequent", "D", "mass unseen in D samples"});
  for (size_t i = 0; i < std::max(cap.x.size(), data.x.size()); ++i) {
    const bool c_row = i < cap.x.size(), d_row = i < data.x.size();
    z.Add({c_row ? absl::StrFormat("%g", cap.x[i]) : "",
           c_row ? absl::StrFormat("%.4f", cap.y[i]) : "",
           d_row ? absl::StrFormat("%.0e", data.x[i]) : "",
           d_row ? absl::StrFormat("%.4f", data.y[i]) : ""});
  }
  z.Print();
  std::printf(
      "  fitted slopes: capacity-limited %.3f (theory -alpha = %.3f), data-limited %.3f "
      "(theory -alpha/(1+alpha) = %.3f)\n",
      cap.fit.slope, cap.theory_slope, data.fit.slope, data.theory_slope);
  std::printf(
      "\nRandom numbers: std::mt19937_64 on the host (seed %llu for (2a), seed d for "
      "(2b)), not the lecture's numpy default_rng (PCG64), whose stream is not reproduced "
      "bit for bit: the samples, and so the digits of (2a) and (2b), differ from the "
      "lecture's; (1) and (2c) use no random numbers. Everything computed on them ran as "
      "compiled graphs: %lld compiles (%s) in a section of %s.\n",
      static_cast<unsigned long long>(o.mean_seed), static_cast<long long>(r->compiles),
      tools::FormatSeconds(r->compile_seconds).c_str(), tools::FormatSeconds(r->seconds).c_str());

  json.Key("powerlaws").BeginObject().Key("loss_factors").BeginArray();
  for (const studies::LossFactors& x : r->factors) {
    json.BeginObject()
        .Member("alpha", x.alpha)
        .Member("per_doubling", x.per_doubling)
        .Member("per_tenfold", x.per_tenfold)
        .Member("halving_multiplier", x.halving_multiplier)
        .EndObject();
  }
  json.EndArray()
      .Key("chinchilla")
      .BeginObject()
      .Member("E", o.chinchilla_e)
      .Member("A", o.chinchilla_a)
      .Member("alpha", o.chinchilla_alpha)
      .Key("points")
      .BeginArray();
  for (const studies::ChinchillaPoint& p : r->chinchilla) {
    json.BeginObject()
        .Member("n", p.n)
        .Member("loss", p.loss)
        .Member("reducible", p.reducible)
        .Member("loss_slope", p.loss_slope)  // null for the last N
        .Member("reducible_slope", p.reducible_slope)
        .EndObject();
  }
  json.EndArray().EndObject();
  json.Key("mean_estimation").BeginObject();
  CurveJson(json, mean);
  json.EndObject().Key("nearest_neighbor").BeginArray();
  for (size_t i = 0; i < r->nearest_neighbor.size(); ++i) {
    json.BeginObject().Member("d", o.nn_dims[i]);
    CurveJson(json, r->nearest_neighbor[i]);
    json.EndObject();
  }
  json.EndArray().Key("zipf_capacity").BeginObject();
  CurveJson(json, cap);
  json.EndObject().Key("zipf_data").BeginObject();
  CurveJson(json, data);
  json.EndObject()
      .Member("rng", "std::mt19937_64 (host); not numpy's PCG64 stream")
      .Member("compiles", r->compiles)
      .Member("compile_seconds", r->compile_seconds)
      .Member("seconds", r->seconds)
      .EndObject();

  const studies::LossFactors& kaplan = r->factors.front();
  const auto& chin = r->chinchilla;
  const studies::ChinchillaPoint& first = chin.front();
  const studies::ChinchillaPoint& last = chin[chin.size() - 2];  // the last with a slope
  double min_reducible = first.reducible_slope, max_reducible = first.reducible_slope;
  bool loss_flattens = true;
  for (size_t i = 0; i + 1 < chin.size(); ++i) {
    min_reducible = std::min(min_reducible, chin[i].reducible_slope);
    max_reducible = std::max(max_reducible, chin[i].reducible_slope);
    if (i > 0) loss_flattens = loss_flattens && chin[i].loss_slope < chin[i - 1].loss_slope;
  }
  std::vector<std::string> slopes, dims;
  bool flatter_with_d = true;
  for (size_t i = 0; i < r->nearest_neighbor.size(); ++i) {
    slopes.push_back(absl::StrFormat("%.3f", r->nearest_neighbor[i].fit.slope));
    dims.push_back(absl::StrCat(o.nn_dims[i]));
    if (i > 0) {
      flatter_with_d =
          flatter_with_d && r->nearest_neighbor[i].fit.slope > r->nearest_neighbor[i - 1].fit.slope;
    }
  }
  double n_mse_lo = mean.x[0] * mean.y[0], n_mse_hi = n_mse_lo;
  for (size_t i = 0; i < mean.x.size(); ++i) {
    n_mse_lo = std::min(n_mse_lo, mean.x[i] * mean.y[i]);
    n_mse_hi = std::max(n_mse_hi, mean.x[i] * mean.y[i]);
  }
  Observations({
      absl::StrFormat("A pure power law loses the same fraction per doubling from any N: at "
                      "alpha = %g, %.1f%% per doubling and %.1f%% per 10x, so halving the loss "
                      "takes %.3g times the parameters; scale alone is an expensive lever.",
                      kaplan.alpha, 100 * (1 - kaplan.per_doubling), 100 * (1 - kaplan.per_tenfold),
                      kaplan.halving_multiplier),
      absl::StrFormat(
          "With E = %g the local slope of L %s from %.4f to %.4f between N = %.0e and "
          "%.0e, which looks like scaling failing; L - E keeps %s throughout. Plot "
          "L - E, not L.",
          o.chinchilla_e, loss_flattens ? "falls" : "moves", first.loss_slope, last.loss_slope,
          first.n, chin.back().n,
          absl::StrFormat("%.4f", min_reducible) == absl::StrFormat("%.4f", max_reducible)
              ? absl::StrFormat("%.4f", min_reducible)
              : absl::StrFormat("%.4f to %.4f", min_reducible, max_reducible)),
      absl::StrFormat("(2a) The simplest estimator is already a scaling law: slope %.3f against "
                      "%g, n x MSE between %.3f and %.3f (sigma^2 = 1).",
                      mean.fit.slope, mean.theory_slope, n_mse_lo, n_mse_hi),
      absl::StrFormat("(2b) The exponent depends on dimension: slopes %s for d = %s against -2/d; "
                      "%s. High intrinsic dimension is one explanation of the small data "
                      "exponents of neural nets.",
                      absl::StrJoin(slopes, ", "), absl::StrJoin(dims, ", "),
                      flatter_with_d ? "each higher d is flatter"
                                     : "on this run the order by d is not monotonic"),
      absl::StrFormat("(2c) One Zipf distribution sets both exponents: remembering the n most "
                      "frequent pieces leaves a tail with slope %.3f (theory %.3f), seeing D "
                      "samples leaves unseen mass with slope %.3f (theory %.3f).",
                      cap.fit.slope, cap.theory_slope, data.fit.slope, data.theory_slope),
  });
  return absl::OkStatus();
}

}  // namespace graphjit::study
