// The record format of compiled code in the code caches (the disk files of
// compiler/store/disk_cache.h, the values of compiler/store/remote_cache.h):
//
//   magic (8) | format version (u32) | header length (u32) | header | payload length (u64)
//   | zeros to a multiple of kPayloadAlignment | payload | XXH3-64 of everything before it
//   (u64)
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
#include "compiler/store/content_key.h"

namespace graphjit::compiler {

inline constexpr size_t kPayloadAlignment = 64;

// Far above any kernel's object (a few KiB): a larger payload is refused / corrupt.
inline constexpr uint64_t kMaxCodePayload = uint64_t{256} << 20;

// The record of `payload` under `key`, written by a JIT of `identity`.
std::string EncodeCodeRecord(absl::string_view identity, const ContentKey& key,
                             absl::string_view payload);
// The payload of `bytes` if it is a whole, intact record of `key` by `identity`; else
// DataLoss (truncated, corrupt, not a record) or FailedPrecondition (another format
// version, or another writer: versions, CPU, key), the message saying why.
absl::StatusOr<std::string> DecodeCodeRecord(absl::string_view identity, const ContentKey& key,
                                             absl::string_view bytes);
// The same checks, returning the payload as a view into `bytes` (no copy).
absl::StatusOr<absl::string_view> CheckCodeRecord(absl::string_view identity, const ContentKey& key,
                                                  absl::string_view bytes);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_CODE_RECORD_H_
