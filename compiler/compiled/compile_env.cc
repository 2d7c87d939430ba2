#include "compiler/compiled/compile_env.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "compiler/store/cache_secret.h"
#include "compiler/store/file_trust.h"
#include "runtime/thread_pool.h"

namespace graphjit::compiler {
namespace {

std::string Var(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// An integer variable in [lo, hi]; unset: `fallback`; anything else: a warning and
// `fallback`.
int64_t IntVar(const char* name, int64_t fallback, int64_t lo, int64_t hi, const char* what) {
  const std::string v = Var(name);
  if (v.empty()) return fallback;
  int64_t n = 0;
  if (!absl::SimpleAtoi(v, &n) || n < lo || n > hi) {
    std::fprintf(stderr, "graphjit: %s='%s' is not %s; using %lld\n", name, v.c_str(), what,
                 static_cast<long long>(fallback));
    return fallback;
  }
  return n;
}

std::string CacheDir() {
  namespace fs = std::filesystem;
  if (std::string dir = Var("GRAPHJIT_CACHE_DIR"); !dir.empty()) return dir;
  if (std::string xdg = Var("XDG_CACHE_HOME"); !xdg.empty()) {
    return (fs::path(xdg) / "graphjit").string();
  }
  if (std::string home = Var("HOME"); !home.empty()) {
    return (fs::path(home) / ".cache" / "graphjit").string();
  }
  return "";
}

// The per-user key of the disk cache, outside the cache directory (which is data others
// might be handed; the key never is).
std::string UserKeyPath() {
  namespace fs = std::filesystem;
  if (std::string xdg = Var("XDG_CONFIG_HOME"); !xdg.empty()) {
    return (fs::path(xdg) / "graphjit" / "cache-key").string();
  }
  if (std::string home = Var("HOME"); !home.empty()) {
    return (fs::path(home) / ".config" / "graphjit" / "cache-key").string();
  }
  return "";
}

// GRAPHJIT_CACHE_SECRET_FILE: the fleet's secret, signing both tiers. Null when unset;
// `*refused` when set but unusable (then neither tier opens: a fleet's records must never
// be signed or read with anything else).
std::shared_ptr<const CacheSecret> FleetSecret(bool* refused) {
  *refused = false;
  const std::string path = Var("GRAPHJIT_CACHE_SECRET_FILE");
  if (path.empty()) return nullptr;
  absl::StatusOr<std::shared_ptr<const CacheSecret>> secret = CacheSecret::FromFile(path);
  if (!secret.ok()) {
    std::fprintf(stderr,
                 "graphjit: GRAPHJIT_CACHE_SECRET_FILE: %s; no disk or remote cache (compiled "
                 "code stays in memory)\n",
                 std::string(secret.status().message()).c_str());
    *refused = true;
    return nullptr;
  }
  return *std::move(secret);
}

DiskCache* OpenDiskCache(const LogFlags& log, std::shared_ptr<const CacheSecret> secret) {
  const std::string dir = CacheDir();
  if (dir == "off") return nullptr;
  if (dir.empty()) {
    std::fprintf(stderr,
                 "graphjit: no cache directory (GRAPHJIT_CACHE_DIR, XDG_CACHE_HOME and HOME "
                 "are unset): compiled code stays in memory\n");
    return nullptr;
  }
  const int64_t max_bytes =
      IntVar("GRAPHJIT_CACHE_MAX_BYTES", DiskCache::kDefaultMaxBytes, 0, INT64_MAX, "a byte count");
  if (secret == nullptr) {
    const std::string key_path = UserKeyPath();
    absl::StatusOr<std::shared_ptr<const CacheSecret>> key =
        key_path.empty() ? absl::FailedPreconditionError(
                               "no place for the cache's user key (XDG_CONFIG_HOME and HOME are "
                               "unset; GRAPHJIT_CACHE_SECRET_FILE names one)")
                         : CacheSecret::UserKey(key_path);
    if (!key.ok()) {
      std::fprintf(stderr, "graphjit: %s: compiled code stays in memory\n",
                   std::string(key.status().message()).c_str());
      return nullptr;
    }
    secret = *std::move(key);
  }
  absl::StatusOr<std::unique_ptr<DiskCache>> opened =
      DiskCache::Open(dir, max_bytes, std::move(secret), "", log);
  if (!opened.ok()) {
    std::fprintf(stderr, "graphjit: %s: compiled code stays in memory\n",
                 std::string(opened.status().message()).c_str());
    return nullptr;
  }
  return opened->release();  // kept for the process
}

RemoteCache* OpenRemoteCache(const LogFlags& log, std::shared_ptr<const CacheSecret> secret) {
  const std::string url = Var("GRAPHJIT_REMOTE_CACHE");
  if (url.empty() || url == "off") return nullptr;
  constexpr const char* kMs = "a number of milliseconds";
  RemoteCacheOptions base;
  base.connect_timeout_ms =
      static_cast<int>(IntVar("GRAPHJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS", 200, 0, INT32_MAX, kMs));
  base.command_timeout_ms =
      static_cast<int>(IntVar("GRAPHJIT_REMOTE_CACHE_TIMEOUT_MS", 500, 0, INT32_MAX, kMs));
  base.lock_ttl_ms =
      static_cast<int>(IntVar("GRAPHJIT_REMOTE_CACHE_LOCK_TTL_MS", 30000, 0, INT32_MAX, kMs));
  base.lock_wait_ms =
      static_cast<int>(IntVar("GRAPHJIT_REMOTE_CACHE_LOCK_WAIT_MS", 30000, 0, INT32_MAX, kMs));
  base.retry_ms =
      static_cast<int>(IntVar("GRAPHJIT_REMOTE_CACHE_RETRY_MS", 5000, 0, INT32_MAX, kMs));
  base.log = log;
  base.secret = std::move(secret);
  const std::string trust = Var("GRAPHJIT_REMOTE_CACHE_TRUST");
  if (trust == "unsigned") {
    base.allow_unsigned = true;
  } else if (!trust.empty() && trust != "signed") {
    std::fprintf(stderr,
                 "graphjit: GRAPHJIT_REMOTE_CACHE_TRUST='%s' is not signed or unsigned; using "
                 "signed\n",
                 trust.c_str());
  }
  if (const std::string file = Var("GRAPHJIT_REMOTE_CACHE_PASSWORD_FILE"); !file.empty()) {
    absl::StatusOr<std::string> password =
        ReadSecretFile(file, "remote cache password file (GRAPHJIT_REMOTE_CACHE_PASSWORD_FILE)");
    if (!password.ok()) {
      std::fprintf(stderr, "graphjit: %s; no remote cache\n",
                   std::string(password.status().message()).c_str());
      return nullptr;
    }
    while (!password->empty() && (password->back() == '\n' || password->back() == '\r')) {
      password->pop_back();
    }
    base.password = *std::move(password);
  }
  return RemoteCache::ForUrl(url, base);
}

}  // namespace

LogFlags LogFlagsFromEnvironment() {
  static const LogFlags flags = ParseLogFlags(Var("GRAPHJIT_LOG"));
  return flags;
}

namespace {

// Everything but the disk and remote tiers, which only FromEnvironment opens. Read once,
// so a bad value is reported once.
const CompileEnv& SettingsFromEnvironment() {
  static const CompileEnv* settings = [] {
    auto* e = new CompileEnv();
    e->log = LogFlagsFromEnvironment();
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    e->compile_threads = static_cast<int>(
        IntVar("GRAPHJIT_COMPILE_THREADS", cores, 1, 256, "an integer in [1, 256]"));
    e->threads = static_cast<int>(IntVar("GRAPHJIT_NUM_THREADS", runtime::AvailableCpus(), 1,
                                         runtime::kMaxThreads, "an integer in [1, 1024]"));
    e->dump_dir = Var("GRAPHJIT_DUMP_DIR");
    const std::string profile = Var("GRAPHJIT_PROFILE");
    e->profile = !profile.empty() && profile != "0";
    const std::string products = Var("GRAPHJIT_PRODUCTS");
    if (!products.empty()) {
      if (std::optional<ProductKernels> p = ParseProductKernels(products)) {
        e->products = *p;
      } else {
        std::fprintf(stderr,
                     "graphjit: GRAPHJIT_PRODUCTS='%s' is not auto, tiles or blas; using auto\n",
                     products.c_str());
      }
    }
    return e;
  }();
  return *settings;
}

}  // namespace

const CompileEnv& CompileEnv::FromEnvironment() {
  static const CompileEnv* env = [] {
    // Never destroyed: code may be held by statics at exit.
    auto* e = new CompileEnv(SettingsFromEnvironment());
    bool refused = false;
    std::shared_ptr<const CacheSecret> fleet = FleetSecret(&refused);
    if (!refused) {
      e->disk = OpenDiskCache(e->log, fleet);
      e->remote = OpenRemoteCache(e->log, fleet);
    }
    return e;
  }();
  return *env;
}

const CompileEnv& CompileEnv::MemoryOnly() {
  // No disk or remote tier, so none is opened: no cache directory is created, no server
  // asked, no warning printed about either.
  static const CompileEnv* env = new CompileEnv(SettingsFromEnvironment());
  return *env;
}

}  // namespace graphjit::compiler
