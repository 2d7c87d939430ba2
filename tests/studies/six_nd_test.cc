// The exact figures of docs/spec/tinygpt_flops.md (lecture 4's demo 3), computed by the FLOP
// analysis on traced forward graphs and their autodiff graphs.
#include "studies/six_nd.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::studies {
namespace {

using ::testing::HasSubstr;

TEST(SixNd, LinearLayerForwardIs2NDAndTrainingIs6ND) {
  absl::StatusOr<SixNRow> row = LinearSixNRow("linear", models::LinearCfg{256, 512, 64});
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->num_params, 131072);
  EXPECT_EQ(row->forward_flops, 16777216);
  EXPECT_EQ(row->train_flops, 50331648);
  EXPECT_EQ(row->forward_flops, 2 * row->num_params * row->tokens);
  EXPECT_EQ(row->train_flops, 6 * row->num_params * row->tokens);
}

// The spec's table, row by row: N, forward and training FLOPs per token, train / 6N.
TEST(SixNd, SeedTableMatchesTheSpec) {
  struct Want {
    const char* name;
    int64_t L, d, T, V, n, forward, train;
    const char* train_over_6n;
  };
  const Want want[] = {
      {"narrowest", 2, 8, 32, 21, 2184, 5456, 16368, "1.249"},
      {"widest small", 2, 64, 32, 21, 103488, 215680, 647040, "1.042"},
      {"lecture-1 base", 2, 64, 96, 44, 109056, 251392, 754176, "1.153"},
      {"wider", 2, 256, 32, 21, 1593600, 3222016, 9666048, "1.011"},
      {"wider and deeper", 8, 512, 32, 21, 25247232, 50877440, 152632320, "1.008"},
  };
  absl::StatusOr<std::vector<SixNRow>> rows = SeedSixNTable();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 6u);
  EXPECT_EQ((*rows)[0].train_flops, 50331648);
  for (int i = 0; i < 5; ++i) {
    const SixNRow& r = (*rows)[i + 1];
    const Want& w = want[i];
    SCOPED_TRACE(r.name);
    EXPECT_EQ(r.name, w.name);
    EXPECT_EQ(r.n_layer, w.L);
    EXPECT_EQ(r.d_model, w.d);
    EXPECT_EQ(r.block_size, w.T);
    EXPECT_EQ(r.vocab_size, w.V);
    EXPECT_EQ(r.tokens, 2 * w.T);
    EXPECT_EQ(r.num_params, w.n);
    EXPECT_EQ(r.num_params, models::GPTNumParams({w.V, w.T, w.L, w.d, 2}));
    // Exact: the per-step counts divide evenly by the token count.
    EXPECT_EQ(r.forward_flops, w.forward * r.tokens);
    EXPECT_EQ(r.train_flops, w.train * r.tokens);
    EXPECT_EQ(absl::StrFormat("%.3f", r.train_over_6n()), w.train_over_6n);
    // The closed form the spec derives: L (24 d^2 + 4 T d) + 2 d V per token, backward 2x.
    EXPECT_EQ(w.forward, w.L * (24 * w.d * w.d + 4 * w.T * w.d) + 2 * w.d * w.V);
    EXPECT_DOUBLE_EQ(r.context_over_width(), static_cast<double>(w.T) / w.d);
  }
  std::string report = FormatSixNReport(*rows);
  std::printf("%s", report.c_str());
  EXPECT_THAT(report, HasSubstr("wider and deeper"));
  EXPECT_THAT(report, HasSubstr("152,632,320"));
  EXPECT_THAT(report, HasSubstr("50,331,648"));
}

TEST(SixNd, Gpt3Arithmetic) {
  Gpt3Compute g;
  EXPECT_NEAR(g.flops(), 3.15e23, 1e9);
  EXPECT_EQ(std::llround(g.pf_days()), 3646);
  EXPECT_EQ(absl::StrFormat("%.1f%%", 100 * g.attention_share()), "1.4%");
  std::string report = FormatSixNReport({}, g);
  EXPECT_THAT(report, HasSubstr("3.150e+23 FLOPs = 3,646 PF-days"));
  EXPECT_THAT(report, HasSubstr("1.4% of 2N"));
}

}  // namespace
}  // namespace graphjit::studies
