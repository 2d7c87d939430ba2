// Linked into every GoogleTest suite: unit tests count compiles, so code an earlier run
// left in the on-disk cache must not change them. The disk cache is tested with caches of
// its own, and across processes by tests/tools/disk_cache_test.sh. A caller's
// GRAPHJIT_CACHE_DIR is left alone.
#include <cstdlib>

namespace {
const int kDiskCacheOff = setenv("GRAPHJIT_CACHE_DIR", "off", /*overwrite=*/0);
}  // namespace
