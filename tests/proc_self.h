// What /proc/self says about this process's memory, for the tests that check that
// compiled code is freed (tests/compiler/jit, tests/compiler/cache).
#ifndef GRAPHJIT_TESTS_PROC_SELF_H_
#define GRAPHJIT_TESTS_PROC_SELF_H_

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace graphjit::proc_self {

// Whether this build runs under AddressSanitizer (gcc defines __SANITIZE_ADDRESS__,
// clang answers __has_feature). ASan keeps freed memory in a quarantine and never returns
// its size-class regions, so resident memory measures ASan there, not the code under test.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// Resident set size, from /proc/self/statm.
inline int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0, resident_pages = 0;
  statm >> size_pages >> resident_pages;
  return resident_pages * sysconf(_SC_PAGESIZE);
}

// Anonymous executable mappings of /proc/self/maps: where the JIT puts machine code (one
// per live module). Not every mapping: the sanitizers' allocators map data regions of
// their own as the process runs (ASan's size-class regions and shadow), which would make
// a count of all mappings grow under ASan with no JIT memory leaked.
inline int CodeMappings() {
  std::ifstream maps("/proc/self/maps");
  int count = 0;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode >> path;
    if (perms.size() >= 3 && perms[2] == 'x' && path.empty()) ++count;
  }
  return count;
}

}  // namespace graphjit::proc_self

#endif  // GRAPHJIT_TESTS_PROC_SELF_H_
