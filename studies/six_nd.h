// The C = 6ND check (docs/spec/tinygpt_flops.md, lecture 4's demo 3): parameters N and the
// forward and training FLOPs per token of the lecture's models, counted by the FLOP
// analysis on their traced forward graphs and their gradient graphs; and the lecture's
// GPT-3 arithmetic. Data only: the study tool and tests print it with FormatSixNReport.
#ifndef GRAPHJIT_STUDIES_SIX_ND_H_
#define GRAPHJIT_STUDIES_SIX_ND_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/sym_expr.h"
#include "models/linear.h"
#include "models/model.h"
#include "models/tinygpt.h"

namespace graphjit::studies {

struct ModelFlops {
  int64_t num_params = 0;  // N: the elements of every param, each counted once
  ir::SymExpr forward;     // FLOPs of the traced forward graph
  ir::SymExpr train;       // forward + backward: FLOPs of the gradient graph
};

// Traces `model` and differentiates its first output with respect to every param and
// float input; an output that is not a scalar is summed first (as `y.sum().backward()`).
// Symbolic dims stay symbolic in the counts.
absl::StatusOr<ModelFlops> CountModelFlops(const models::Model& model,
                                           const models::TraceOptions& options = {});

struct SixNRow {
  std::string name;  // e.g. "narrowest"
  std::string spec;  // the model spec it was counted on
  // The TinyGPT shape (all 0 for the linear layer).
  int64_t n_layer = 0, d_model = 0, block_size = 0, vocab_size = 0;
  int64_t tokens = 0;                          // per step: B*T, or the linear layer's rows
  int64_t num_params = 0;                      // N
  int64_t forward_flops = 0, train_flops = 0;  // per step

  double forward_per_token() const;
  double train_per_token() const;
  double train_over_6n() const;       // train FLOPs per token / 6N
  double context_over_width() const;  // T / d (0 for the linear layer)
};

// The bias-free linear layer (its input requires grad, as in the lecture).
absl::StatusOr<SixNRow> LinearSixNRow(absl::string_view name, const models::LinearCfg& cfg);
absl::StatusOr<SixNRow> TinyGPTSixNRow(absl::string_view name, const models::GPTConfig& cfg);

// The linear layer 256 -> 512 on 64 tokens, then the lecture's five TinyGPT configurations
// (batch 2): narrowest, widest small, lecture-1 base, wider, wider and deeper.
absl::StatusOr<std::vector<SixNRow>> SeedSixNTable();

// The lecture's GPT-3 check of C = 6ND and of how little attention adds at its shape.
struct Gpt3Compute {
  double num_params = 1.75e11;
  double tokens = 3.0e11;
  int64_t n_layer = 96, n_ctx = 2048, d_model = 12288;
  double pf_day = 8.64e19;  // 1e15 FLOP/s for a day

  double flops() const;                      // 6 N D
  double pf_days() const;                    // flops / pf_day
  double attention_flops_per_token() const;  // Kaplan's 2 n_layer n_ctx d (forward)
  double attention_share() const;            // of the forward's 2N per token
};

// The table and the GPT-3 lines as text, numbers with thousands separators.
std::string FormatSixNReport(const std::vector<SixNRow>& rows, const Gpt3Compute& gpt3 = {});

}  // namespace graphjit::studies

#endif  // GRAPHJIT_STUDIES_SIX_ND_H_
