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
#include <string>
#include <thread>

#include "compiler/store/remote_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler {
namespace {

using ::testing::HasSubstr;

constexpr ContentKey kKey{0x0123456789abcdefull, 0xfedcba9876543210ull};
constexpr ContentKey kOtherKey{0x0123456789abcdefull, 0xfedcba9876543211ull};
const char kIdentity[] = "graphjit=test\nllvm=19\n";

TEST(CodeRecord, RoundTripsBinaryPayloads) {
  for (const std::string& payload :
       {std::string(), std::string("obj\0ect\xff", 8), std::string(100000, '\x7f')}) {
    const std::string record = EncodeCodeRecord(kIdentity, kKey, payload);
    absl::StatusOr<std::string> got = DecodeCodeRecord(kIdentity, kKey, record);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, payload);
  }
}

TEST(CodeRecord, RefusesEveryTruncation) {
  const std::string record = EncodeCodeRecord(kIdentity, kKey, "payload bytes");
  for (size_t n = 0; n < record.size(); ++n) {
    absl::StatusOr<std::string> got = DecodeCodeRecord(kIdentity, kKey, record.substr(0, n));
    EXPECT_FALSE(got.ok()) << n;
  }
  EXPECT_FALSE(DecodeCodeRecord(kIdentity, kKey, record + "x").ok());
}

TEST(CodeRecord, RefusesEveryFlippedByte) {
  const std::string record = EncodeCodeRecord(kIdentity, kKey, "payload bytes");
  for (size_t i = 0; i < record.size(); ++i) {
    std::string bad = record;
    bad[i] ^= 0x20;
    EXPECT_FALSE(DecodeCodeRecord(kIdentity, kKey, bad).ok()) << i;
  }
}

TEST(CodeRecord, SaysWhy) {
  const std::string record = EncodeCodeRecord(kIdentity, kKey, "payload");
  EXPECT_THAT(DecodeCodeRecord(kIdentity, kKey, "short").status().message(),
              HasSubstr("truncated"));
  EXPECT_THAT(DecodeCodeRecord(kIdentity, kKey, std::string(64, 'x')).status().message(),
              HasSubstr("bad magic"));
  std::string flipped = record;
  flipped[flipped.size() - 12] ^= 1;  // in the payload
  EXPECT_THAT(DecodeCodeRecord(kIdentity, kKey, flipped).status().message(), HasSubstr("checksum"));
  std::string version = record;
  version[8] = 7;
  EXPECT_EQ(DecodeCodeRecord(kIdentity, kKey, version).status().code(),
            absl::StatusCode::kFailedPrecondition);
  // Intact, but another writer's or another key's: foreign.
  absl::StatusOr<std::string> foreign = DecodeCodeRecord("graphjit=test\nllvm=18\n", kKey, record);
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(foreign.status().message(), HasSubstr("header differs"));
  EXPECT_EQ(DecodeCodeRecord(kIdentity, kOtherKey, record).status().code(),
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
  for (const char* bad : {"127.0.0.1:6379", "redis://", "redis://h:0", "redis://h:x",
                          "redis://h:6379/-1", "http://h:1"}) {
    EXPECT_FALSE(ParseRemoteCacheUrl(bad).ok()) << bad;
  }
  EXPECT_EQ(RemoteCache::ForUrl("off"), nullptr);
  EXPECT_EQ(RemoteCache::ForUrl("not a url"), nullptr);
  EXPECT_EQ(RemoteCache::ForUrl("redis://127.0.0.1:1"), RemoteCache::ForUrl("redis://127.0.0.1:1"));
}

// A build without Redis opens no remote cache for a well-formed URL and says why; a
// build with it opens one (connecting lazily, so an unreachable server is no error).
TEST(RemoteCacheUrl, ABuildWithoutRedisSaysSo) {
  ::testing::internal::CaptureStderr();
  RemoteCache* cache = RemoteCache::ForUrl("redis://127.0.0.1:2");
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

pid_t Start(int port) {
  const std::string p = std::to_string(port);
  pid_t pid = ::fork();
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    ::execlp("redis-server", "redis-server", "--port", p.c_str(), "--bind", "127.0.0.1", "--save",
             "", "--appendonly", "no", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
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
  RemoteCache cache(o);
  RemoteCache::Claim claim;
  for (int i = 0; i < 100; ++i) {  // until the server is up
    claim = cache.Acquire(kKey);
    if (claim.kind != RemoteCache::Claim::kUnlocked) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
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

}  // namespace
}  // namespace graphjit::compiler
