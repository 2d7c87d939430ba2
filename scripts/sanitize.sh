#!/usr/bin/env bash
# Builds graphjit with a sanitizer in its own build dir and runs the tests under it:
#   scripts/sanitize.sh address   ASan + UBSan (-fno-sanitize-recover=undefined: any
#                                 undefined behaviour fails the test) in build-asan/,
#                                 the whole suite
#   scripts/sanitize.sh thread    TSan in build-tsan/: the entries, Jit, stores, ORC engine,
#                                 lazy, concurrency and thread pool tests
# Extra arguments go to ctest (address) or to the test binaries (thread), e.g.
# `scripts/sanitize.sh address -R fuzz` or `scripts/sanitize.sh thread --gtest_filter=*Concurrency*`.
# GRAPHJIT_JOBS sets the build and test parallelism (default 2). Builds run under nice.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
shift || true
jobs=${GRAPHJIT_JOBS:-2}

case "$mode" in
  address)
    dir=build-asan
    flags=(-DGRAPHJIT_ASAN=ON)
    ;;
  thread)
    dir=build-tsan
    flags=(-DGRAPHJIT_TSAN=ON)
    ;;
  *)
    echo "usage: scripts/sanitize.sh address|thread [ctest or test arguments...]" >&2
    exit 2
    ;;
esac

# The Debian packages as for the main build (bootstrap installs the missing ones only).
GRAPHJIT_BOOTSTRAP_PACKAGES_ONLY=1 ./scripts/bootstrap.sh
# -O1, as the sanitizers' documentation recommends: it keeps stack traces exact, and it
# compiles faster than the Release build's -O3. Without NDEBUG, so the debug-only
# invariant checks (GJ_DCHECK, on the cache's hit path) run here too. Configured on every
# run (cheap), so an existing build dir picks up a change of these flags.
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGRAPHJIT_BUILD_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1" "${flags[@]}" >/dev/null

if [[ $mode == address ]]; then
  nice -n 19 cmake --build "$dir" -j"$jobs"
  # Leaks are checked at exit; the suppressions are for libraries built without ASan.
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
  export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # package.* links a separate project against the installed (instrumented) libraries;
  # the package's graphjit::graphjit target brings the sanitizer runtime with it.
  exec ctest --test-dir "$dir" --output-on-failure -j"$jobs" "$@"
fi

tsan_tests=(entries_test store_test orc_test compiled_test lazy_test runtime_test)
nice -n 19 cmake --build "$dir" -j"$jobs" --target "${tsan_tests[@]}"
export TSAN_OPTIONS="suppressions=$PWD/tests/compiler/entries/tsan.supp:halt_on_error=1:second_deadlock_stack=1"
status=0
for t in "${tsan_tests[@]}"; do
  echo "== $t (ThreadSanitizer)"
  "$dir/bin/$t" "$@" || status=1
done
exit $status
