// The record format of compiled code in the code caches (the disk files of
// compiler/store/disk_cache.h, the values of compiler/store/remote_cache.h):
//
//   magic (8) | format version (u32) | header length (u32) | header | payload length (u64)
//   | zeros to a multiple of kPayloadAlignment | payload | XXH3-64 of everything before it
//   (u64) | tag (28): nonce and AEAD tag of everything before it under the writer's
//   CacheSecret (compiler/store/cache_secret.h)
//
// The checksum tells corruption (DataLoss); the tag tells who wrote the record: a reader
// with a secret accepts only records whose tag its secret makes (else PermissionDenied;
// a valid tag proves the record intact, so the checksum is computed only to tell a
// corrupt record from a forged one when the tag fails),
// so a record tampered with - its checksum recomputed or not - or written under another
// secret is never decoded, however intact it looks. Without a secret (an explicitly
// unsigned remote cache, GRAPHJIT_REMOTE_CACHE_TRUST=unsigned) the tag is zeros and not
// checked.
//
// The payload starts at a multiple of kPayloadAlignment bytes into the record, so a reader
// that maps the file (DiskCache::LoadShared) can use aligned data in the payload in place.
//
// The header is the writer's identity (JitIdentity(): graphjit and LLVM versions, triple,
// CPU, features) and `key=<hex>`: a record is only ever decoded as the code of one key by
// a JIT of one identity.
#ifndef GRAPHJIT_COMPILER_STORE_CODE_RECORD_H_
#define GRAPHJIT_COMPILER_STORE_CODE_RECORD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/store/cache_secret.h"
#include "compiler/store/content_key.h"

namespace graphjit::compiler {

inline constexpr size_t kPayloadAlignment = 64;

// Far above any kernel's object (a few KiB): a larger payload is refused / corrupt.
inline constexpr uint64_t kMaxCodePayload = uint64_t{256} << 20;

// The record of `payload` under `key`, written by a JIT of `identity`, signed with
// `secret` (null: unsigned).
std::string EncodeCodeRecord(absl::string_view identity, const ContentKey& key,
                             absl::string_view payload, const CacheSecret* secret);
// The payload of `bytes` if it is a whole, intact record of `key` by `identity` signed
// with `secret` (null: the tag is not checked); else DataLoss (truncated, corrupt, not a
// record), PermissionDenied (the tag is not `secret`'s: tampered, or another secret's) or
// FailedPrecondition (another format version, or another writer: versions, CPU, key),
// the message saying why.
absl::StatusOr<std::string> DecodeCodeRecord(absl::string_view identity, const ContentKey& key,
                                             absl::string_view bytes, const CacheSecret* secret);
// The same checks, returning the payload as a view into `bytes` (no copy).
absl::StatusOr<absl::string_view> CheckCodeRecord(absl::string_view identity, const ContentKey& key,
                                                  absl::string_view bytes,
                                                  const CacheSecret* secret);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_CODE_RECORD_H_
