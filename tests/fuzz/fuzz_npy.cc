// Fuzz target: the .npy reader (runtime/npy.h). Any bytes: ParseNpy returns a tensor or
// an InvalidArgument; every element of a tensor it returns is readable (no bool byte but
// 0 and 1), and encoding it gives bytes that parse back to the same tensor.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "runtime/npy.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using graphjit::fuzz::Fail;
  using graphjit::runtime::Tensor;
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Tensor> t = graphjit::runtime::ParseNpy(bytes, "fuzz.npy");
  if (!t.ok()) {
    if (t.status().code() != absl::StatusCode::kInvalidArgument ||
        !absl::StartsWith(t.status().message(), "fuzz.npy: ")) {
      Fail("unexpected error: " + t.status().ToString());
    }
    return 0;
  }
  double sum = 0;
  for (int64_t i = 0; i < t->numel(); ++i) sum += t->ValueAt(i);  // reads every element
  (void)sum;
  std::string encoded = graphjit::runtime::EncodeNpy(*t);
  absl::StatusOr<Tensor> back = graphjit::runtime::ParseNpy(encoded, "re-encoded");
  if (!back.ok()) Fail("re-encoded tensor does not parse: " + back.status().ToString());
  if (back->dtype() != t->dtype() || back->shape() != t->shape() ||
      std::memcmp(back->raw_data(), t->raw_data(), static_cast<size_t>(t->nbytes())) != 0) {
    Fail("re-encoded tensor differs: " + back->TypeString() + " vs " + t->TypeString());
  }
  return 0;
}
