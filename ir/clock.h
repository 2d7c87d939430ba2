// The one clock for timings (compile phases, pass times, studies): std::chrono's steady
// clock and seconds as doubles, and the median that timing tables quote. In ir/, the
// lowest layer, so every layer shares it.
//   const ir::Clock::time_point start = ir::Clock::now();
//   ...;
//   stats.seconds = ir::SecondsSince(start);
#ifndef GRAPHJIT_IR_CLOCK_H_
#define GRAPHJIT_IR_CLOCK_H_

#include <algorithm>
#include <chrono>
#include <vector>

namespace graphjit::ir {

using Clock = std::chrono::steady_clock;

// Wall seconds from `start` to now.
inline double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The median of `samples` (the upper one of an even count); 0 if there are none.
inline double Median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  return samples[samples.size() / 2];
}

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_CLOCK_H_
