#!/usr/bin/env bash
# Where a compile's time goes: LLVM's steps (TargetMachine, pass set-up, IR passes,
# instruction selection, register allocation, the rest of codegen, link) for an empty
# module, one fused pointwise kernel, a tiled matvec, the attention kernel and the whole
# decode layer, at both code tiers, with the costliest passes of each module
# (`graphjit-dump --compile-steps`, medians of RUNS compiles per module, cold: nothing
# comes from a cache). Results: docs/PERFORMANCE.md, "Where a compile's time goes".
#
#   benchmarks/compile_steps.sh [RUNS]     (default 5; build/bin/graphjit-dump must exist)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
dump=build/bin/graphjit-dump
if [[ ! -x $dump ]]; then
  echo "compile_steps.sh: $dump is not built (ninja -C build graphjit-dump)" >&2
  exit 1
fi
export GRAPHJIT_CACHE_DIR=off
for tier in o2 baseline; do
  for program in benchmarks/pointwise_chain.gir benchmarks/matvec_128x344.gir \
    benchmarks/attention_s512.gir decode; do
    echo "## $program, tier $tier"
    "$dump" "$program" --compile-steps --compile-steps-runs="$runs" --tier="$tier"
  done
done
