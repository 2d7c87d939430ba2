#include "compiler/store/cache_secret.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <unistd.h>

#include <algorithm>
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

// OpenSSL's ChaCha20-Poly1305, fetched once per process (the provider's first fetch costs
// a few hundred microseconds; every later use is free).
const EVP_CIPHER* Aead() {
  static const EVP_CIPHER* const cipher = EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr);
  return cipher;
}

// The AEAD over `data` as associated data: Poly1305 reads it in pieces OpenSSL's int
// lengths can hold.
bool AuthenticateData(EVP_CIPHER_CTX* ctx, absl::string_view data, bool encrypt) {
  constexpr size_t kPiece = size_t{1} << 30;
  for (size_t at = 0; at < data.size(); at += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, data.size() - at));
    int out = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(data.data() + at);
    if ((encrypt ? EVP_EncryptUpdate(ctx, nullptr, &out, p, n)
                 : EVP_DecryptUpdate(ctx, nullptr, &out, p, n)) != 1) {
      return false;
    }
  }
  return true;
}

absl::Status WriteAll(int fd, absl::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::InternalError(std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<const CacheSecret>> CacheSecret::FromBytes(std::string bytes) {
  while (!bytes.empty() && (bytes.back() == '\n' || bytes.back() == '\r')) bytes.pop_back();
  if (bytes.size() < kMinBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("a cache secret needs at least ", kMinBytes, " bytes, got ", bytes.size()));
  }
  if (Aead() == nullptr) {
    return absl::UnavailableError("OpenSSL's libcrypto has no ChaCha20-Poly1305");
  }
  std::shared_ptr<CacheSecret> secret(new CacheSecret());
  unsigned int len = 0;
  const bool derived = HMAC(EVP_sha256(), bytes.data(), static_cast<int>(bytes.size()),
                            reinterpret_cast<const unsigned char*>(kKeyLabel),
                            sizeof(kKeyLabel) - 1, secret->key_.data(), &len) != nullptr &&
                       len == secret->key_.size();
  OPENSSL_cleanse(bytes.data(), bytes.size());
  if (!derived) return absl::InternalError("cannot derive the cache key (HMAC-SHA256)");
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
    std::string key(kUserKeyBytes, '\0');
    if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) !=
        1) {
      return absl::InternalError("no random bytes for the cache's user key (RAND_bytes)");
    }
    // Written whole under a private name, then linked into place: link(2) never replaces
    // a key another process made first, and nobody sees half a key.
    static std::atomic<uint64_t> counter{0};
    const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot create the cache's user key ", tmp, ": ", std::strerror(errno)));
    }
    absl::Status written = WriteAll(fd, key);
    if (written.ok() && ::fsync(fd) != 0) written = absl::InternalError(std::strerror(errno));
    ::close(fd);
    OPENSSL_cleanse(key.data(), key.size());
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

std::array<uint8_t, 16> CacheSecret::Seal(const uint8_t* nonce, absl::string_view data) const {
  std::array<uint8_t, 16> tag{};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int out = 0;
  unsigned char none[16];  // the empty message's (empty) final output
  const bool ok =
      ctx != nullptr && EVP_EncryptInit_ex2(ctx, Aead(), key_.data(), nonce, nullptr) == 1 &&
      AuthenticateData(ctx, data, /*encrypt=*/true) && EVP_EncryptFinal_ex(ctx, none, &out) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag.data()) == 1;
  EVP_CIPHER_CTX_free(ctx);
  // Only allocation failure fails here; no tag then verifies (a reader recompiles).
  if (!ok) tag.fill(0);
  return tag;
}

CacheSecret::Tag CacheSecret::Sign(absl::string_view data) const {
  Tag out{};
  if (RAND_bytes(out.data(), kNonceBytes) != 1) return out;  // zeros: verifies nowhere
  const std::array<uint8_t, 16> tag = Seal(out.data(), data);
  std::memcpy(out.data() + kNonceBytes, tag.data(), tag.size());
  return out;
}

bool CacheSecret::Verify(absl::string_view data, absl::string_view tag) const {
  if (tag.size() != kTagBytes) return false;
  // Decrypting the empty message with the expected tag: OpenSSL compares in constant time.
  std::array<uint8_t, 16> expected;
  std::memcpy(expected.data(), tag.data() + kNonceBytes, expected.size());
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int out = 0;
  unsigned char none[16];
  const bool ok =
      ctx != nullptr &&
      EVP_DecryptInit_ex2(ctx, Aead(), key_.data(),
                          reinterpret_cast<const unsigned char*>(tag.data()), nullptr) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, expected.data()) == 1 &&
      AuthenticateData(ctx, data, /*encrypt=*/false) && EVP_DecryptFinal_ex(ctx, none, &out) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

CacheSecret::~CacheSecret() { OPENSSL_cleanse(key_.data(), key_.size()); }

}  // namespace graphjit::compiler
