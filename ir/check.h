// Invariant checks for compiler bugs (never for bad user input, which gets a Status).
// Debian's abseil (20220623) predates absl/log, so this is the project's CHECK:
//   GJ_CHECK(id < n) << "node %" << id << " out of range";
#ifndef GRAPHJIT_IR_CHECK_H_
#define GRAPHJIT_IR_CHECK_H_

#include <sstream>

namespace graphjit::internal {

// Collects the streamed message and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    stream_ << v;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

// Lets `cond ? (void)0 : Voidify() & CheckFailure(...) << ...` type-check.
struct Voidify {
  void operator&(const CheckFailure&) {}
};

}  // namespace graphjit::internal

#define GJ_CHECK(condition)                       \
  (condition) ? (void)0                           \
              : ::graphjit::internal::Voidify() & \
                    ::graphjit::internal::CheckFailure(__FILE__, __LINE__, #condition)
#define GJ_CHECK_EQ(a, b) GJ_CHECK((a) == (b)) << (a) << " vs " << (b) << ": "
// GJ_CHECK in debug builds only, for invariants on paths measured in nanoseconds (a
// cache hit); release builds type-check the condition but never evaluate it.
#ifdef NDEBUG
#define GJ_DCHECK(condition) \
  while (false) GJ_CHECK(condition)
#else
#define GJ_DCHECK(condition) GJ_CHECK(condition)
#endif
#define GJ_FATAL() ::graphjit::internal::CheckFailure(__FILE__, __LINE__, "unreachable")

#endif  // GRAPHJIT_IR_CHECK_H_
