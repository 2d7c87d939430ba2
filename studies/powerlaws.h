// Lecture 4's power-law demos (demos 1 and 2), computed by compiled graphs:
// why a power law is a straight line on log-log axes and what the irreducible term E does
// to it (Kaplan's alpha_N, the Chinchilla parametric term), and three minimal models that
// produce power laws: mean estimation, 1-nearest-neighbour regression in d dimensions and
// Zipf-distributed "knowledge pieces". Random numbers come from std::mt19937_64 on the host
// (numpy's PCG64 stream is not reproduced); every computation on them runs through
// compiler::Jit. Data only: tools/study_main.cc prints it.
#ifndef GRAPHJIT_STUDIES_POWERLAWS_H_
#define GRAPHJIT_STUDIES_POWERLAWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/analysis/fit.h"
#include "compiler/compiled/compile_env.h"
#include "frontend/value.h"

namespace graphjit::studies {

// The lecture's constants and sizes.
struct PowerLawOptions {
  // Demo 1 (a): Kaplan et al.'s alpha_N, then the lecture's two comparisons.
  std::vector<double> alphas = {0.076, 0.5, 1.0};
  // Demo 1 (b): the parametric term of the Chinchilla fit, L(N) = E + A N^-alpha.
  double chinchilla_e = 1.69, chinchilla_a = 406.4, chinchilla_alpha = 0.34;
  std::vector<double> chinchilla_n = {1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
  // Demo 2 (a): the sample mean of n draws of N(mean_true, 1), `mean_reps` times per n.
  double mean_true = 3.0;
  std::vector<int64_t> mean_n = {4, 16, 64, 256, 1024};
  int64_t mean_reps = 4000;
  uint64_t mean_seed = 0;
  // Demo 2 (b): 1-NN regression of sum_j sin(2 pi x_j) on the unit cube [0, 1)^d; the
  // generator of dimension d is seeded with d, as in the lecture.
  std::vector<int64_t> nn_dims = {1, 2, 4, 8};
  std::vector<int64_t> nn_train = {64, 256, 1024, 4096};
  int64_t nn_test = 500;
  // Demo 2 (c): p_k proportional to k^-(1 + alpha) over `zipf_pieces` pieces.
  double zipf_alpha = 0.5;
  int64_t zipf_pieces = 1000000;
  std::vector<int64_t> zipf_capacity = {10, 100, 1000, 10000};  // pieces remembered
  std::vector<double> zipf_data = {1e3, 1e4, 1e5, 1e6};         // samples seen
  // Where the compiled demos' code comes from (null: CompileEnv::FromEnvironment()).
  const compiler::CompileEnv* env = nullptr;
};

// Demo 1 (a): what a pure power law L ~ N^-alpha does per step in N.
struct LossFactors {
  double alpha = 0;
  double per_doubling = 0;        // 2^-alpha: the loss factor when N doubles
  double per_tenfold = 0;         // 10^-alpha
  double halving_multiplier = 0;  // 2^(1/alpha): the factor on N that halves the loss
};

// Demo 1 (b): one N of L(N) = E + A N^-alpha. The slopes are the local log-log slopes
// -d log(y) / d log(N) between this N and the next (NaN for the last N).
struct ChinchillaPoint {
  double n = 0;
  double loss = 0;       // L
  double reducible = 0;  // L - E
  double loss_slope = 0;
  double reducible_slope = 0;
};

// y against x with its least-squares line on log-log axes and the slope theory predicts.
struct ScalingCurve {
  std::string name;
  std::vector<double> x, y;
  compiler::LogLogFit fit;
  double theory_slope = 0;
};

struct PowerLawStudy {
  PowerLawOptions options;
  std::vector<LossFactors> factors;            // one per options.alphas
  std::vector<ChinchillaPoint> chinchilla;     // one per options.chinchilla_n
  ScalingCurve mean_estimation;                // MSE of the sample mean vs n (theory -1)
  std::vector<ScalingCurve> nearest_neighbor;  // MSE vs n, one per d (theory -2/d)
  ScalingCurve zipf_capacity;                  // tail mass after the n most frequent (-alpha)
  ScalingCurve zipf_data;                      // expected unseen mass after D samples
                                               // (-alpha / (1 + alpha))
  // Compiles of the study's Jit functions (each a real LLVM compile) and their wall time.
  int64_t compiles = 0;
  double compile_seconds = 0;
  // Wall seconds per part, compiles included, and in all.
  double demo1_seconds = 0, mean_seconds = 0, nn_seconds = 0, zipf_seconds = 0;
  double seconds = 0;
};

// Runs both demos. InvalidArgument for options that cannot work (an empty or
// non-positive size, a capacity outside [1, zipf_pieces], an alpha <= 0).
absl::StatusOr<PowerLawStudy> RunPowerLawStudy(const PowerLawOptions& options = {});

// Demo 2 (b)'s graph. Inputs "test" [T, d] and "train" [n, d] (f64). Squared distances
// |a|^2 + |b|^2 - 2 a.b (the cross term one matmul), the arg-min over the training axis,
// and the prediction: the target of the nearest training point. Outputs: that index per
// test point (i64 [T]) and the MSE of the predictions against the test targets (f64 []).
std::vector<frontend::Value> NearestNeighborFn(frontend::Context& ctx);

}  // namespace graphjit::studies

#endif  // GRAPHJIT_STUDIES_POWERLAWS_H_
