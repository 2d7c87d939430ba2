// DiskCache: compiled kernels' object code on disk, by content key, so a new process
// loads code instead of compiling it (Inductor's FX-graph cache, JAX's persistent
// compilation cache).
//
//   GRAPHJIT_CACHE_DIR        the directory (default $XDG_CACHE_HOME/graphjit, else
//                             ~/.cache/graphjit); `off` disables the cache
//   GRAPHJIT_CACHE_MAX_BYTES  the size bound (default 1 GiB); least recently used files
//                             are removed past it
//
// One file per key, a record of compiler/store/code_record.h: a header (magic, format version,
// graphjit and LLVM versions, target triple, CPU and features, the key), the payload, an XXH3-64
// checksum and a tag signed with the cache's secret (compiler/store/cache_secret.h). A file is
// written (mode 0600) to a temporary name and renamed, so concurrent processes never see half a
// file (two writers of one key both leave a valid one). A truncated, corrupt, foreign-version or
// foreign-CPU file is ignored (and removed, to be replaced), one line under GRAPHJIT_LOG=cache; a
// file whose tag is not this secret's, or that another user could have written, is refused the
// same way and reported on stderr once per process (compiler/store/file_trust.h: the directory
// is made 0700, and one writable by others is refused at Open). A directory that cannot be
// written gets one warning, then the process keeps code in memory only.
#ifndef GRAPHJIT_COMPILER_STORE_DISK_CACHE_H_
#define GRAPHJIT_COMPILER_STORE_DISK_CACHE_H_

#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/store/cache_log.h"
#include "compiler/store/cache_secret.h"
#include "compiler/store/content_key.h"

namespace graphjit::compiler {

struct DiskCacheStats {
  int64_t hits = 0;      // valid files loaded
  int64_t misses = 0;    // no file
  int64_t rejected = 0;  // files ignored: truncated, corrupt, foreign
  int64_t stores = 0;
  int64_t store_failures = 0;
  int64_t removed = 0;       // files removed by the size bound
  double check_seconds = 0;  // reading and checking files (checksum and tag), summed
};

class DiskCache {
 public:
  static constexpr int64_t kDefaultMaxBytes = int64_t{1} << 30;
  // (The process's cache, from GRAPHJIT_CACHE_DIR, is CompileEnv's: compiler/compiled/
  // compile_env.h.)
  // A cache in `dir` (created 0700 if missing) of at most `max_bytes`, whose records are
  // signed and verified with `secret` (required). `identity` is what a file must have been
  // written by (versions, triple, CPU, features): by default this process's JIT target.
  // InvalidArgument / PermissionDenied when `dir` is unusable or others could write it.
  static absl::StatusOr<std::unique_ptr<DiskCache>> Open(std::string dir, int64_t max_bytes,
                                                         std::shared_ptr<const CacheSecret> secret,
                                                         std::string identity = "",
                                                         LogFlags log = {});

  // The payload stored under `key`, or nullopt (no file, or a file that failed a check:
  // it is removed so the next Store replaces it).
  std::optional<std::string> Load(const ContentKey& key);
  // A payload used in place: `bytes` (aligned to kPayloadAlignment, compiler/store/
  // code_record.h) stays valid while `owner` lives. Writable memory (a private mapping:
  // writes stay in this process).
  struct SharedPayload {
    std::shared_ptr<void> owner;
    absl::string_view bytes;
  };
  // Load without copying: the file is mapped, checked like Load's and kept mapped for the
  // payload's users (files are replaced by rename, never rewritten in place, so a mapping
  // stays whole). For large payloads (a graph-level record's weights): a small file loads
  // faster with Load.
  std::optional<SharedPayload> LoadShared(const ContentKey& key);
  // Writes `payload` under `key` (temporary file + rename), then keeps the size bound.
  void Store(const ContentKey& key, const std::string& payload);
  // Whether a file of `key` exists (not checked: Load or LoadShared checks it).
  bool Contains(const ContentKey& key) const;
  // Removes the file of `key` (e.g. its object did not link).
  void Remove(const ContentKey& key);
  // Removes the file of `key` whose payload its reader refused (a check inside the
  // payload failed): counted as rejected and logged with `why` like a corrupt file.
  void Reject(const ContentKey& key, const std::string& why);

  const std::string& dir() const { return dir_; }
  DiskCacheStats stats() const;
  // The path of `key`'s file.
  std::string PathOf(const ContentKey& key) const;

 private:
  DiskCache(std::string dir, int64_t max_bytes, std::shared_ptr<const CacheSecret> secret,
            std::string identity, LogFlags log)
      : dir_(std::move(dir)),
        max_bytes_(max_bytes),
        secret_(std::move(secret)),
        identity_(std::move(identity)),
        log_(log) {}
  void Reject(const std::string& path, const absl::Status& why);
  // The checks of `bytes` read from `path` (whose stat is `st`), timed.
  absl::StatusOr<absl::string_view> Check(const ContentKey& key, const std::string& path,
                                          const struct stat& st, absl::string_view bytes);
  // After a file's payload passed its checks: keeps it recent, counts and logs the hit.
  void Accept(const std::string& path);
  void KeepBound();

  const std::string dir_;
  const int64_t max_bytes_;
  const std::shared_ptr<const CacheSecret> secret_;
  const std::string identity_;
  const LogFlags log_;
  std::atomic<bool> writable_{true};
  std::atomic<int64_t> bytes_written_{0};  // since the last bound check
  mutable std::mutex mu_;
  DiskCacheStats stats_;  // guarded by mu_
};

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_STORE_DISK_CACHE_H_
