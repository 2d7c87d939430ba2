// Fuzz target: the code record of the disk and remote caches (compiler/store/
// code_record.h), the bytes every cached kernel is loaded from. The first byte picks the
// input's kind, the rest is:
//   0: a record as read from a file or from Redis: decoding returns a payload only if
//      the bytes before the tag are exactly the record the writer makes of it, else
//      DataLoss / PermissionDenied / FailedPrecondition (with a secret nothing the fuzzer
//      makes passes the tag; without one, an unsigned remote cache, well-formed records do);
//   1: a payload, signed: it decodes back, and with one byte changed (where the payload
//      says) it never does;
//   2: a payload, unsigned: a reader with a secret refuses it as unsigned
//      (PermissionDenied), a reader without one decodes it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "compiler/store/code_record.h"
#include "tests/fuzz/fuzz_util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace {

using graphjit::compiler::CacheSecret;
using graphjit::compiler::ContentKey;
using graphjit::compiler::DecodeCodeRecord;
using graphjit::compiler::EncodeCodeRecord;
using graphjit::fuzz::Fail;

constexpr ContentKey kKey{0x0123456789abcdefull, 0xfedcba9876543210ull};
constexpr char kIdentity[] = "graphjit=fuzz\nllvm=19\n";

const CacheSecret& Secret() {
  static const auto* secret =
      new std::shared_ptr<const CacheSecret>(*CacheSecret::FromBytes("fuzz_code_record secret"));
  return **secret;
}

bool Refused(const absl::Status& status) {
  return status.code() == absl::StatusCode::kDataLoss ||
         status.code() == absl::StatusCode::kPermissionDenied ||
         status.code() == absl::StatusCode::kFailedPrecondition;
}

void CheckRead(absl::string_view bytes, const CacheSecret* secret) {
  absl::StatusOr<std::string> payload = DecodeCodeRecord(kIdentity, kKey, bytes, secret);
  if (!payload.ok()) {
    if (!Refused(payload.status())) Fail("unexpected error: " + payload.status().ToString());
    return;
  }
  // Accepted: everything before the tag must be what the writer makes of that payload
  // (the tag's nonce is random, so tags differ between writes).
  const std::string again = EncodeCodeRecord(kIdentity, kKey, *payload, secret);
  const size_t body = again.size() - CacheSecret::kTagBytes;
  if (again.size() != bytes.size() ||
      absl::string_view(again).substr(0, body) != bytes.substr(0, body)) {
    Fail("accepted bytes the writer would not have written");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0:
      CheckRead(rest, &Secret());
      CheckRead(rest, nullptr);
      break;
    case 1: {
      std::string record = EncodeCodeRecord(kIdentity, kKey, rest, &Secret());
      absl::StatusOr<std::string> back = DecodeCodeRecord(kIdentity, kKey, record, &Secret());
      if (!back.ok() || *back != rest) Fail("a signed record does not decode to its payload");
      const size_t at = XXH3_64bits(rest.data(), rest.size()) % record.size();
      record[at] = static_cast<char>(record[at] ^ (1 + data[0] / 3 % 255));
      absl::StatusOr<std::string> changed = DecodeCodeRecord(kIdentity, kKey, record, &Secret());
      if (changed.ok()) Fail("a record with a changed byte decoded");
      if (!Refused(changed.status())) Fail("unexpected error: " + changed.status().ToString());
      break;
    }
    default: {
      const std::string record = EncodeCodeRecord(kIdentity, kKey, rest, nullptr);
      if (DecodeCodeRecord(kIdentity, kKey, record, &Secret()).status().code() !=
          absl::StatusCode::kPermissionDenied) {
        Fail("a signed reader did not refuse an unsigned record");
      }
      absl::StatusOr<std::string> back = DecodeCodeRecord(kIdentity, kKey, record, nullptr);
      if (!back.ok() || *back != rest) Fail("an unsigned record does not decode to its payload");
      break;
    }
  }
  return 0;
}
