// RemoteCache: compiled kernels' object code in Redis, shared by every process (and host)
// pointed at the same server: the tier below the local disk cache
// (compiler/store/disk_cache.h). Values are code records (compiler/store/code_record.h:
// the same header and checksum as the disk files) under
// `graphjit:code:<identity hash>:<key hex>`, so hosts of different CPUs or versions
// sharing one Redis never see each other's code. Values are signed with the fleet's
// CacheSecret (compiler/store/cache_secret.h) and a value whose tag is not that secret's
// is never loaded: whoever can write to the Redis database cannot make a process run
// code. Without a secret the remote tier is refused (unless options allow unsigned code,
// GRAPHJIT_REMOTE_CACHE_TRUST=unsigned: unsafe, docs/SECURITY.md).
//
//   GRAPHJIT_REMOTE_CACHE=redis://[USER[:PASSWORD]@]HOST:PORT[/DB]
//                                                  the server (unset, empty or `off`: none);
//                                                  with a password, AUTH on every connection
//   GRAPHJIT_REMOTE_CACHE_PASSWORD_FILE            the password in a file (mode 0600)
//   GRAPHJIT_CACHE_SECRET_FILE                     the secret records are signed with
//   GRAPHJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS       connect timeout (default 200)
//   GRAPHJIT_REMOTE_CACHE_TIMEOUT_MS               per-command read/write timeout (500)
//   GRAPHJIT_REMOTE_CACHE_LOCK_TTL_MS              compile lock lifetime (30000)
//   GRAPHJIT_REMOTE_CACHE_LOCK_WAIT_MS             longest wait for another's compile (30000)
//   GRAPHJIT_REMOTE_CACHE_RETRY_MS                 pause after a failure before the server
//                                                  is tried again (5000)
//
// Single flight across processes: a process missing a key takes `<value key>:lock`
// (SET NX PX ttl, a random token) and compiles; the others poll (bounded by the lock
// wait) until the value appears and load it, or take the lock when it is released or its
// holder died (TTL). A server that is unreachable, slow or dies mid-run costs at most a
// timeout: the process compiles locally (one warning on stderr per process), then tries
// the server again after the retry pause; so does a refused AUTH (a wrong or missing
// password). rediss:// (TLS) is refused: Debian 12's hiredis has no TLS (docs/CACHING.md
// says how to tunnel). A corrupt or foreign value is never loaded (one
// GRAPHJIT_LOG=cache line) and is replaced by the compile.
#ifndef GRAPHJIT_COMPILER_STORE_REMOTE_CACHE_H_
#define GRAPHJIT_COMPILER_STORE_REMOTE_CACHE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/store/cache_log.h"
#include "compiler/store/cache_secret.h"
#include "compiler/store/content_key.h"

struct redisContext;  // <hiredis/hiredis.h>

namespace graphjit::compiler {

struct RemoteCacheOptions {
  std::string host;
  int port = 6379;
  int db = 0;
  int connect_timeout_ms = 200;
  int command_timeout_ms = 500;
  int lock_ttl_ms = 30000;
  int lock_wait_ms = 30000;
  int retry_ms = 5000;
  std::string user;      // AUTH's user (Redis ACLs); empty: the default user
  std::string password;  // empty: no AUTH
  std::string identity;  // empty: JitIdentity()
  // Signs every published value and verifies every fetched one.
  std::shared_ptr<const CacheSecret> secret;
  // Without a secret: publish unsigned values and load values unverified. Unsafe: anyone
  // who can write to the database chooses the code that runs. Off: no secret, no cache.
  bool allow_unsigned = false;
  LogFlags log;
};

// Parses `redis://[USER[:PASSWORD]@]HOST:PORT[/DB]` into `base` (host, port, db and, when
// given, user and password set; the rest kept). `rediss://` is InvalidArgument saying
// this build has no TLS.

absl::StatusOr<RemoteCacheOptions> ParseRemoteCacheUrl(absl::string_view url,
                                                       RemoteCacheOptions base = {});

struct RemoteCacheStats {
  int64_t hits = 0;        // valid values fetched
  int64_t misses = 0;      // no value (or a rejected one)
  int64_t rejected = 0;    // corrupt or foreign values ignored
  int64_t lock_waits = 0;  // keys waited on while another process held the lock
  int64_t fallbacks = 0;   // keys compiled without the lock: server unreachable, slow or
                           // failing, or the lock wait over
  int64_t stores = 0;
};

class RemoteCache {
 public:
  // The process's cache for `url` (one per distinct url, never freed; the first call's
  // `base` gives its timeouts, secret and logging); "" and "off" are null. A malformed url,
  // a build without Redis, or no secret without allow_unsigned: one warning, null.
  // (GRAPHJIT_REMOTE_CACHE is read by CompileEnv, compiler/compiled/compile_env.h.)
  static RemoteCache* ForUrl(const std::string& url, const RemoteCacheOptions& base = {});
  // Whether this build has the Redis client (CMake GRAPHJIT_WITH_REDIS and libhiredis-dev);
  // without it a RemoteCache never connects and every Acquire is a fallback.
  static bool Available();
  // Connects lazily: opening never fails on an unreachable server.
  explicit RemoteCache(RemoteCacheOptions options);
  ~RemoteCache();
  RemoteCache(const RemoteCache&) = delete;
  RemoteCache& operator=(const RemoteCache&) = delete;

  // What Acquire found for a key.
  struct Claim {
    enum Kind {
      kHit,       // `payload` holds valid code: load it
      kLocked,    // this process holds the compile lock: compile, then Publish
      kUnlocked,  // compile without the lock (server down, or the lock wait ran out);
                  // Publish still stores the result
    } kind = kUnlocked;
    std::string payload;
    std::string token;  // of the lock (kLocked)
    bool waited = false;
  };
  // GET `key`; on a miss, takes the lock or waits (bounded) for the holder's value.
  Claim Acquire(const ContentKey& key);
  // Stores `payload` under `key` and releases the claim's lock (if it still holds it).
  void Publish(const ContentKey& key, const std::string& payload, const Claim& claim);
  // Releases the claim's lock without a value (the compile failed).
  void Release(const ContentKey& key, const Claim& claim);
  // The value of `key` passed the record checks but is unusable (does not link): remove it.
  void Reject(const ContentKey& key, const std::string& why);

  RemoteCacheStats stats() const;
  const RemoteCacheOptions& options() const { return options_; }
  // The Redis key of `key`'s value (its lock is this + ":lock").
  std::string RedisKey(const ContentKey& key) const;

 private:
  // A connection from the pool (or a new one), null when the server is unusable.
  redisContext* Take();
  void Give(redisContext* c);
  // Drops `c` after an error: one warning per process, then no attempt until retry_ms.
  void Fail(redisContext* c, const std::string& what);
  void Count(int64_t RemoteCacheStats::* field);
  enum class Get { kHit, kMiss, kError };
  // GET and decode; a bad value is a miss (counted and logged when `report`). An error
  // says why in `*why`.
  Get Fetch(redisContext* c, const ContentKey& key, std::string* payload, std::string* why,
            bool report = true);

  const RemoteCacheOptions options_;
  const std::string prefix_;  // graphjit:code:<identity hash>:
  mutable std::mutex mu_;
  std::vector<redisContext*> idle_;                     // guarded by mu_
  std::chrono::steady_clock::time_point down_until_{};  // guarded by mu_
  RemoteCacheStats stats_;                              // guarded by mu_
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_REMOTE_CACHE_H_
