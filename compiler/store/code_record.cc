#include "compiler/store/code_record.h"

#include <cstring>

#include "absl/strings/str_cat.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace graphjit::compiler {
namespace {

constexpr char kMagic[8] = {'G', 'J', 'C', 'O', 'D', 'E', '\0', '\1'};
// 2: the payload aligned to kPayloadAlignment. 3: the tag.
constexpr uint32_t kFormatVersion = 3;
constexpr size_t kTag = CacheSecret::kTagBytes;
// magic, version, header length, payload length, checksum, tag
constexpr size_t kFixed = sizeof(kMagic) + 4 + 4 + 8 + 8 + kTag;

void PutU32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void PutU64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), 8); }
uint64_t GetU64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
uint32_t GetU32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Zeros after the payload length, so the payload starts aligned.
size_t PaddingAfter(size_t header_len) {
  const size_t before = sizeof(kMagic) + 4 + 4 + header_len + 8;
  return (kPayloadAlignment - before % kPayloadAlignment) % kPayloadAlignment;
}

std::string Header(absl::string_view identity, const ContentKey& key) {
  return absl::StrCat(identity, "key=", key.ToHex(), "\n");
}

}  // namespace

std::string EncodeCodeRecord(absl::string_view identity, const ContentKey& key,
                             absl::string_view payload, const CacheSecret* secret) {
  const std::string header = Header(identity, key);
  std::string out(kMagic, sizeof(kMagic));
  const size_t padding = PaddingAfter(header.size());
  out.reserve(kFixed + header.size() + padding + payload.size());
  PutU32(&out, kFormatVersion);
  PutU32(&out, static_cast<uint32_t>(header.size()));
  out += header;
  PutU64(&out, payload.size());
  out.append(padding, '\0');
  out.append(payload.data(), payload.size());
  PutU64(&out, XXH3_64bits(out.data(), out.size()));
  CacheSecret::Tag tag{};
  if (secret != nullptr) tag = secret->Sign(out);
  out.append(reinterpret_cast<const char*>(tag.data()), tag.size());
  return out;
}

absl::StatusOr<std::string> DecodeCodeRecord(absl::string_view identity, const ContentKey& key,
                                             absl::string_view bytes, const CacheSecret* secret) {
  absl::StatusOr<absl::string_view> payload = CheckCodeRecord(identity, key, bytes, secret);
  if (!payload.ok()) return payload.status();
  return std::string(*payload);
}

absl::StatusOr<absl::string_view> CheckCodeRecord(absl::string_view identity, const ContentKey& key,
                                                  absl::string_view bytes,
                                                  const CacheSecret* secret) {
  if (bytes.size() < kFixed) {
    return absl::DataLossError(absl::StrCat("truncated (", bytes.size(), " bytes)"));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::DataLossError("not a graphjit code record (bad magic)");
  }
  const char* p = bytes.data() + sizeof(kMagic);
  if (uint32_t version = GetU32(p); version != kFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("format version ", version, ", expected ", kFormatVersion));
  }
  const uint32_t header_len = GetU32(p + 4);
  if (header_len > bytes.size() - kFixed) {
    return absl::DataLossError("truncated (header past the end)");
  }
  const uint64_t payload_len = GetU64(p + 8 + header_len);
  const size_t padding = PaddingAfter(header_len);
  if (payload_len > kMaxCodePayload ||
      kFixed + header_len + padding + payload_len != bytes.size()) {
    return absl::DataLossError(absl::StrCat("truncated or oversized (", bytes.size(), " bytes)"));
  }
  const size_t summed = bytes.size() - kTag - 8;
  auto intact = [&] { return XXH3_64bits(bytes.data(), summed) == GetU64(bytes.data() + summed); };
  // With a secret, a valid tag proves the bytes intact: the checksum is only computed to
  // tell a corrupt record from a forged one when the tag fails (one pass over a megabyte
  // of weights, not two).
  if (secret != nullptr &&
      !secret->Verify(bytes.substr(0, summed + 8), bytes.substr(summed + 8, kTag))) {
    if (!intact()) return absl::DataLossError("checksum mismatch (corrupt)");
    return absl::PermissionDeniedError(
        "signature mismatch: not signed with this cache's secret (tampered with, or written "
        "under another secret)");
  }
  if (secret == nullptr && !intact()) return absl::DataLossError("checksum mismatch (corrupt)");
  // Checked after the tag: a mismatch here is a foreign writer, not corruption.
  if (absl::string_view(p + 8, header_len) != Header(identity, key)) {
    return absl::FailedPreconditionError(
        "written by another graphjit, LLVM or CPU, or for another key (header differs)");
  }
  return bytes.substr(kFixed - 8 - kTag + header_len + padding, payload_len);
}

}  // namespace graphjit::compiler
