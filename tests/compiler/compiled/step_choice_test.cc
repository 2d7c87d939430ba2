// StepChoice (compiler/compiled/step_choice.h): rounds of alternating timed calls, the
// faster path by median, buckets by the log2 of the step's work, and a new round every
// kRetrialCalls calls. Times here are given, not measured.
#include "compiler/compiled/step_choice.h"

#include "gtest/gtest.h"

namespace graphjit::compiler {
namespace {

using Path = StepChoice::Path;

// Plays one round in `work`'s bucket: each timed call takes `serial` or `pool` seconds.
void Round(StepChoice& choice, int64_t work, double serial, double pool) {
  for (uint32_t i = 0; i < 2 * StepChoice::kTrialsEach; ++i) {
    StepChoice::Ticket t = choice.Next(work);
    ASSERT_TRUE(t.timed) << i;
    EXPECT_EQ(t.path, i % 2 == 0 ? Path::kSerial : Path::kPool) << i;
    choice.Record(t, t.path == Path::kSerial ? serial : pool);
  }
}

TEST(StepChoice, AlternatesThenServesTheFasterPath) {
  StepChoice choice;
  EXPECT_EQ(choice.Chosen(1000), Path::kPool);  // before any measurement
  Round(choice, 1000, 8e-6, 11e-6);
  EXPECT_EQ(choice.Chosen(1000), Path::kSerial);
  for (int i = 0; i < 50; ++i) {
    StepChoice::Ticket t = choice.Next(1000);
    EXPECT_FALSE(t.timed);
    EXPECT_EQ(t.path, Path::kSerial);
  }
}

TEST(StepChoice, MediansIgnoreAnOutlierAndBucketsAreApart) {
  StepChoice choice;
  // The pool is faster but for one call held up by another tenant.
  for (uint32_t i = 0; i < 2 * StepChoice::kTrialsEach; ++i) {
    StepChoice::Ticket t = choice.Next(1 << 20);
    const double seconds = t.path == Path::kSerial ? 20e-6 : (i == 1 ? 500e-6 : 12e-6);
    choice.Record(t, seconds);
  }
  EXPECT_EQ(choice.Chosen(1 << 20), Path::kPool);
  // Another power of two of work is measured on its own ...
  Round(choice, 1 << 10, 3e-6, 5e-6);
  EXPECT_EQ(choice.Chosen(1 << 10), Path::kSerial);
  EXPECT_EQ(choice.Chosen((1 << 10) + 100), Path::kSerial);  // same bucket
  EXPECT_EQ(choice.Chosen(1 << 20), Path::kPool);
}

TEST(StepChoice, MeasuresAgainEveryRetrialPeriod) {
  StepChoice choice;
  Round(choice, 4096, 8e-6, 11e-6);
  ASSERT_EQ(choice.Chosen(4096), Path::kSerial);
  for (uint32_t i = 2 * StepChoice::kTrialsEach; i < StepChoice::kRetrialCalls; ++i) {
    ASSERT_FALSE(choice.Next(4096).timed) << i;
  }
  // The cores came closer: the next round picks the pool.
  Round(choice, 4096, 8e-6, 5e-6);
  EXPECT_EQ(choice.Chosen(4096), Path::kPool);
}

}  // namespace
}  // namespace graphjit::compiler
