// DiskCache: round trips, and every kind of bad file (truncated, flipped byte, another
// format version, another writer's identity, not ours at all) ignored and removed, the
// size bound keeping the most recently used files, an unusable directory refused.
#include "compiler/store/disk_cache.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "compiler/store/code_record.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

std::unique_ptr<DiskCache> Open(const std::string& dir, int64_t max_bytes = 1 << 20,
                                std::string identity = "test-identity\n") {
  absl::StatusOr<std::unique_ptr<DiskCache>> cache =
      DiskCache::Open(dir, max_bytes, std::move(identity));
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
  absl::StatusOr<std::unique_ptr<DiskCache>> cache = DiskCache::Open(dir + "/sub", 1 << 20);
  ASSERT_FALSE(cache.ok());
  EXPECT_THAT(cache.status().message(), HasSubstr(dir));
}

}  // namespace
}  // namespace graphjit::compiler
