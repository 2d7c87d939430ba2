// The OCR study's pieces that need no model: its text lines and the recognizer's step
// count (the model-backed runs are tests/tools/study_ocr_test.sh).
#include "studies/ocr_lines.h"

#include "gtest/gtest.h"

namespace graphjit::studies {
namespace {

TEST(OcrStudyTexts, SpreadFromThreeToSixtyFourCharactersTheSameEveryRun) {
  const std::vector<std::string> texts = OcrStudyTexts(40);
  ASSERT_EQ(texts.size(), 40u);
  EXPECT_EQ(texts, OcrStudyTexts(40));
  EXPECT_EQ(texts.front().size(), 3u);
  EXPECT_EQ(texts.back().size(), 64u);
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_FALSE(texts[i].empty());
    // A trailing space would render as a margin the model may read as a space.
    EXPECT_NE(texts[i].back(), ' ') << i;
    // Longer down the list (a stripped trailing space may take one character back).
    if (i > 0) {
      EXPECT_GE(texts[i].size() + 1, texts[i - 1].size()) << i;
    }
  }
  EXPECT_EQ(OcrStudyTexts(1).size(), 1u);
}

TEST(OcrSteps, TwoStride2ConvolutionsRoundUpThePoolingDown) {
  // The recognizer's output lengths, as ONNX Runtime gives them (tests/models/ocr_test.cc).
  EXPECT_EQ(OcrSteps(320), 40);
  EXPECT_EQ(OcrSteps(61), 8);
  EXPECT_EQ(OcrSteps(8), 1);
  EXPECT_EQ(OcrSteps(9), 1);
  EXPECT_EQ(OcrSteps(13), 2);
}

}  // namespace
}  // namespace graphjit::studies
