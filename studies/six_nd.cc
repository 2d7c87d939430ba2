#include "studies/six_nd.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/analysis/flops.h"
#include "compiler/autodiff/autodiff.h"
#include "ir/status_macros.h"

namespace graphjit::studies {
namespace {

using compiler::BuildGradientGraph;
using compiler::CountFlops;
using compiler::DifferentiableSources;
using compiler::SumOutputToScalar;

// Traced graphs of exact models count to constants.
absl::StatusOr<int64_t> Exact(const ir::SymExpr& e, absl::string_view what) {
  std::optional<int64_t> c = e.AsConstant();
  if (!c) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, " is symbolic (", e.ToString(), "); fix the model's dynamic dims"));
  }
  return *c;
}

absl::StatusOr<SixNRow> RowFor(absl::string_view name, const models::Model& model, int64_t tokens) {
  GJ_ASSIGN_OR_RETURN(ModelFlops flops, CountModelFlops(model));
  SixNRow row;
  row.name = std::string(name);
  row.spec = model.Spec();
  row.tokens = tokens;
  row.num_params = flops.num_params;
  GJ_ASSIGN_OR_RETURN(int64_t forward, Exact(flops.forward, "forward FLOPs"));
  GJ_ASSIGN_OR_RETURN(int64_t train, Exact(flops.train, "training FLOPs"));
  row.forward_flops = forward;
  row.train_flops = train;
  return row;
}

// 1234567 -> "1,234,567".
std::string Thousands(int64_t v) {
  std::string digits = absl::StrCat(v < 0 ? -v : v);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string ThousandsRounded(double v) { return Thousands(std::llround(v)); }

}  // namespace

absl::StatusOr<ModelFlops> CountModelFlops(const models::Model& model,
                                           const models::TraceOptions& options) {
  GJ_ASSIGN_OR_RETURN(ir::Graph traced, models::TraceModel(model, options));
  ModelFlops out;
  for (ir::ValueId id : traced.Params()) {
    GJ_ASSIGN_OR_RETURN(int64_t n, Exact(ir::NumElements(traced.type(id).shape), "a param size"));
    out.num_params += n;
  }
  out.forward = CountFlops(traced).total;
  GJ_ASSIGN_OR_RETURN(ir::Graph loss, SumOutputToScalar(traced, 0));
  GJ_ASSIGN_OR_RETURN(ir::Graph grads, BuildGradientGraph(loss, DifferentiableSources(loss)));
  out.train = CountFlops(grads).total;
  return out;
}

double SixNRow::forward_per_token() const {
  return static_cast<double>(forward_flops) / static_cast<double>(tokens);
}
double SixNRow::train_per_token() const {
  return static_cast<double>(train_flops) / static_cast<double>(tokens);
}
double SixNRow::train_over_6n() const {
  return train_per_token() / (6.0 * static_cast<double>(num_params));
}
double SixNRow::context_over_width() const {
  return d_model == 0 ? 0.0 : static_cast<double>(block_size) / static_cast<double>(d_model);
}

absl::StatusOr<SixNRow> LinearSixNRow(absl::string_view name, const models::LinearCfg& cfg) {
  std::unique_ptr<models::Model> model = models::MakeLinearModel(cfg, ir::DType::kF32, 0);
  return RowFor(name, *model, cfg.tokens);
}

absl::StatusOr<SixNRow> TinyGPTSixNRow(absl::string_view name, const models::GPTConfig& cfg) {
  // f32: the counts do not depend on the dtype, and the largest model's weights are
  // materialized to trace it.
  std::unique_ptr<models::Model> model = models::MakeTinyGPTModel(cfg, ir::DType::kF32, 0);
  absl::StatusOr<SixNRow> row = RowFor(name, *model, cfg.batch * cfg.block_size);
  if (!row.ok()) return row;
  row->n_layer = cfg.n_layer;
  row->d_model = cfg.d_model;
  row->block_size = cfg.block_size;
  row->vocab_size = cfg.vocab_size;
  return row;
}

absl::StatusOr<std::vector<SixNRow>> SeedSixNTable() {
  std::vector<SixNRow> rows;
  GJ_ASSIGN_OR_RETURN(SixNRow linear, LinearSixNRow("linear 256->512", models::LinearCfg{}));
  rows.push_back(std::move(linear));
  struct Config {
    const char* name;
    int64_t L, d, T, V;
  };
  for (const Config& c : {Config{"narrowest", 2, 8, 32, 21}, Config{"widest small", 2, 64, 32, 21},
                          Config{"lecture-1 base", 2, 64, 96, 44}, Config{"wider", 2, 256, 32, 21},
                          Config{"wider and deeper", 8, 512, 32, 21}}) {
    models::GPTConfig cfg;
    cfg.n_layer = c.L;
    cfg.d_model = c.d;
    cfg.block_size = c.T;
    cfg.vocab_size = c.V;
    cfg.batch = 2;
    GJ_ASSIGN_OR_RETURN(SixNRow row, TinyGPTSixNRow(c.name, cfg));
    rows.push_back(std::move(row));
  }
  return rows;
}

double Gpt3Compute::flops() const { return 6.0 * num_params * tokens; }
double Gpt3Compute::pf_days() const { return flops() / pf_day; }
double Gpt3Compute::attention_flops_per_token() const {
  return 2.0 * static_cast<double>(n_layer) * static_cast<double>(n_ctx) *
         static_cast<double>(d_model);
}
double Gpt3Compute::attention_share() const {
  return attention_flops_per_token() / (2.0 * num_params);
}

std::string FormatSixNReport(const std::vector<SixNRow>& rows, const Gpt3Compute& gpt3) {
  std::string out =
      absl::StrFormat("%-18s %3s %4s %4s %4s %12s %14s %16s %9s %6s\n", "model", "L", "d", "T", "V",
                      "N", "forward/token", "train/token", "train/6N", "T/d");
  for (const SixNRow& r : rows) {
    const bool gpt = r.d_model > 0;
    auto dim = [&](int64_t v) { return gpt ? absl::StrCat(v) : std::string("-"); };
    out += absl::StrFormat("%-18s %3s %4s %4s %4s %12s %14s %16s %9.3f %6s\n", r.name,
                           dim(r.n_layer), dim(r.d_model), dim(r.block_size), dim(r.vocab_size),
                           Thousands(r.num_params), ThousandsRounded(r.forward_per_token()),
                           ThousandsRounded(r.train_per_token()), r.train_over_6n(),
                           gpt ? absl::StrFormat("%.2f", r.context_over_width()) : "-");
  }
  for (const SixNRow& r : rows) {
    if (r.d_model > 0) continue;
    out += absl::StrFormat(
        "%s on %d tokens: forward %s FLOPs = %.0f x params x tokens; forward + backward %s "
        "FLOPs = %.0f x params x tokens\n",
        r.name, r.tokens, Thousands(r.forward_flops),
        static_cast<double>(r.forward_flops) / static_cast<double>(r.num_params * r.tokens),
        Thousands(r.train_flops),
        static_cast<double>(r.train_flops) / static_cast<double>(r.num_params * r.tokens));
  }
  out += absl::StrFormat(
      "GPT-3: 6 x %.2e x %.1e = %.3e FLOPs = %s PF-days (1 PF-day = %.2e FLOPs)\n", gpt3.num_params,
      gpt3.tokens, gpt3.flops(), ThousandsRounded(gpt3.pf_days()), gpt3.pf_day);
  out +=
      absl::StrFormat("GPT-3 attention: 2 x %d x %d x %d = %.2e FLOPs/token, %.1f%% of 2N = %.2e\n",
                      gpt3.n_layer, gpt3.n_ctx, gpt3.d_model, gpt3.attention_flops_per_token(),
                      100.0 * gpt3.attention_share(), 2.0 * gpt3.num_params);
  return out;
}

}  // namespace graphjit::studies
