// Linked into every GoogleTest suite: unit tests count compiles, so code an earlier run
// left in the on-disk cache must not change them. The disk cache is tested with caches of
// its own, and across processes by tests/tools/disk_cache_test.sh. A caller's
// GRAPHJIT_CACHE_DIR is left alone.
#include <cstdlib>

namespace {
const int kDiskCacheOff = setenv("GRAPHJIT_CACHE_DIR", "off", /*overwrite=*/0);
// Nor code a shared Redis holds (GRAPHJIT_REMOTE_CACHE exported for services): always off
// here; tests/tools/remote_cache_test.sh tests it.
const int kRemoteCacheOff = setenv("GRAPHJIT_REMOTE_CACHE", "off", /*overwrite=*/1);
}  // namespace
