// The code record of the disk and remote caches: round trips, and every kind of bad bytes
// (truncated, flipped, another version, another writer or key, not a record) refused with
// the reason. Also RemoteCache's URL parsing and its fallbacks without a server.
#include "compiler/store/code_record.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "compiler/store/remote_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace graphjit::compiler {
namespace {

using ::testing::HasSubstr;

constexpr ContentKey kKey{0x0123456789abcdefull, 0xfedcba9876543210ull};
constexpr ContentKey kOtherKey{0x0123456789abcdefull, 0xfedcba9876543211ull};
const char kIdentity[] = "graphjit=test\nllvm=19\n";

const CacheSecret* Secret() {
  static const auto* secret =
      new std::shared_ptr<const CacheSecret>(*CacheSecret::FromBytes("code record test secret"));
  return secret->get();
}

TEST(CodeRecord, RoundTripsBinaryPayloads) {
  for (const std::string& payload :
       {std::string(), std::string("obj\0ect\xff", 8), std::string(100000, '\x7f')}) {
    const std::string record = EncodeCodeRecord(kIdentity, kKey, payload, Secret());
    absl::StatusOr<std::string> got = DecodeCodeRecord(kIdentity, kKey, record, Secret());
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, payload);
  }
}

TEST(CodeRecord, RefusesEveryTruncation) {
  const std::string record = EncodeCodeRecord(kIdentity, kKey, "payload bytes", Secret());
  for (size_t n = 0; n < record.size(); ++n) {
    absl::StatusOr<std::string> got =
        DecodeCodeRecord(kIdentity, kKey, record.substr(0, n), Secret());
    EXPECT_FALSE(got.ok()) << n;
  }
  EXPECT_FALSE(DecodeCodeRecord(kIdentity, kKey, record + "x", Secret()).ok());
}

TEST(CodeRecord, RefusesEveryFlippedByte) {
  const std::string record = EncodeCodeRecord(kIdentity, kKey, "payload bytes", Secret());
  for (size_t i = 0; i < record.size(); ++i) {
    std::string bad = record;
    bad[i] ^= 0x20;
    EXPECT_FALSE(DecodeCodeRecord(kIdentity, kKey, bad, Secret()).ok()) << i;
  }
}

TEST(CodeRecord, SaysWhy) {
  const std::string record = EncodeCodeRecord(kIdentity, kKey, "payload", Secret());
  EXPECT_THAT(DecodeCodeRecord(kIdentity, kKey, "short", Secret()).status().message(),
              HasSubstr("truncated"));
  EXPECT_THAT(DecodeCodeRecord(kIdentity, kKey, std::string(64, 'x'), Secret()).status().message(),
              HasSubstr("bad magic"));
  std::string flipped = record;
  flipped[flipped.size() - CacheSecret::kTagBytes - 12] ^= 1;  // in the payload
  EXPECT_THAT(DecodeCodeRecord(kIdentity, kKey, flipped, Secret()).status().message(),
              HasSubstr("checksum"));
  std::string version = record;
  version[8] = 7;
  EXPECT_EQ(DecodeCodeRecord(kIdentity, kKey, version, Secret()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Intact, but another writer's or another key's: foreign.
  absl::StatusOr<std::string> foreign =
      DecodeCodeRecord("graphjit=test\nllvm=18\n", kKey, record, Secret());
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(foreign.status().message(), HasSubstr("header differs"));
  EXPECT_EQ(DecodeCodeRecord(kIdentity, kOtherKey, record, Secret()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

// One payload byte changed and the checksum recomputed: intact to the checksum, refused
// on the tag. Signed with another secret, or unsigned: refused the same way by a reader
// with a secret; a reader without one (explicitly unsigned) checks no tag.
TEST(CodeRecord, TheTagRefusesTamperedForeignAndUnsignedRecords) {
  const std::string record = EncodeCodeRecord(kIdentity, kKey, "payload bytes", Secret());
  const size_t summed = record.size() - CacheSecret::kTagBytes - 8;
  std::string tampered = record;
  tampered[summed - 3] ^= 0x01;
  const uint64_t sum = XXH3_64bits(tampered.data(), summed);
  std::memcpy(tampered.data() + summed, &sum, 8);
  absl::StatusOr<std::string> got = DecodeCodeRecord(kIdentity, kKey, tampered, Secret());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(got.status().message(), HasSubstr("signature mismatch"));

  auto other = *CacheSecret::FromBytes("another fleet's secret");
  const std::string foreign = EncodeCodeRecord(kIdentity, kKey, "payload bytes", other.get());
  EXPECT_EQ(DecodeCodeRecord(kIdentity, kKey, foreign, Secret()).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(*DecodeCodeRecord(kIdentity, kKey, foreign, other.get()), "payload bytes");

  const std::string unsigned_record = EncodeCodeRecord(kIdentity, kKey, "payload bytes", nullptr);
  EXPECT_EQ(DecodeCodeRecord(kIdentity, kKey, unsigned_record, Secret()).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(*DecodeCodeRecord(kIdentity, kKey, unsigned_record, nullptr), "payload bytes");
  // A signed record under another key's name: the tag is genuine, the header is not ours.
  EXPECT_EQ(DecodeCodeRecord(kIdentity, kOtherKey, record, Secret()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(RemoteCacheUrl, Parses) {
  absl::StatusOr<RemoteCacheOptions> o = ParseRemoteCacheUrl("redis://cache.local:7000/3");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->host, "cache.local");
  EXPECT_EQ(o->port, 7000);
  EXPECT_EQ(o->db, 3);
  o = ParseRemoteCacheUrl("redis://127.0.0.1");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->port, 6379);
  EXPECT_EQ(o->db, 0);
  EXPECT_EQ(o->user, "");
  EXPECT_EQ(o->password, "");
  o = ParseRemoteCacheUrl("redis://alice:s3cret@cache.local:7000/2");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->user, "alice");
  EXPECT_EQ(o->password, "s3cret");
  EXPECT_EQ(o->host, "cache.local");
  EXPECT_EQ(o->db, 2);
  o = ParseRemoteCacheUrl("redis://:only-password@h:1");
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->user, "");
  EXPECT_EQ(o->password, "only-password");
  for (const char* bad : {"127.0.0.1:6379", "redis://", "redis://h:0", "redis://h:x",
                          "redis://h:6379/-1", "http://h:1", "redis://u:p@"}) {
    EXPECT_FALSE(ParseRemoteCacheUrl(bad).ok()) << bad;
  }
  // TLS: named as unsupported, and the password never printed.
  absl::StatusOr<RemoteCacheOptions> tls = ParseRemoteCacheUrl("rediss://u:hunter22@h:6380");
  EXPECT_EQ(tls.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(tls.status().message(), HasSubstr("TLS (rediss://) is not supported"));
  EXPECT_THAT(tls.status().message(), ::testing::Not(HasSubstr("hunter22")));
  EXPECT_EQ(RemoteCache::ForUrl("off"), nullptr);
  EXPECT_EQ(RemoteCache::ForUrl("not a url"), nullptr);
  RemoteCacheOptions signed_base;
  signed_base.secret = *CacheSecret::FromBytes("code record test secret");
  EXPECT_NE(RemoteCache::ForUrl("redis://127.0.0.1:1", signed_base), nullptr);
  EXPECT_EQ(RemoteCache::ForUrl("redis://127.0.0.1:1"), RemoteCache::ForUrl("redis://127.0.0.1:1"));
}

// No secret: the remote tier is refused, saying how to set one, unless unsigned code is
// explicitly allowed.
TEST(RemoteCacheUrl, NoSecretNoRemoteCache) {
  ::testing::internal::CaptureStderr();
  RemoteCache* cache = RemoteCache::ForUrl("redis://u:hunter22@127.0.0.1:3");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(cache, nullptr);
  if (RemoteCache::Available()) {
    EXPECT_THAT(err, HasSubstr("GRAPHJIT_CACHE_SECRET_FILE"));
    EXPECT_THAT(err, HasSubstr("GRAPHJIT_REMOTE_CACHE_TRUST=unsigned"));
    EXPECT_THAT(err, ::testing::Not(HasSubstr("hunter22")));
    RemoteCacheOptions unsigned_base;
    unsigned_base.allow_unsigned = true;
    EXPECT_NE(RemoteCache::ForUrl("redis://127.0.0.1:4", unsigned_base), nullptr);
  }
}

// A build without Redis opens no remote cache for a well-formed URL and says why; a
// build with it opens one (connecting lazily, so an unreachable server is no error).
TEST(RemoteCacheUrl, ABuildWithoutRedisSaysSo) {
  RemoteCacheOptions base;
  base.secret = *CacheSecret::FromBytes("code record test secret");
  ::testing::internal::CaptureStderr();
  RemoteCache* cache = RemoteCache::ForUrl("redis://127.0.0.1:2", base);
  const std::string err = ::testing::internal::GetCapturedStderr();
  if (RemoteCache::Available()) {
    EXPECT_NE(cache, nullptr);
    EXPECT_EQ(err, "");
  } else {
    EXPECT_EQ(cache, nullptr);
    EXPECT_THAT(err, ::testing::HasSubstr("needs the Redis code store, which this build"));
    EXPECT_THAT(err, ::testing::HasSubstr("GRAPHJIT_WITH_REDIS=OFF"));
  }
}

// Nothing listens on port 1: every claim is a quick fallback, then the server is not
// tried again until the retry pause is over.
TEST(RemoteCache, UnreachableServerFallsBackQuickly) {
  RemoteCacheOptions o = *ParseRemoteCacheUrl("redis://127.0.0.1:1");
  o.identity = kIdentity;
  o.secret = *CacheSecret::FromBytes("code record test secret");
  RemoteCache cache(o);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) {
    RemoteCache::Claim claim = cache.Acquire(kKey);
    EXPECT_EQ(claim.kind, RemoteCache::Claim::kUnlocked);
    cache.Publish(kKey, "payload", claim);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(cache.stats().fallbacks, 3);
  EXPECT_EQ(cache.stats().hits, 0);
  EXPECT_EQ(cache.stats().stores, 0);
  // Keys name the identity: another JIT's values live elsewhere.
  RemoteCacheOptions other = o;
  other.identity = "graphjit=other\n";
  EXPECT_NE(RemoteCache(other).RedisKey(kKey), cache.RedisKey(kKey));
  EXPECT_THAT(cache.RedisKey(kKey), HasSubstr("0123456789abcdeffedcba9876543210"));
}

// Against a real redis-server (skipped without one; tests/tools/remote_cache_test.sh
// requires it): round trip and lock, then the server restarted under a pooled
// connection - the next command fails over (no SIGPIPE kills the process) and the one
// after reconnects.
namespace redis_server {

int FreePort() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

// `password` non-empty: the server requires it (requirepass).
pid_t Start(int port, const std::string& password = "") {
  const std::string p = std::to_string(port);
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    if (password.empty()) {
      ::execlp("redis-server", "redis-server", "--port", p.c_str(), "--bind", "127.0.0.1", "--save",
               "", "--appendonly", "no", static_cast<char*>(nullptr));
    } else {
      ::execlp("redis-server", "redis-server", "--port", p.c_str(), "--bind", "127.0.0.1", "--save",
               "", "--appendonly", "no", "--requirepass", password.c_str(),
               static_cast<char*>(nullptr));
    }
    ::_exit(127);
  }
  return pid;
}

// Claims `key` until the server answers (it may still be starting).
RemoteCache::Claim FirstClaim(RemoteCache& cache, const ContentKey& key) {
  RemoteCache::Claim claim;
  for (int i = 0; i < 100; ++i) {
    claim = cache.Acquire(key);
    if (claim.kind != RemoteCache::Claim::kUnlocked) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return claim;
}

void Stop(pid_t pid) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

}  // namespace redis_server

TEST(RemoteCache, AgainstRedisServerSurvivesARestart) {
  if (!RemoteCache::Available()) {
    GTEST_SKIP() << "graphjit built without the Redis code store (GRAPHJIT_WITH_REDIS=OFF or "
                    "no libhiredis-dev)";
  }
  if (std::system("command -v redis-server > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no redis-server (scripts/bootstrap.sh installs it)";
  }
  const int port = redis_server::FreePort();
  pid_t pid = redis_server::Start(port);
  RemoteCacheOptions o = *ParseRemoteCacheUrl("redis://127.0.0.1:" + std::to_string(port));
  o.identity = kIdentity;
  o.retry_ms = 0;
  o.secret = *CacheSecret::FromBytes("code record test secret");
  RemoteCache cache(o);
  RemoteCache::Claim claim = redis_server::FirstClaim(cache, kKey);
  ASSERT_EQ(claim.kind, RemoteCache::Claim::kLocked);
  cache.Publish(kKey, "payload", claim);
  RemoteCache::Claim hit = cache.Acquire(kKey);
  EXPECT_EQ(hit.kind, RemoteCache::Claim::kHit);
  EXPECT_EQ(hit.payload, "payload");
  // Another writer's value under our key's name: refused, then replaced.
  RemoteCacheOptions other = o;
  other.identity = "graphjit=other\n";
  EXPECT_EQ(RemoteCache(other).Acquire(kKey).kind, RemoteCache::Claim::kLocked);

  redis_server::Stop(pid);
  pid = redis_server::Start(port);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The pooled connection is dead: a fallback, not a crash.
  EXPECT_EQ(cache.Acquire(kKey).kind, RemoteCache::Claim::kUnlocked);
  // Reconnected: the restarted server is empty.
  RemoteCache::Claim again = cache.Acquire(kKey);
  EXPECT_EQ(again.kind, RemoteCache::Claim::kLocked);
  cache.Release(kKey, again);
  redis_server::Stop(pid);
}

// A server with requirepass: no password and a wrong one are refused at once (logged
// with the server's reason, compiled locally); the right one works. Then values a
// signed reader must never load: tampered with (checksum recomputed), signed with another
// secret, unsigned; each is rejected, compiled locally and replaced.
TEST(RemoteCache, AgainstRedisServerWithAPasswordAndSignedValues) {
  if (!RemoteCache::Available()) GTEST_SKIP() << "graphjit built without the Redis code store";
  if (std::system("command -v redis-server > /dev/null 2>&1 && "
                  "command -v redis-cli > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no redis-server (scripts/bootstrap.sh installs it)";
  }
  const int port = redis_server::FreePort();
  const std::string password = "correct horse battery";
  pid_t pid = redis_server::Start(port, password);
  const std::string url = "redis://127.0.0.1:" + std::to_string(port);
  RemoteCacheOptions o = *ParseRemoteCacheUrl(url);
  o.identity = kIdentity;
  o.retry_ms = 0;
  o.log.cache = true;
  o.secret = *CacheSecret::FromBytes("code record test secret");
  {
    RemoteCache::Claim claim;
    ::testing::internal::CaptureStderr();
    for (int i = 0; i < 50; ++i) {  // until the server is up: NOAUTH, not "cannot connect"
      claim = RemoteCache(o).Acquire(kKey);
      if (::testing::internal::GetCapturedStderr().find("NOAUTH") != std::string::npos) break;
      ::testing::internal::CaptureStderr();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(claim.kind, RemoteCache::Claim::kUnlocked);
  }
  RemoteCacheOptions wrong =
      *ParseRemoteCacheUrl("redis://:not-it@127.0.0.1:" + std::to_string(port), o);
  ::testing::internal::CaptureStderr();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(RemoteCache(wrong).Acquire(kKey).kind, RemoteCache::Claim::kUnlocked);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, HasSubstr("AUTH"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("not-it")));

  o.password = password;
  RemoteCache cache(o);
  RemoteCache::Claim claim = redis_server::FirstClaim(cache, kKey);
  ASSERT_EQ(claim.kind, RemoteCache::Claim::kLocked);
  cache.Publish(kKey, "the real code", claim);
  EXPECT_EQ(cache.Acquire(kKey).payload, "the real code");

  // The stored value, tampered with: one payload byte, checksum recomputed.
  std::string record = EncodeCodeRecord(kIdentity, kKey, "the real code", Secret());
  const size_t summed = record.size() - CacheSecret::kTagBytes - 8;
  record[summed - 2] ^= 0x01;
  const uint64_t sum = XXH3_64bits(record.data(), summed);
  std::memcpy(record.data() + summed, &sum, 8);
  auto other = *CacheSecret::FromBytes("another fleet's secret");
  const std::vector<std::string> bad = {
      record, EncodeCodeRecord(kIdentity, kKey, "foreign code", other.get()),
      EncodeCodeRecord(kIdentity, kKey, "unsigned code", nullptr)};
  const std::string file = ::testing::TempDir() + "/gj_remote_value";
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(i);
    {
      std::ofstream(file, std::ios::binary | std::ios::trunc) << bad[i];
    }
    const std::string set = "redis-cli -p " + std::to_string(port) + " -a '" + password +
                            "' --no-auth-warning -x SET " + cache.RedisKey(kKey) + " < " + file +
                            " > /dev/null";
    ASSERT_EQ(std::system(set.c_str()), 0);
    ::testing::internal::CaptureStderr();
    RemoteCache::Claim again = cache.Acquire(kKey);
    const std::string log = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(again.kind, RemoteCache::Claim::kLocked);  // refused: compile it here
    EXPECT_THAT(log, HasSubstr("signature mismatch"));
    EXPECT_THAT(log, HasSubstr(kKey.ToHex()));
    cache.Publish(kKey, "the real code", again);
    EXPECT_EQ(cache.Acquire(kKey).payload, "the real code");  // replaced
  }
  EXPECT_EQ(cache.stats().rejected, 3);
  redis_server::Stop(pid);
}

}  // namespace
}  // namespace graphjit::compiler
