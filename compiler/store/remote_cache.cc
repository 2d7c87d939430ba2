#include "compiler/store/remote_cache.h"

#if GRAPHJIT_HAVE_REDIS
#include <hiredis/hiredis.h>
#endif
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "compiler/store/code_record.h"
#include "compiler/store/disk_cache.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace graphjit::compiler {
namespace {

#if GRAPHJIT_HAVE_REDIS
constexpr bool kHaveRedis = true;
#else
constexpr bool kHaveRedis = false;
#endif

using Clock = std::chrono::steady_clock;

timeval Millis(int ms) {
  timeval tv;
  tv.tv_sec = ms / 1000;
  tv.tv_usec = (ms % 1000) * 1000;
  return tv;
}

}  // namespace

namespace {

// `url` with its password replaced by `***`, for messages.
std::string Redacted(absl::string_view url) {
  const size_t scheme = url.find("://");
  const size_t at = url.rfind('@');
  if (scheme == absl::string_view::npos || at == absl::string_view::npos || at < scheme) {
    return std::string(url);
  }
  const size_t colon = url.find(':', scheme + 3);
  if (colon == absl::string_view::npos || colon > at) return std::string(url);
  return absl::StrCat(url.substr(0, colon + 1), "***", url.substr(at));
}

// A server's error reply, with what to do about the authentication ones.
[[maybe_unused]] std::string Explained(absl::string_view error) {
  if (absl::StartsWith(error, "NOAUTH")) {
    return absl::StrCat(error, " (the server wants a password: redis://[USER]:PASSWORD@HOST:PORT ",
                        "or GRAPHJIT_REMOTE_CACHE_PASSWORD_FILE)");
  }
  if (absl::StartsWith(error, "WRONGPASS") || absl::StartsWith(error, "ERR invalid password")) {
    return absl::StrCat(error, " (check the user and password the cache was given)");
  }
  return std::string(error);
}

}  // namespace

absl::StatusOr<RemoteCacheOptions> ParseRemoteCacheUrl(absl::string_view url,
                                                       RemoteCacheOptions o) {
  const std::string shown = Redacted(url);
  absl::string_view rest = url;
  if (absl::StartsWith(rest, "rediss://")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "remote cache '", shown,
        "': TLS (rediss://) is not supported by this build (Debian 12's hiredis 0.14 has no "
        "TLS); run Redis behind a TLS tunnel and point redis:// at its local end "
        "(docs/CACHING.md)"));
  }
  if (!absl::ConsumePrefix(&rest, "redis://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("remote cache '", shown, "' is not redis://[USER[:PASSWORD]@]HOST:PORT[/DB]"));
  }
  if (size_t slash = rest.find('/'); slash != absl::string_view::npos) {
    absl::string_view db = rest.substr(slash + 1);
    if (!db.empty() && (!absl::SimpleAtoi(db, &o.db) || o.db < 0)) {
      return absl::InvalidArgumentError(absl::StrCat("remote cache '", shown, "': bad DB"));
    }
    rest = rest.substr(0, slash);
  }
  if (size_t at = rest.rfind('@'); at != absl::string_view::npos) {
    absl::string_view user_info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (size_t colon = user_info.find(':'); colon != absl::string_view::npos) {
      o.user = std::string(user_info.substr(0, colon));
      o.password = std::string(user_info.substr(colon + 1));
    } else {
      o.user = std::string(user_info);
    }
  }
  if (size_t colon = rest.rfind(':'); colon != absl::string_view::npos) {
    if (!absl::SimpleAtoi(rest.substr(colon + 1), &o.port) || o.port <= 0 || o.port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("remote cache '", shown, "': bad port"));
    }
    rest = rest.substr(0, colon);
  }
  if (rest.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("remote cache '", shown, "': no host"));
  }
  o.host = std::string(rest);
  return o;
}

bool RemoteCache::Available() { return kHaveRedis; }

RemoteCache* RemoteCache::ForUrl(const std::string& url, const RemoteCacheOptions& base) {
  if (url.empty() || url == "off") return nullptr;
  static std::mutex mu;
  static auto* caches = new absl::flat_hash_map<std::string, RemoteCache*>();
  std::lock_guard<std::mutex> lock(mu);
  auto [it, inserted] = caches->try_emplace(url, nullptr);
  if (inserted) {
    absl::StatusOr<RemoteCacheOptions> options = ParseRemoteCacheUrl(url, base);
    if (options.ok() && !kHaveRedis) {
      std::fprintf(stderr,
                   "graphjit: remote cache '%s' needs the Redis code store, which this build "
                   "of graphjit lacks (configured without libhiredis-dev, or with "
                   "GRAPHJIT_WITH_REDIS=OFF); no remote cache\n",
                   url.c_str());
    } else if (!options.ok()) {
      std::fprintf(stderr, "graphjit: %s; no remote cache\n",
                   std::string(options.status().message()).c_str());
    } else if (options->secret == nullptr && !options->allow_unsigned) {
      std::fprintf(stderr,
                   "graphjit: remote cache '%s': no cache secret, so its code could not be "
                   "verified; set GRAPHJIT_CACHE_SECRET_FILE to a file of at least %zu secret "
                   "bytes (mode 0600, the same on every host; docs/SECURITY.md), or "
                   "GRAPHJIT_REMOTE_CACHE_TRUST=unsigned to run unsigned code (unsafe); no "
                   "remote cache\n",
                   Redacted(url).c_str(), CacheSecret::kMinBytes);
    } else {
      it->second = new RemoteCache(*std::move(options));
    }
  }
  return it->second;
}

RemoteCache::RemoteCache(RemoteCacheOptions options)
    : options_([&] {
        if (options.identity.empty()) options.identity = JitIdentity();
        return std::move(options);
      }()),
      prefix_(absl::StrFormat("graphjit:code:%016x:",
                              XXH3_64bits(options_.identity.data(), options_.identity.size()))) {
  if (options_.secret == nullptr && !options_.allow_unsigned) {
    std::fprintf(stderr,
                 "graphjit: remote cache redis://%s:%d has no secret and does not allow unsigned "
                 "code: it is never asked\n",
                 options_.host.c_str(), options_.port);
  }
}

std::string RemoteCache::RedisKey(const ContentKey& key) const {
  return absl::StrCat(prefix_, key.ToHex());
}

void RemoteCache::Count(int64_t RemoteCacheStats::* field) {
  std::lock_guard<std::mutex> lock(mu_);
  ++(stats_.*field);
}

RemoteCacheStats RemoteCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

#if GRAPHJIT_HAVE_REDIS

namespace {

// Deletes the lock only if it is still ours (it may have expired and been taken).
constexpr char kReleaseScript[] =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
    "else return 0 end";

std::string NewToken() {
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  return absl::StrFormat("%d-%x-%x-%d", ::getpid(), rd(), rd(), counter.fetch_add(1));
}

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

// hiredis writes with write(2): on a connection the server has closed (a restarted Redis,
// an idle pooled connection) that raises SIGPIPE, which would kill the process. Blocked
// in this thread for the command, and a SIGPIPE it raised is consumed before unblocking;
// the command then fails with EPIPE like any other I/O error.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~ScopedSigpipeBlock() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    if (!already_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero = {0, 0};
      while (sigtimedwait(&pipe, nullptr, &zero) == -1 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t old_;
  bool already_pending_ = false;
};

Reply Command(redisContext* c, int argc, const char** argv, const size_t* lens) {
  ScopedSigpipeBlock no_sigpipe;
  return Reply(static_cast<redisReply*>(redisCommandArgv(c, argc, argv, lens)));
}

}  // namespace

RemoteCache::~RemoteCache() {
  for (redisContext* c : idle_) redisFree(c);
}

redisContext* RemoteCache::Take() {
  if (options_.secret == nullptr && !options_.allow_unsigned) return nullptr;  // see the ctor
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Clock::now() < down_until_) return nullptr;
    if (!idle_.empty()) {
      redisContext* c = idle_.back();
      idle_.pop_back();
      return c;
    }
  }
  redisContext* c = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                            Millis(options_.connect_timeout_ms));
  if (c == nullptr || c->err != 0) {
    Fail(c, absl::StrCat("cannot connect: ", c != nullptr ? c->errstr : "out of memory"));
    return nullptr;
  }
  if (redisSetTimeout(c, Millis(options_.command_timeout_ms)) != REDIS_OK) {
    Fail(c, "cannot set the command timeout");
    return nullptr;
  }
  if (!options_.user.empty() && options_.password.empty()) {
    Fail(c, absl::StrCat("user '", options_.user, "' has no password (redis://USER:PASSWORD@... ",
                         "or GRAPHJIT_REMOTE_CACHE_PASSWORD_FILE)"));
    return nullptr;
  }
  if (!options_.password.empty()) {
    // AUTH PASSWORD for the default user (any Redis), AUTH USER PASSWORD for an ACL user.
    std::vector<const char*> argv = {"AUTH"};
    std::vector<size_t> lens = {4};
    if (!options_.user.empty()) {
      argv.push_back(options_.user.c_str());
      lens.push_back(options_.user.size());
    }
    argv.push_back(options_.password.c_str());
    lens.push_back(options_.password.size());
    Reply r = Command(c, static_cast<int>(argv.size()), argv.data(), lens.data());
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      Fail(c, absl::StrCat("AUTH: ", r == nullptr ? c->errstr : Explained(r->str)));
      return nullptr;
    }
  }
  if (options_.db != 0) {
    const std::string db = absl::StrCat(options_.db);
    const char* argv[] = {"SELECT", db.c_str()};
    const size_t lens[] = {6, db.size()};
    Reply r = Command(c, 2, argv, lens);
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      Fail(c, absl::StrCat("SELECT ", db, ": ", r == nullptr ? c->errstr : r->str));
      return nullptr;
    }
  }
  return c;
}

void RemoteCache::Give(redisContext* c) {
  std::lock_guard<std::mutex> lock(mu_);
  idle_.push_back(c);
}

void RemoteCache::Fail(redisContext* c, const std::string& what) {
  if (c != nullptr) redisFree(c);
  static std::atomic<bool> warned{false};
  const std::string where = absl::StrCat("redis://", options_.host, ":", options_.port);
  {
    std::lock_guard<std::mutex> lock(mu_);
    down_until_ = Clock::now() + std::chrono::milliseconds(options_.retry_ms);
    // The pooled connections are to the same server: drop them too.
    for (redisContext* idle : idle_) redisFree(idle);
    idle_.clear();
  }
  if (!warned.exchange(true)) {
    std::fprintf(stderr,
                 "graphjit: remote cache %s: %s; compiling locally (retrying every %d ms)\n",
                 where.c_str(), what.c_str(), options_.retry_ms);
  }
  if (options_.log.cache) {
    LogLine("cache", absl::StrCat("remote ", where, ": ", what, "; compiling locally"));
  }
}

RemoteCache::Get RemoteCache::Fetch(redisContext* c, const ContentKey& key, std::string* payload,
                                    std::string* why, bool report) {
  const std::string k = RedisKey(key);
  const char* argv[] = {"GET", k.c_str()};
  const size_t lens[] = {3, k.size()};
  Reply r = Command(c, 2, argv, lens);
  if (r == nullptr) {
    *why = c->errstr;
    return Get::kError;
  }
  if (r->type == REDIS_REPLY_NIL) return Get::kMiss;
  if (r->type != REDIS_REPLY_STRING) {
    *why = r->type == REDIS_REPLY_ERROR ? Explained(r->str) : "unexpected reply";
    return Get::kError;
  }
  absl::StatusOr<std::string> decoded = DecodeCodeRecord(
      options_.identity, key, absl::string_view(r->str, r->len), options_.secret.get());
  if (!decoded.ok()) {
    if (!report) return Get::kMiss;
    Count(&RemoteCacheStats::rejected);
    if (decoded.status().code() == absl::StatusCode::kPermissionDenied) {
      WarnUntrusted(absl::StrCat("remote ", k), decoded.status().message());
    }
    if (options_.log.cache) {
      LogLine("cache", absl::StrCat("remote ", k, ": ", decoded.status().message(),
                                    "; ignored, recompiling"));
    }
    return Get::kMiss;
  }
  *payload = *std::move(decoded);
  return Get::kHit;
}

RemoteCache::Claim RemoteCache::Acquire(const ContentKey& key) {
  Claim claim;
  // Every kUnlocked answer is a fallback: the caller compiles without the lock.
  auto fallback = [&] {
    Count(&RemoteCacheStats::fallbacks);
    claim.kind = Claim::kUnlocked;
    claim.token.clear();
    return claim;
  };
  redisContext* c = Take();
  if (c == nullptr) return fallback();
  const std::string lock_key = absl::StrCat(RedisKey(key), ":lock");
  const std::string token = NewToken();
  const std::string ttl = absl::StrCat(options_.lock_ttl_ms);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::milliseconds(options_.lock_wait_ms);
  int sleep_ms = 2;
  std::string why;
  for (bool first = true;; first = false) {
    switch (Fetch(c, key, &claim.payload, &why)) {
      case Get::kHit:
        Give(c);
        Count(&RemoteCacheStats::hits);
        if (options_.log.cache) {
          LogLine("cache", absl::StrCat("remote loaded ", RedisKey(key),
                                        claim.waited ? " (after waiting)" : ""));
        }
        claim.kind = Claim::kHit;
        return claim;
      case Get::kError:
        Fail(c, absl::StrCat("GET: ", why));
        return fallback();
      case Get::kMiss:
        break;
    }
    if (first) Count(&RemoteCacheStats::misses);
    // SET lock token NX PX ttl: OK when taken, nil when another process holds it.
    const char* argv[] = {"SET", lock_key.c_str(), token.c_str(), "NX", "PX", ttl.c_str()};
    const size_t lens[] = {3, lock_key.size(), token.size(), 2, 2, ttl.size()};
    Reply r = Command(c, 6, argv, lens);
    if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
      Fail(c, absl::StrCat("SET NX: ", r == nullptr ? c->errstr : r->str));
      return fallback();
    }
    if (r->type == REDIS_REPLY_STATUS) {
      // Taken. The holder before us may have stored the value just before releasing.
      std::string payload;
      Get again = Fetch(c, key, &payload, &why, /*report=*/false);
      claim.token = token;
      claim.kind = Claim::kLocked;
      if (again == Get::kHit) {
        claim.payload = std::move(payload);
        Give(c);
        Release(key, claim);
        claim.kind = Claim::kHit;
        claim.token.clear();
        Count(&RemoteCacheStats::hits);
        return claim;
      }
      if (again == Get::kError) {
        Fail(c, absl::StrCat("GET: ", why));
        return fallback();
      }
      Give(c);
      if (options_.log.cache) LogLine("cache", absl::StrCat("remote locked ", lock_key));
      return claim;
    }
    // Another process compiles it: wait for its value (or the lock's end), bounded.
    if (!claim.waited) {
      claim.waited = true;
      Count(&RemoteCacheStats::lock_waits);
      if (options_.log.cache) {
        LogLine("cache", absl::StrCat("remote waiting for ", lock_key));
      }
    }
    if (Clock::now() >= deadline) {
      Give(c);
      if (options_.log.cache) {
        LogLine("cache", absl::StrCat("remote lock wait over (", options_.lock_wait_ms, " ms) for ",
                                      lock_key, "; compiling locally"));
      }
      return fallback();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    sleep_ms = std::min(sleep_ms * 2, 50);
  }
}

void RemoteCache::Publish(const ContentKey& key, const std::string& payload, const Claim& claim) {
  if (payload.size() > kMaxCodePayload) return Release(key, claim);
  redisContext* c = Take();
  if (c == nullptr) return;
  const std::string k = RedisKey(key);
  const std::string record =
      EncodeCodeRecord(options_.identity, key, payload, options_.secret.get());
  const char* argv[] = {"SET", k.c_str(), record.data()};
  const size_t lens[] = {3, k.size(), record.size()};
  Reply r = Command(c, 3, argv, lens);
  if (r == nullptr || r->type == REDIS_REPLY_ERROR) {
    Fail(c, absl::StrCat("SET: ", r == nullptr ? c->errstr : r->str));
    return;
  }
  Give(c);
  Count(&RemoteCacheStats::stores);
  if (options_.log.cache) LogLine("cache", absl::StrCat("remote stored ", k));
  Release(key, claim);
}

void RemoteCache::Release(const ContentKey& key, const Claim& claim) {
  if (claim.kind != Claim::kLocked || claim.token.empty()) return;
  redisContext* c = Take();
  if (c == nullptr) return;  // the lock expires by its TTL
  const std::string lock_key = absl::StrCat(RedisKey(key), ":lock");
  const char* argv[] = {"EVAL", kReleaseScript, "1", lock_key.c_str(), claim.token.c_str()};
  const size_t lens[] = {4, sizeof(kReleaseScript) - 1, 1, lock_key.size(), claim.token.size()};
  Reply r = Command(c, 5, argv, lens);
  if (r == nullptr) {
    Fail(c, absl::StrCat("EVAL (unlock): ", c->errstr));
    return;
  }
  Give(c);
}

void RemoteCache::Reject(const ContentKey& key, const std::string& why) {
  Count(&RemoteCacheStats::rejected);
  const std::string k = RedisKey(key);
  if (options_.log.cache) {
    LogLine("cache", absl::StrCat("remote ", k, ": ", why, "; ignored, recompiling"));
  }
  redisContext* c = Take();
  if (c == nullptr) return;
  const char* argv[] = {"DEL", k.c_str()};
  const size_t lens[] = {3, k.size()};
  Reply r = Command(c, 2, argv, lens);
  if (r == nullptr) {
    Fail(c, absl::StrCat("DEL: ", c->errstr));
    return;
  }
  Give(c);
}

#else  // !GRAPHJIT_HAVE_REDIS: ForUrl opens no cache; one made by hand never connects.

RemoteCache::~RemoteCache() = default;
redisContext* RemoteCache::Take() { return nullptr; }
void RemoteCache::Give(redisContext*) {}
void RemoteCache::Fail(redisContext*, const std::string&) {}
RemoteCache::Get RemoteCache::Fetch(redisContext*, const ContentKey&, std::string*, std::string*,
                                    bool) {
  return Get::kError;
}
RemoteCache::Claim RemoteCache::Acquire(const ContentKey&) {
  Count(&RemoteCacheStats::fallbacks);
  return Claim{};
}
void RemoteCache::Publish(const ContentKey&, const std::string&, const Claim&) {}
void RemoteCache::Release(const ContentKey&, const Claim&) {}
void RemoteCache::Reject(const ContentKey&, const std::string&) {
  Count(&RemoteCacheStats::rejected);
}

#endif  // GRAPHJIT_HAVE_REDIS

}  // namespace graphjit::compiler
