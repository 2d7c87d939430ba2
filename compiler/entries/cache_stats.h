// Counters of one compile cache (so, of one shape policy): what the study tables print.
// A Jit function's stats sum those of its caches (one per input signature).
#ifndef GRAPHJIT_COMPILER_ENTRIES_CACHE_STATS_H_
#define GRAPHJIT_COMPILER_ENTRIES_CACHE_STATS_H_

#include <cstdint>
#include <string>

#include "compiler/orc/phase_timings.h"

namespace graphjit::compiler::entries {

struct CacheStats {
  int64_t calls = 0;     // lookups that got an entry: hits + compiles + shared
  int64_t hits = 0;      // served by an entry that existed (including waits)
  int64_t waits = 0;     // hits that waited for another caller compiling the same key
  int64_t compiles = 0;  // misses that ran a real trace + compile (failed ones included)
  int64_t shared = 0;    // misses whose traced graph had live code in the code store
  int64_t failed_compiles = 0;
  int64_t rejected = 0;  // calls no entry could serve (dtype, rank, a constant dim)
  int64_t evictions = 0;
  // Tiered: calls the interpreter served, background compiles run and dropped.
  int64_t interpreted = 0;
  int64_t background_compiles = 0;
  int64_t dropped_compiles = 0;
  // Reoptimization (JitOptions::reoptimize_after): baseline entries recompiled at O2 and
  // swapped in, those whose O2 code was measured no faster and not swapped in, and the
  // seconds the background compiles took.
  int64_t reoptimized = 0;
  int64_t reoptimize_kept = 0;
  double reoptimize_seconds = 0;
  // The longest time any call spent before its code (or the interpreter) started: on an
  // untiered miss the whole compile, on a hit of an entry another call is compiling the
  // wait. A plain hit counts as 0 (its lookup takes well under a microsecond, and timing
  // it would cost as much as the lookup).
  double max_stall_seconds = 0;
  int64_t peak_entries = 0;  // most entries alive at once

  // Wall seconds of the compiles, summed: trace + passes + lowering + LLVM.
  // The kernels of those compiles: compiled, found live in the kernel store (shared with
  // another entry or graph), or loaded from the disk cache.
  int64_t kernels_compiled = 0;
  int64_t kernels_reused = 0;
  int64_t kernels_loaded = 0;

  double compile_seconds = 0;
  double trace_seconds = 0;
  PhaseTimings phases;

  // Sums over calls of each named or padded dim's real value and of the length it ran
  // at; they differ only under the padding policies.
  int64_t real_elements = 0;
  int64_t padded_elements = 0;
  // padded / real - 1: the extra KV rows read and computed (0.478 for pow2 on the 512-step
  // decode loop of the policy study).
  double padding_overhead() const {
    return real_elements == 0
               ? 0.0
               : static_cast<double>(padded_elements) / static_cast<double>(real_elements) - 1;
  }

  // Adds every counter (peak_entries too: the peaks of separate caches add up).
  CacheStats& operator+=(const CacheStats& other);

  // `calls=512 hits=508 compiles=4 ... padding=47.8%`.
  std::string ToString() const;
};

}  // namespace graphjit::compiler::entries

#endif  // GRAPHJIT_COMPILER_ENTRIES_CACHE_STATS_H_
