// The OCR recognizer's output side without the model: the key file and CTC greedy
// decoding of hand-made score tensors.
#include "models/ocr_decode.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::models {
namespace {

using ::testing::HasSubstr;

OcrAlphabet Abc() { return *ParseOcrKeys("a\nb\nc\n", "abc.txt"); }

// Scores f32[rows, steps, 5] (blank, a, b, c, space) with the class `best[r][t]` at 1.0,
// the rest at 0.1.
runtime::Tensor Scores(const std::vector<std::vector<int>>& best) {
  const int64_t rows = best.size(), steps = best[0].size(), classes = 5;
  std::vector<double> v(rows * steps * classes, 0.1);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t t = 0; t < steps; ++t) v[(r * steps + t) * classes + best[r][t]] = 1.0;
  }
  return *runtime::Tensor::FromDoubles(ir::DType::kF32, {rows, steps, classes}, v);
}

TEST(OcrDecode, KeysAreTheBlankTheLinesAndASpace) {
  const OcrAlphabet abc = Abc();
  EXPECT_EQ(abc.classes, (std::vector<std::string>{"", "a", "b", "c", " "}));
  // No final line end, "\r\n" line ends and multi-byte characters.
  absl::StatusOr<OcrAlphabet> keys = ParseOcrKeys("\xe4\xb8\xad\r\nx", "k.txt");
  ASSERT_TRUE(keys.ok()) << keys.status();
  EXPECT_EQ(keys->classes, (std::vector<std::string>{"", "\xe4\xb8\xad", "x", " "}));
}

TEST(OcrDecode, BadKeyFilesAreRefusedNamingThem) {
  for (const char* text : {"", "\n", "a\n\nb\n"}) {
    absl::StatusOr<OcrAlphabet> keys = ParseOcrKeys(text, "keys.txt");
    ASSERT_FALSE(keys.ok()) << "accepted '" << text << "'";
    EXPECT_EQ(keys.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(keys.status().message(), HasSubstr("keys.txt: "));
  }
  EXPECT_THAT(ParseOcrKeys("a\n\nb", "k").status().message(), HasSubstr("line 2 is empty"));
  EXPECT_EQ(ReadOcrKeys("/nonexistent/keys.txt").status().code(), absl::StatusCode::kNotFound);
}

TEST(OcrDecode, MergesRepeatsAndDropsBlanks) {
  // a a _ b b _ b c _ _ : "abbc" (the blank splits the two b's); space is class 4.
  absl::StatusOr<std::vector<std::string>> texts = CtcGreedyDecode(
      Scores({{1, 1, 0, 2, 2, 0, 2, 3, 0, 0}, {0, 4, 4, 1, 0, 0, 0, 0, 4, 3}}), Abc());
  ASSERT_TRUE(texts.ok()) << texts.status();
  EXPECT_EQ(*texts, (std::vector<std::string>{"abbc", " a c"}));
}

TEST(OcrDecode, AllBlankIsEmptyAndTiesTakeTheFirstClass) {
  EXPECT_EQ(*CtcGreedyDecode(Scores({{0, 0, 0}}), Abc()), std::vector<std::string>{""});
  // Every class scores the same: the first (the blank) wins.
  runtime::Tensor flat =
      *runtime::Tensor::FromDoubles(ir::DType::kF64, {1, 2, 5}, std::vector<double>(10, 0.2));
  EXPECT_EQ(*CtcGreedyDecode(flat, Abc()), std::vector<std::string>{""});
}

TEST(OcrDecode, ScoresThatDoNotFitTheAlphabetAreRefused) {
  const OcrAlphabet abc = Abc();
  for (const runtime::Tensor& bad : {*runtime::Tensor::Zeros(ir::DType::kF32, {1, 3, 6}),
                                     *runtime::Tensor::Zeros(ir::DType::kF32, {3, 5}),
                                     *runtime::Tensor::Zeros(ir::DType::kI64, {1, 3, 5})}) {
    absl::StatusOr<std::vector<std::string>> texts = CtcGreedyDecode(bad, abc);
    ASSERT_FALSE(texts.ok()) << bad.TypeString();
    EXPECT_EQ(texts.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(texts.status().message(), HasSubstr("expected scores f32 or f64[N, T, 5]"));
    EXPECT_THAT(texts.status().message(), HasSubstr(bad.TypeString()));
  }
}

}  // namespace
}  // namespace graphjit::models
