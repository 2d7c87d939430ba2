// DiskCache: round trips, and every kind of bad file (truncated, flipped byte, another
// format version, another writer's identity, not ours at all; tampered with and its
// checksum recomputed, signed with another secret, replayed under another key, writable
// by others) ignored and removed, the size bound keeping the most recently used files, an
// unusable or untrusted directory refused.
#include "compiler/store/disk_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/store/code_record.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace graphjit::compiler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("gj_disk_", name, "_", ::getpid());
  fs::remove_all(dir);
  return dir.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

constexpr ContentKey kKey{0x0123456789abcdefull, 0xfedcba9876543210ull};

std::shared_ptr<const CacheSecret> Secret(const std::string& text = "disk cache test secret") {
  return *CacheSecret::FromBytes(text);
}

std::unique_ptr<DiskCache> Open(const std::string& dir, int64_t max_bytes = 1 << 20,
                                std::string identity = "test-identity\n",
                                std::shared_ptr<const CacheSecret> secret = Secret(),
                                LogFlags log = {}) {
  absl::StatusOr<std::unique_ptr<DiskCache>> cache =
      DiskCache::Open(dir, max_bytes, std::move(secret), std::move(identity), log);
  EXPECT_TRUE(cache.ok()) << cache.status();
  return *std::move(cache);
}

TEST(DiskCache, StoresAndLoadsByKey) {
  auto cache = Open(FreshDir("roundtrip"));
  EXPECT_FALSE(cache->Load(kKey).has_value());
  const std::string payload("object\0code with zeros", 22);
  cache->Store(kKey, payload);
  std::optional<std::string> got = cache->Load(kKey);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, payload);
  EXPECT_THAT(cache->PathOf(kKey), HasSubstr("0123456789abcdeffedcba9876543210.gjcode"));
  // Another cache object on the same directory (another process) sees the file.
  EXPECT_EQ(*Open(cache->dir())->Load(kKey), payload);
  DiskCacheStats s = cache->stats();
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.stores, 1);
  std::vector<std::string> leftovers;
  for (const auto& e : fs::directory_iterator(cache->dir())) {
    if (e.path().extension() != ".gjcode") leftovers.push_back(e.path().string());
  }
  EXPECT_TRUE(leftovers.empty()) << leftovers.front();  // no temporary files remain
}

TEST(DiskCache, BadFilesAreIgnoredRemovedAndReplaced) {
  const std::string dir = FreshDir("bad");
  auto cache = Open(dir);
  cache->Store(kKey, "the real object code");
  const std::string path = cache->PathOf(kKey);
  const std::string good = ReadFile(path);
  struct Case {
    const char* what;
    std::string bytes;
  };
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x40;
  std::string version = good;
  version[8] = 9;  // the format version field follows the 8-byte magic
  std::vector<Case> cases = {
      {"truncated to 10 bytes", good.substr(0, 10)},
      {"truncated by one byte", good.substr(0, good.size() - 1)},
      {"a flipped byte", flipped},
      {"another format version", version},
      {"not ours", std::string(200, 'x')},
      {"empty", ""},
  };
  // Both loaders check the same: the read copy and the mapping used in place.
  for (bool shared : {false, true}) {
    auto load = [&]() -> std::optional<std::string> {
      if (!shared) return cache->Load(kKey);
      std::optional<DiskCache::SharedPayload> p = cache->LoadShared(kKey);
      if (!p.has_value()) return std::nullopt;
      return std::string(p->bytes);
    };
    for (const Case& c : cases) {
      SCOPED_TRACE(absl::StrCat(c.what, shared ? ", mapped" : ", read"));
      WriteFile(path, c.bytes);
      EXPECT_FALSE(load().has_value());
      EXPECT_FALSE(fs::exists(path));  // removed, so the next store replaces it
      cache->Store(kKey, "the real object code");
      EXPECT_EQ(*load(), "the real object code");
    }
  }
  EXPECT_EQ(cache->stats().rejected, 2 * static_cast<int64_t>(cases.size()));

  // Written by another graphjit / LLVM / CPU: a valid file of a foreign identity.
  auto foreign = Open(dir, 1 << 20, "another-cpu\n");
  foreign->Store(kKey, "foreign code");
  EXPECT_FALSE(cache->Load(kKey).has_value());
  EXPECT_EQ(cache->stats().rejected, 2 * static_cast<int64_t>(cases.size()) + 1);
}

// A mapped payload starts aligned (tensors use it in place) and outlives its file: the
// size bound or a rejecting reader may remove the file while the mapping is in use.
TEST(DiskCache, AMappedPayloadIsAlignedAndOutlivesItsFile) {
  auto cache = Open(FreshDir("mapped"));
  std::string payload(10000, '\0');
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>(i * 7);
  cache->Store(kKey, payload);
  std::optional<DiskCache::SharedPayload> mapped = cache->LoadShared(kKey);
  ASSERT_TRUE(mapped.has_value());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped->bytes.data()) % kPayloadAlignment, 0u);
  cache->Remove(kKey);
  EXPECT_EQ(mapped->bytes, payload);
  // Private: writing it changes neither the file's other readers nor the file.
  const_cast<char*>(mapped->bytes.data())[0] = 'x';
  EXPECT_FALSE(cache->LoadShared(kKey).has_value());  // removed above
  EXPECT_EQ(cache->stats().misses, 1);
}

TEST(DiskCache, TheSizeBoundRemovesTheLeastRecentlyUsedFiles) {
  // 64 files of ~1 KiB under a 16 KiB bound.
  auto cache = Open(FreshDir("bound"), 16 << 10);
  const std::string payload(1000, 'p');
  ContentKey first{1, 1};
  cache->Store(first, payload);
  for (uint64_t i = 2; i <= 64; ++i) {
    cache->Store({i, i}, payload);
    // Keep the first file recently used: it must survive every cleanup.
    ASSERT_TRUE(cache->Load(first).has_value()) << i;
  }
  uintmax_t total = 0;
  int files = 0;
  for (const auto& e : fs::directory_iterator(cache->dir())) {
    total += e.file_size();
    ++files;
  }
  EXPECT_LE(total, uintmax_t{16} << 10);
  EXPECT_GT(cache->stats().removed, 0);
  EXPECT_LT(files, 64);
  EXPECT_TRUE(cache->Load(first).has_value());
  EXPECT_TRUE(cache->Load({64, 64}).has_value());  // the newest
}

TEST(DiskCache, ConcurrentWritersOfOneKeyLeaveOneValidFile) {
  const std::string dir = FreshDir("writers");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&dir] {
      auto cache = Open(dir);
      for (int i = 0; i < 50; ++i) cache->Store(kKey, std::string(4096, 'c'));
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(*Open(dir)->Load(kKey), std::string(4096, 'c'));
}

TEST(DiskCache, AnUnusableDirectoryIsAnErrorNamingIt) {
  const std::string dir = FreshDir("file");
  WriteFile(dir, "a file where the directory should be");
  absl::StatusOr<std::unique_ptr<DiskCache>> cache =
      DiskCache::Open(dir + "/sub", 1 << 20, Secret());
  ASSERT_FALSE(cache.ok());
  EXPECT_THAT(cache.status().message(), HasSubstr(dir));
  EXPECT_EQ(DiskCache::Open(FreshDir("nosecret"), 1 << 20, nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The record with one payload byte changed and its checksum recomputed: intact to the
// checksum, refused on the tag (logged with the key and why), then replaced by the
// writer's own. Signed under another secret, or a valid record of another key copied
// under this one: refused the same way.
TEST(DiskCache, TamperedForeignAndReplayedRecordsAreRefused) {
  const std::string dir = FreshDir("tamper");
  LogFlags log;
  log.cache = true;
  auto cache = Open(dir, 1 << 20, "test-identity\n", Secret(), log);
  const std::string payload(3000, 'k');
  cache->Store(kKey, payload);
  const std::string path = cache->PathOf(kKey);
  const std::string good = ReadFile(path);
  std::string tampered = good;
  const size_t summed = good.size() - CacheSecret::kTagBytes - 8;
  tampered[summed - 100] ^= 0x01;  // in the payload
  const uint64_t sum = XXH3_64bits(tampered.data(), summed);
  std::memcpy(tampered.data() + summed, &sum, 8);
  for (bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "mapped" : "read");
    WriteFile(path, tampered);
    ::testing::internal::CaptureStderr();
    const bool loaded =
        shared ? cache->LoadShared(kKey).has_value() : cache->Load(kKey).has_value();
    const std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_FALSE(loaded);
    EXPECT_THAT(err, HasSubstr("signature mismatch"));
    EXPECT_THAT(err, HasSubstr(kKey.ToHex()));
    EXPECT_FALSE(fs::exists(path));
    cache->Store(kKey, payload);
    EXPECT_EQ(*cache->Load(kKey), payload);
  }
  // Another secret's record: refused; records of one secret load in another process.
  auto other = Open(dir, 1 << 20, "test-identity\n", Secret("another fleet's secret"));
  other->Store(kKey, "code of another secret");
  EXPECT_FALSE(cache->Load(kKey).has_value());
  cache->Store(kKey, payload);
  EXPECT_EQ(*Open(dir)->Load(kKey), payload);
  // Replayed: a valid, signed record of kKey copied to another key's name.
  constexpr ContentKey kOther{7, 7};
  WriteFile(cache->PathOf(kOther), ReadFile(path));
  EXPECT_FALSE(cache->Load(kOther).has_value());
  EXPECT_EQ(cache->stats().rejected, 4);
}

TEST(DiskCache, RecordsAreWrittenOwnerOnlyAndOnesOthersCanWriteAreRefused) {
  auto cache = Open(FreshDir("modes"));
  EXPECT_EQ(fs::status(cache->dir()).permissions() & fs::perms::all, fs::perms::owner_all);
  cache->Store(kKey, "code");
  const std::string path = cache->PathOf(kKey);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  for (const auto mode : {0620, 0602}) {
    SCOPED_TRACE(mode);
    cache->Store(kKey, "code");
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    EXPECT_FALSE(cache->Load(kKey).has_value());
    EXPECT_FALSE(fs::exists(path));
  }
  cache->Store(kKey, "code");
  EXPECT_EQ(*cache->Load(kKey), "code");
}

TEST(DiskCache, ADirectoryOthersCanWriteIsRefusedNamingItsMode) {
  for (const auto mode : {0770, 0777, 0722}) {
    const std::string dir = FreshDir(absl::StrCat("open", mode));
    fs::create_directories(dir);
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    absl::StatusOr<std::unique_ptr<DiskCache>> cache = DiskCache::Open(dir, 1 << 20, Secret());
    ASSERT_FALSE(cache.ok()) << mode;
    EXPECT_EQ(cache.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(cache.status().message(), HasSubstr(dir));
    EXPECT_THAT(cache.status().message(), HasSubstr(absl::StrFormat("mode %04o", mode)));
    fs::remove_all(dir);
  }
  // Above the cache: a group-writable parent that is not sticky.
  const std::string parent = FreshDir("parent");
  fs::create_directories(parent);
  ASSERT_EQ(::chmod(parent.c_str(), 0775), 0);
  absl::StatusOr<std::unique_ptr<DiskCache>> below =
      DiskCache::Open(parent + "/cache", 1 << 20, Secret());
  ASSERT_FALSE(below.ok());
  EXPECT_THAT(below.status().message(), HasSubstr(parent));
  // Sticky (like /tmp): others cannot replace our entries, so it is fine.
  ASSERT_EQ(::chmod(parent.c_str(), 01777), 0);
  EXPECT_TRUE(DiskCache::Open(parent + "/cache", 1 << 20, Secret()).ok());
  fs::remove_all(parent);
}

// Another user's directory or symlink on the path (needs root to make one).
TEST(DiskCache, AnotherUsersDirectoryOrSymlinkIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "making another user's files needs root";
  constexpr uid_t kNobody = 65534;
  const std::string base = FreshDir("owners");
  fs::create_directories(base + "/theirs");
  ASSERT_EQ(::chown((base + "/theirs").c_str(), kNobody, kNobody), 0);
  absl::StatusOr<std::unique_ptr<DiskCache>> cache =
      DiskCache::Open(base + "/theirs", 1 << 20, Secret());
  ASSERT_FALSE(cache.ok());
  EXPECT_THAT(cache.status().message(), HasSubstr("owner uid 65534"));
  fs::create_directories(base + "/mine");
  fs::create_directory_symlink(base + "/mine", base + "/link");
  ASSERT_EQ(::lchown((base + "/link").c_str(), kNobody, kNobody), 0);
  cache = DiskCache::Open(base + "/link", 1 << 20, Secret());
  ASSERT_FALSE(cache.ok());
  EXPECT_THAT(cache.status().message(), HasSubstr("symlink"));
  fs::remove_all(base);
}

}  // namespace
}  // namespace graphjit::compiler
