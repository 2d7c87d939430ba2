#include "compiler/store/disk_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "compiler/store/code_record.h"
#include "compiler/store/file_trust.h"
#include "ir/clock.h"

namespace graphjit::compiler {
namespace {

namespace fs = std::filesystem;

// Beyond the largest payload a record may hold and its header: a larger file is refused
// before it is read or mapped.
constexpr uint64_t kMaxFileBytes = kMaxCodePayload + (uint64_t{1} << 20);

}  // namespace

absl::StatusOr<std::unique_ptr<DiskCache>> DiskCache::Open(
    std::string dir, int64_t max_bytes, std::shared_ptr<const CacheSecret> secret,
    std::string identity, LogFlags log) {
  if (secret == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("cache directory ", dir, ": no secret to sign its records with"));
  }
  if (absl::Status s = MakePrivateDirectory(dir); !s.ok()) return s;
  // Writable? A probe file says so now rather than at the first store.
  const std::string probe = (fs::path(dir) / absl::StrCat(".probe.", ::getpid())).string();
  {
    std::ofstream out(probe, std::ios::binary);
    if (!out || !(out << "ok") || !out.flush()) {
      return absl::PermissionDeniedError(absl::StrCat("cache directory ", dir, " is not writable"));
    }
  }
  std::error_code ec;
  fs::remove(probe, ec);
  if (identity.empty()) identity = JitIdentity();
  return std::unique_ptr<DiskCache>(
      new DiskCache(std::move(dir), max_bytes, std::move(secret), std::move(identity), log));
}

std::string DiskCache::PathOf(const ContentKey& key) const {
  return (fs::path(dir_) / absl::StrCat(key.ToHex(), ".gjcode")).string();
}

void DiskCache::Reject(const std::string& path, const absl::Status& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.rejected;
  }
  std::error_code ec;
  fs::remove(path, ec);
  if (why.code() == absl::StatusCode::kPermissionDenied) WarnUntrusted(path, why.message());
  if (log_.cache)
    LogLine("cache", absl::StrCat(path, ": ", why.message(), "; ignored, recompiling"));
}

absl::StatusOr<absl::string_view> DiskCache::Check(const ContentKey& key, const std::string& path,
                                                   const struct stat& st, absl::string_view bytes) {
  const ir::Clock::time_point start = ir::Clock::now();
  absl::Status trusted = CheckRecordFile(path, st);
  absl::StatusOr<absl::string_view> payload =
      trusted.ok() ? CheckCodeRecord(identity_, key, bytes, secret_.get())
                   : absl::StatusOr<absl::string_view>(trusted);
  const double seconds = ir::SecondsSince(start);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.check_seconds += seconds;
  return payload;
}

namespace {

// Opens `path` for reading; -1 when there is no such file.
int OpenRecord(const std::string& path) {
  return ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
}

}  // namespace

std::optional<std::string> DiskCache::Load(const ContentKey& key) {
  const std::string path = PathOf(key);
  const int fd = OpenRecord(path);
  if (fd < 0) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.misses;
    return std::nullopt;
  }
  struct stat st{};
  const bool sized = ::fstat(fd, &st) == 0;
  const uint64_t size = sized ? static_cast<uint64_t>(st.st_size) : 0;
  if (size > kMaxFileBytes) {
    ::close(fd);
    Reject(path, absl::DataLossError(absl::StrCat("oversized (", size, " bytes)")));
    return std::nullopt;
  }
  // One read of the whole file (graph-level records hold weights: a megabyte or more).
  std::string file = ReadUpTo(fd, static_cast<size_t>(size));
  ::close(fd);
  absl::StatusOr<absl::string_view> payload = Check(key, path, st, file);
  if (!payload.ok()) {
    Reject(path, payload.status());
    return std::nullopt;
  }
  // The payload moved to the front of the buffer it was read into: no second allocation
  // (a fresh megabyte is a page fault per 4 KiB).
  const size_t offset = static_cast<size_t>(payload->data() - file.data());
  const size_t length = payload->size();
  file.erase(0, offset);
  file.resize(length);
  Accept(path);
  return file;
}

std::optional<DiskCache::SharedPayload> DiskCache::LoadShared(const ContentKey& key) {
  const std::string path = PathOf(key);
  const int fd = OpenRecord(path);
  if (fd < 0) {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.misses;
    return std::nullopt;
  }
  struct stat st{};
  const bool sized = ::fstat(fd, &st) == 0;
  const uint64_t size = sized ? static_cast<uint64_t>(st.st_size) : 0;
  void* map = MAP_FAILED;
  if (size > 0 && size <= kMaxFileBytes) {
    // Private and writable: a tensor over it may be written, and stays this process's.
    map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  }
  ::close(fd);
  if (map == MAP_FAILED) {
    Reject(path, absl::DataLossError(size == 0 ? "empty or unreadable"
                                               : absl::StrCat("cannot map ", size, " bytes")));
    return std::nullopt;
  }
  std::shared_ptr<void> owner(map, [size](void* p) { ::munmap(p, size); });
  absl::StatusOr<absl::string_view> payload =
      Check(key, path, st, absl::string_view(static_cast<const char*>(map), size));
  if (!payload.ok()) {
    Reject(path, payload.status());
    return std::nullopt;
  }
  Accept(path);
  return SharedPayload{std::move(owner), *payload};
}

void DiskCache::Accept(const std::string& path) {
  // Recently used files survive the size bound.
  std::error_code ec;
  fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.hits;
  }
  if (log_.cache) LogLine("cache", absl::StrCat("loaded ", path));
}

void DiskCache::Store(const ContentKey& key, const std::string& payload) {
  if (!writable_.load() || payload.size() > kMaxCodePayload) return;
  const std::string file = EncodeCodeRecord(identity_, key, payload, secret_.get());

  static std::atomic<uint64_t> counter{0};
  const std::string path = PathOf(key);
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
  // 0600 whatever the umask: a record others can write is refused by every reader.
  bool ok = false;
  if (const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600); fd >= 0) {
    ok = WriteAll(fd, file);
    ok = ::close(fd) == 0 && ok;
  }
  std::error_code ec;
  if (ok) fs::rename(tmp, path, ec);
  if (!ok || ec) {
    fs::remove(tmp, ec);
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.store_failures;
    if (writable_.exchange(false)) {
      std::fprintf(stderr,
                   "graphjit: cannot write %s (disk full or not writable): compiled code stays "
                   "in memory from now on\n",
                   path.c_str());
    }
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.stores;
  }
  if (log_.cache) LogLine("cache", absl::StrCat("stored ", path));
  // The directory is scanned once per max_bytes / 16 written, not per store.
  if (bytes_written_.fetch_add(static_cast<int64_t>(file.size())) + file.size() >
      static_cast<uint64_t>(std::max<int64_t>(max_bytes_ / 16, 1))) {
    bytes_written_ = 0;
    KeepBound();
  }
}

void DiskCache::Reject(const ContentKey& key, const std::string& why) {
  Reject(PathOf(key), absl::DataLossError(why));
}

bool DiskCache::Contains(const ContentKey& key) const {
  std::error_code ec;
  return fs::exists(PathOf(key), ec);
}

void DiskCache::Remove(const ContentKey& key) {
  std::error_code ec;
  fs::remove(PathOf(key), ec);
}

void DiskCache::KeepBound() {
  struct File {
    fs::path path;
    fs::file_time_type time;
    uintmax_t size;
  };
  std::vector<File> files;
  uintmax_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().extension() != ".gjcode") continue;
    std::error_code fec;
    File f{e.path(), e.last_write_time(fec), e.file_size(fec)};
    if (fec) continue;
    total += f.size;
    files.push_back(std::move(f));
  }
  if (total <= static_cast<uintmax_t>(max_bytes_)) return;
  std::sort(files.begin(), files.end(),
            [](const File& a, const File& b) { return a.time < b.time; });
  int64_t removed = 0;
  // Down to 90% of the bound, so the next store does not scan again at once.
  for (const File& f : files) {
    if (total <= static_cast<uintmax_t>(max_bytes_) * 9 / 10) break;
    if (fs::remove(f.path, ec)) {
      total -= f.size;
      ++removed;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.removed += removed;
  if (log_.cache) {
    LogLine("cache", absl::StrCat("removed ", removed, " least recently used files from ", dir_,
                                  " (bound ", max_bytes_, " bytes)"));
  }
}

DiskCacheStats DiskCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace graphjit::compiler
