// CacheSecret: the key that signs the records of the code caches (compiler/store/
// code_record.h), so code is only ever loaded and run if a holder of the secret wrote it.
// A record's tag is the ChaCha20-Poly1305 AEAD tag (RFC 8439, libsodium) of an empty
// message whose associated data is the whole record - header (the writer's identity and
// the content key) and payload - under a random 96-bit nonce stored with the tag; the AEAD
// key is HMAC-SHA256(secret, a fixed label). A reader verifies the tag (in constant time)
// before it uses any of the payload. Why not HMAC-SHA256 over the record: a warm start
// reads a megabyte of records (a graph's folded weights), and Poly1305 authenticates them
// several times faster (docs/SECURITY.md), with the same standing: a standard AEAD of a
// well-kept library, not a hand-made hash. (OpenSSL's faster AVX-512 Poly1305 was
// measured and left: the decode layer's warm start came out 0.2 ms slower outside the
// check itself, and its first use costs up to 1 ms a process.)
//
// Where a process's secret comes from is decided by CompileEnv (compiler/compiled/
// compile_env.h, docs/SECURITY.md): GRAPHJIT_CACHE_SECRET_FILE for a fleet sharing a
// remote cache (the same file on every host), else a per-user key made on first use
// (UserKey) for the disk cache alone.
#ifndef GRAPHJIT_COMPILER_STORE_CACHE_SECRET_H_
#define GRAPHJIT_COMPILER_STORE_CACHE_SECRET_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphjit::compiler {

class CacheSecret {
 public:
  static constexpr size_t kNonceBytes = 12;
  // What Sign appends to a record: the nonce, then the 16-byte Poly1305 tag.
  static constexpr size_t kTagBytes = kNonceBytes + 16;
  static constexpr size_t kMinBytes = 16;  // a shorter secret is refused
  using Tag = std::array<uint8_t, kTagBytes>;

  // A secret of `bytes` (>= kMinBytes; trailing CR/LF removed, so a file written by `echo`
  // and one written without the newline give the same secret).
  static absl::StatusOr<std::shared_ptr<const CacheSecret>> FromBytes(std::string bytes);
  // The secret in `path`: a regular file of this user, mode 0600 or stricter
  // (compiler/store/file_trust.h), else PermissionDenied naming it and its mode.
  static absl::StatusOr<std::shared_ptr<const CacheSecret>> FromFile(const std::string& path);
  // The per-user key in `path`, made on first use: 32 random bytes (RAND_bytes) in a file
  // of mode 0600, its directory 0700. Concurrent first uses agree on one key (the file
  // appears whole, by link(2), or not at all).
  static absl::StatusOr<std::shared_ptr<const CacheSecret>> UserKey(const std::string& path);

  // The tag of `data` under a fresh random nonce.
  Tag Sign(absl::string_view data) const;
  // Whether `tag` (kTagBytes: nonce and tag) is a tag of `data` under this secret.
  bool Verify(absl::string_view data, absl::string_view tag) const;

  ~CacheSecret();

 private:
  CacheSecret() = default;
  std::array<uint8_t, 32> key_{};
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_CACHE_SECRET_H_
