// CacheSecret: tags that verify only under their secret, secret files refused when others
// can read or write them (naming the file and its mode), and the per-user key made once,
// owner-only, the same for every later (or concurrent) use.
#include "compiler/store/cache_secret.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::compiler {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string FreshDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / absl::StrCat("gj_secret_", name, "_", ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void WriteFile(const std::string& path, const std::string& bytes, mode_t mode) {
  {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  }
  ASSERT_EQ(::chmod(path.c_str(), mode), 0);
}

absl::string_view View(const CacheSecret::Tag& tag) {
  return absl::string_view(reinterpret_cast<const char*>(tag.data()), tag.size());
}

TEST(CacheSecret, TagsVerifyOnlyUnderTheirSecretAndData) {
  auto a = *CacheSecret::FromBytes("the first secret, long enough");
  auto b = *CacheSecret::FromBytes("the second secret, long enough");
  const CacheSecret::Tag tag = a->Sign("some bytes");
  EXPECT_TRUE(a->Verify("some bytes", View(tag)));
  EXPECT_FALSE(a->Verify("some bytez", View(tag)));
  EXPECT_FALSE(b->Verify("some bytes", View(tag)));
  EXPECT_FALSE(a->Verify("some bytes", View(tag).substr(1)));
  // A fresh nonce per tag: two tags of the same data differ, and both verify.
  const CacheSecret::Tag again = a->Sign("some bytes");
  EXPECT_NE(tag, again);
  EXPECT_TRUE(a->Verify("some bytes", View(again)));
  // Any bit of the nonce or the tag changed: refused.
  for (size_t i = 0; i < tag.size(); ++i) {
    CacheSecret::Tag bad = tag;
    bad[i] ^= 0x10;
    EXPECT_FALSE(a->Verify("some bytes", View(bad))) << i;
  }
  EXPECT_FALSE(a->Verify("some bytes", std::string(CacheSecret::kTagBytes, '\0')));
  auto jefe = CacheSecret::FromBytes("Jefe");
  EXPECT_FALSE(jefe.ok());  // shorter than kMinBytes
  EXPECT_THAT(jefe.status().message(), HasSubstr("at least 16 bytes"));
  // Megabytes (a graph's weights) verify, and one changed byte anywhere is caught.
  std::string big(3 << 20, 'w');
  const CacheSecret::Tag big_tag = a->Sign(big);
  EXPECT_TRUE(a->Verify(big, View(big_tag)));
  big[big.size() - 7] = 'v';
  EXPECT_FALSE(a->Verify(big, View(big_tag)));
  // A trailing newline is not part of the secret.
  auto with_newline = *CacheSecret::FromBytes("the first secret, long enough\n");
  EXPECT_TRUE(with_newline->Verify("some bytes", View(tag)));
}

TEST(CacheSecret, AFileOthersCanReadIsRefusedNamingItsMode) {
  const std::string dir = FreshDir("file");
  const std::string path = dir + "/secret";
  for (mode_t mode : {0644, 0640, 0604, 0660, 0606}) {
    WriteFile(path, "a fleet secret of enough bytes", mode);
    auto secret = CacheSecret::FromFile(path);
    ASSERT_FALSE(secret.ok()) << mode;
    EXPECT_EQ(secret.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(secret.status().message(), HasSubstr(path));
    EXPECT_THAT(secret.status().message(), HasSubstr(absl::StrFormat("mode %04o", mode)));
  }
  WriteFile(path, "a fleet secret of enough bytes", 0600);
  auto secret = CacheSecret::FromFile(path);
  ASSERT_TRUE(secret.ok()) << secret.status();
  auto same = *CacheSecret::FromBytes("a fleet secret of enough bytes");
  EXPECT_TRUE(same->Verify("x", View((*secret)->Sign("x"))));
  WriteFile(path, "short", 0400);
  EXPECT_THAT(CacheSecret::FromFile(path).status().message(), HasSubstr("at least 16 bytes"));
  EXPECT_THAT(CacheSecret::FromFile(dir + "/missing").status().message(),
              HasSubstr("cannot be read"));
  EXPECT_THAT(CacheSecret::FromFile(dir).status().message(), HasSubstr("not a regular file"));
  fs::remove_all(dir);
}

TEST(CacheSecret, TheUserKeyIsMadeOnceOwnerOnly) {
  const std::string dir = FreshDir("user");
  const std::string path = dir + "/config/graphjit/cache-key";
  // Concurrent first uses agree on one key.
  std::vector<std::shared_ptr<const CacheSecret>> keys(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < keys.size(); ++i) {
    threads.emplace_back([&, i] {
      auto key = CacheSecret::UserKey(path);
      ASSERT_TRUE(key.ok()) << key.status();
      keys[i] = *key;
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& key : keys) {
    ASSERT_NE(key, nullptr);
    EXPECT_TRUE(key->Verify("data", View(keys[0]->Sign("data"))));
  }
  EXPECT_EQ(fs::file_size(path), 32u);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(fs::status(fs::path(path).parent_path()).permissions() & fs::perms::all,
            fs::perms::owner_all);
  // A later use reads it; one others can read is refused, not replaced.
  EXPECT_TRUE((*CacheSecret::UserKey(path))->Verify("data", View(keys[0]->Sign("data"))));
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  EXPECT_EQ(CacheSecret::UserKey(path).status().code(), absl::StatusCode::kPermissionDenied);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace graphjit::compiler
