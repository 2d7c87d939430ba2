#include "compiler/store/cache_secret.h"

#include <fcntl.h>
#include <sodium.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "compiler/store/file_trust.h"

namespace graphjit::compiler {
namespace {

namespace fs = std::filesystem;

constexpr size_t kUserKeyBytes = 32;
constexpr char kKeyLabel[] = "graphjit cache record key v1";
static_assert(CacheSecret::kNonceBytes == crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
static_assert(CacheSecret::kTagBytes - CacheSecret::kNonceBytes ==
              crypto_aead_chacha20poly1305_ietf_ABYTES);

// sodium_init once per process (thread-safe, cheap after the first call).
bool SodiumReady() {
  static const bool ready = sodium_init() >= 0;
  return ready;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const CacheSecret>> CacheSecret::FromBytes(std::string bytes) {
  while (!bytes.empty() && (bytes.back() == '\n' || bytes.back() == '\r')) bytes.pop_back();
  if (bytes.size() < kMinBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a cache secret needs at least ", kMinBytes, " bytes, got ", bytes.size()));
  }
  if (!SodiumReady()) return absl::UnavailableError("libsodium cannot start (sodium_init)");
  static_assert(crypto_auth_hmacsha256_BYTES == sizeof(key_));
  std::shared_ptr<CacheSecret> secret(new CacheSecret());
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(bytes.data()),
                              bytes.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(kKeyLabel),
                                sizeof(kKeyLabel) - 1);
  crypto_auth_hmacsha256_final(&state, secret->key_.data());
  sodium_memzero(&state, sizeof(state));
  sodium_memzero(bytes.data(), bytes.size());
  return std::shared_ptr<const CacheSecret>(std::move(secret));
}

absl::StatusOr<std::shared_ptr<const CacheSecret>> CacheSecret::FromFile(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadSecretFile(path, "cache secret file");
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<std::shared_ptr<const CacheSecret>> secret = FromBytes(*std::move(bytes));
  if (!secret.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache secret file ", path, ": ", secret.status().message()));
  }
  return secret;
}

absl::StatusOr<std::shared_ptr<const CacheSecret>> CacheSecret::UserKey(const std::string& path) {
  if (::access(path.c_str(), F_OK) != 0) {
    const fs::path dir = fs::path(path).parent_path();
    if (absl::Status s = MakePrivateDirectory(dir.empty() ? "." : dir.string()); !s.ok()) {
      return absl::PermissionDeniedError(
          absl::StrCat("the cache's user key ", path, ": ", s.message()));
    }
    if (!SodiumReady()) return absl::UnavailableError("libsodium cannot start (sodium_init)");
    std::string key(kUserKeyBytes, '\0');
    randombytes_buf(key.data(), key.size());
    // Written whole under a private name, then linked into place: link(2) never replaces
    // a key another process made first, and nobody sees half a key.
    static std::atomic<uint64_t> counter{0};
    const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create the cache's user key ", tmp, ": ", std::strerror(errno)));
    }
    absl::Status written = WriteAll(fd, key) && ::fsync(fd) == 0
                               ? absl::OkStatus()
                               : absl::InternalError(std::strerror(errno));
    ::close(fd);
    sodium_memzero(key.data(), key.size());
    const bool linked = written.ok() && (::link(tmp.c_str(), path.c_str()) == 0 || errno == EEXIST);
    const int link_errno = errno;
    ::unlink(tmp.c_str());
    if (!linked) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write the cache's user key ", path, ": ",
                       written.ok() ? std::strerror(link_errno) : written.message()));
    }
  }
  return FromFile(path);
}

CacheSecret::Tag CacheSecret::Sign(absl::string_view data) const {
  Tag out{};
  randombytes_buf(out.data(), kNonceBytes);
  unsigned long long tag_len = 0;
  unsigned char none[1] = {0};  // the empty message and its (empty) ciphertext
  // An empty message whose associated data is `data`: the tag authenticates `data`.
  crypto_aead_chacha20poly1305_ietf_encrypt_detached(
      none, out.data() + kNonceBytes, &tag_len, none, 0,
      reinterpret_cast<const unsigned char*>(data.data()), data.size(), nullptr, out.data(),
      key_.data());
  return out;
}

bool CacheSecret::Verify(absl::string_view data, absl::string_view tag) const {
  if (tag.size() != kTagBytes) return false;
  const auto* t = reinterpret_cast<const unsigned char*>(tag.data());
  unsigned char none[1] = {0};
  // Compares the tag in constant time (libsodium's crypto_verify_16).
  return crypto_aead_chacha20poly1305_ietf_decrypt_detached(
             none, nullptr, none, 0, t + kNonceBytes,
             reinterpret_cast<const unsigned char*>(data.data()), data.size(), t, key_.data()) == 0;
}

CacheSecret::~CacheSecret() { sodium_memzero(key_.data(), key_.size()); }

}  // namespace graphjit::compiler
