// The one clock for timings (compile phases, pass times, studies): std::chrono's steady
// clock and seconds as doubles. In ir/, the lowest layer, so every layer shares it.
//   const ir::Clock::time_point start = ir::Clock::now();
//   ...;
//   stats.seconds = ir::SecondsSince(start);
#ifndef GRAPHJIT_IR_CLOCK_H_
#define GRAPHJIT_IR_CLOCK_H_

#include <chrono>

namespace graphjit::ir {

using Clock = std::chrono::steady_clock;

// Wall seconds from `start` to now.
inline double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_CLOCK_H_
