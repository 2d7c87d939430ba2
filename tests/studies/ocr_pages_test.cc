// The OCR detector study's piece that needs no model: its page sizes (the model-backed
// runs are tests/tools/study_ocr_test.sh).
#include "studies/ocr_pages.h"

#include <set>

#include "gtest/gtest.h"

namespace graphjit::studies {
namespace {

TEST(OcrStudyPageSizes, DistinctMultiplesOf32WithinPaddleOcrsLongSide) {
  const std::vector<std::pair<int64_t, int64_t>> sizes = OcrStudyPageSizes(6);
  ASSERT_EQ(sizes.size(), 6u);
  EXPECT_EQ(sizes, OcrStudyPageSizes(6));
  EXPECT_EQ(sizes.front(), (std::pair<int64_t, int64_t>{768, 320}));
  EXPECT_EQ(sizes.back(), (std::pair<int64_t, int64_t>{320, 960}));
  std::set<std::pair<int64_t, int64_t>> distinct;
  for (auto [w, h] : sizes) {
    EXPECT_EQ(w % 32, 0);
    EXPECT_EQ(h % 32, 0);
    EXPECT_LE(std::max(w, h), 960);
    distinct.insert({w, h});
  }
  EXPECT_EQ(distinct.size(), sizes.size());
  EXPECT_EQ(OcrStudyPageSizes(1).size(), 1u);
  EXPECT_EQ(OcrStudyPageSizes(21).size(), 21u);
}

}  // namespace
}  // namespace graphjit::studies
