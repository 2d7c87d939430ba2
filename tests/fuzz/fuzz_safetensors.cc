// Fuzz target: the .safetensors reader (runtime/safetensors.h). Any bytes:
// ParseSafetensors returns tensors or an InvalidArgument; every element of the tensors it
// returns is readable, and encoding them gives bytes that parse back to the same tensors.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "runtime/safetensors.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using graphjit::fuzz::Fail;
  using graphjit::runtime::TensorMap;
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<TensorMap> map = graphjit::runtime::ParseSafetensors(bytes, "fuzz.safetensors");
  if (!map.ok()) {
    if (map.status().code() != absl::StatusCode::kInvalidArgument ||
        !absl::StartsWith(map.status().message(), "fuzz.safetensors")) {
      Fail("unexpected error: " + map.status().ToString());
    }
    return 0;
  }
  for (const auto& [name, t] : *map) {
    double sum = 0;
    for (int64_t i = 0; i < t.numel(); ++i) sum += t.ValueAt(i);
    (void)sum;
  }
  absl::StatusOr<std::string> encoded = graphjit::runtime::EncodeSafetensors(*map);
  if (!encoded.ok()) {
    // Names the encoder refuses (e.g. not UTF-8) may be accepted by the reader.
    if (encoded.status().code() != absl::StatusCode::kInvalidArgument) {
      Fail("unexpected encode error: " + encoded.status().ToString());
    }
    return 0;
  }
  absl::StatusOr<TensorMap> back = graphjit::runtime::ParseSafetensors(*encoded, "re-encoded");
  if (!back.ok()) Fail("re-encoded tensors do not parse: " + back.status().ToString());
  if (back->size() != map->size()) Fail("re-encoded tensors differ in number");
  for (const auto& [name, t] : *map) {
    auto it = back->find(name);
    if (it == back->end()) Fail("re-encoded tensors lack one");
    const graphjit::runtime::Tensor& u = it->second;
    if (u.dtype() != t.dtype() || u.shape() != t.shape() ||
        std::memcmp(u.raw_data(), t.raw_data(), static_cast<size_t>(t.nbytes())) != 0) {
      Fail("re-encoded tensor differs: " + u.TypeString() + " vs " + t.TypeString());
    }
  }
  return 0;
}
