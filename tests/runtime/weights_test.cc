// LoadWeights / SaveWeights over .npy directories and .safetensors files, and CheckWeights'
// messages.
#include "runtime/weights.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/npy.h"

namespace graphjit::runtime {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A fresh directory for one test's files, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (fs::path(::testing::TempDir()) /
             absl::StrCat("graphjit_", info->test_suite_name(), "_", info->name(), "_", getpid()))
                .string();
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

TensorMap Sample() {
  return {
      {"wq", *Tensor::FromDoubles(DType::kF64, {2, 3}, {1, -2, 3.5, 4, 5, 6})},
      {"norm", *Tensor::FromDoubles(DType::kF32, {4}, {0.5, 1, 2, 3})},
      {"ids", *Tensor::FromDoubles(DType::kI64, {2}, {7, -9})},
      {"mask", *Tensor::FromDoubles(DType::kBool, {3}, {1, 0, 1})},
      {"scale", Tensor::Scalar(DType::kF64, 2.25)},
      {"empty", *Tensor::Zeros(DType::kF32, {0, 3})},
  };
}

TEST(Weights, RoundTripBothFormats) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  TensorMap weights = Sample();
  for (const std::string& path : {dir + "/npy", dir + "/nested/npy", dir + "/w.safetensors"}) {
    ASSERT_TRUE(SaveWeights(path, weights).ok()) << path;
    absl::StatusOr<TensorMap> back = LoadWeights(path);
    ASSERT_TRUE(back.ok()) << back.status();
    ASSERT_EQ(back->size(), weights.size()) << path;
    EXPECT_TRUE(CheckWeights(weights, *back).ok()) << CheckWeights(weights, *back);
    for (const auto& [name, t] : weights) {
      EXPECT_EQ(back->at(name).ToDoubles(), t.ToDoubles()) << path << " " << name;
    }
  }
  EXPECT_TRUE(fs::is_regular_file(dir + "/npy/wq.npy"));
  EXPECT_TRUE(ReadNpy(dir + "/npy/scale.npy").ok());
  // Saving into an existing directory overwrites the files.
  TensorMap one = {{"wq", *Tensor::Zeros(DType::kF64, {2, 3})}};
  ASSERT_TRUE(SaveWeights(dir + "/npy", one).ok());
  EXPECT_EQ(LoadWeights(dir + "/npy")->at("wq").ToDoubles(), std::vector<double>(6, 0.0));
}

TEST(Weights, DirectoriesReadOnlyNpyFiles) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  ASSERT_TRUE(WriteNpy(dir + "/w.npy", Tensor::Scalar(DType::kF64, 1)).ok());
  ASSERT_TRUE(WriteNpy(dir + "/.w.npy.swp.npy", Tensor::Scalar(DType::kF64, 2)).ok());
  WriteFile(dir + "/README.txt", "not weights");
  WriteFile(dir + "/w.npy.bak", "not weights either");
  fs::create_directories(dir + "/sub.npy");
  absl::StatusOr<TensorMap> w = LoadWeights(dir);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_EQ(w->size(), 1u);
  EXPECT_EQ(w->at("w").ValueAt(0), 1.0);
}

TEST(Weights, LoadErrorsSayWhatIsAccepted) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  fs::create_directories(dir + "/empty");
  WriteFile(dir + "/empty/notes.txt", "");
  absl::Status empty = LoadWeights(dir + "/empty").status();
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(empty.message(),
            dir +
                "/empty: no .npy files found (expected a directory of NAME.npy files or a "
                ".safetensors file)");

  WriteFile(dir + "/model.bin", "pickle");
  absl::Status bin = LoadWeights(dir + "/model.bin").status();
  EXPECT_EQ(bin.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bin.message(), dir +
                               "/model.bin: unsupported weights path (expected a directory of "
                               "NAME.npy files or a .safetensors file)");

  EXPECT_EQ(LoadWeights(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(LoadWeights(dir + "/missing.safetensors").status().code(), absl::StatusCode::kNotFound);

  // A bad file inside a directory is reported by its path.
  fs::create_directories(dir + "/bad");
  ASSERT_TRUE(WriteNpy(dir + "/bad/a.npy", Tensor::Scalar(DType::kF64, 1)).ok());
  WriteFile(dir + "/bad/b.npy", "garbage");
  absl::Status bad = LoadWeights(dir + "/bad").status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr(dir + "/bad/b.npy: not a .npy file"));

  WriteFile(dir + "/bad.safetensors", "short");
  absl::Status st = LoadWeights(dir + "/bad.safetensors").status();
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(st.message()), HasSubstr(dir + "/bad.safetensors: file has 5 bytes"));
}

TEST(Weights, DirectoryNamesMustBeFileNames) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  Tensor one = Tensor::Scalar(DType::kF32, 1);
  for (const char* name : {"a/b", ".hidden", "", ".."}) {
    absl::Status s = SaveWeights(dir + "/out", {{"ok", one}, {name, one}});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_EQ(s.message(), absl::StrCat(dir, "/out: tensor name '", name,
                                        "' cannot be a file name (it must be non-empty, without "
                                        "'/' and not start with '.'); save to a .safetensors "
                                        "file instead"));
    // The same names are fine in a .safetensors file.
    EXPECT_TRUE(SaveWeights(dir + "/out.safetensors", {{"ok", one}, {name, one}}).ok()) << name;
  }
  EXPECT_FALSE(fs::exists(dir + "/out"));  // nothing is created for a bad map

  WriteFile(dir + "/file", "");
  absl::Status in_the_way = SaveWeights(dir + "/file", {{"ok", one}});
  EXPECT_EQ(in_the_way.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(in_the_way.message()), HasSubstr(dir + "/file: cannot create"));
}

TEST(Weights, CheckWeightsNamesTheTensorAndBothTypes) {
  auto f64 = [](std::vector<int64_t> shape) { return *Tensor::Zeros(DType::kF64, shape); };
  TensorMap expected = {{"wq", f64({128, 128})}, {"wo", f64({128, 128})}};
  auto check = [&](TensorMap actual) {
    return std::string(CheckWeights(expected, actual).message());
  };
  EXPECT_TRUE(CheckWeights(expected, expected).ok());
  EXPECT_TRUE(CheckWeights({}, {}).ok());
  EXPECT_EQ(check({{"wq", *Tensor::Zeros(DType::kF32, {128, 128})}, {"wo", f64({128, 128})}}),
            "weights: 'wq' has f32[128, 128], expected f64[128, 128]");
  EXPECT_EQ(check({{"wq", f64({128, 64})}, {"wo", f64({128, 128})}}),
            "weights: 'wq' has f64[128, 64], expected f64[128, 128]");
  EXPECT_EQ(check({{"wq", f64({128, 128})}, {"wo", f64({128, 128, 1})}}),
            "weights: 'wo' has f64[128, 128, 1], expected f64[128, 128]");
  EXPECT_EQ(check({{"wq", f64({128, 128})}}), "weights: missing 'wo' (expected f64[128, 128])");
  EXPECT_EQ(check({{"wq", f64({128, 128})}, {"wo", f64({128, 128})}, {"foo", f64({3})}}),
            "weights: unexpected tensor 'foo' (f64[3]); the model's parameters are: wo, wq");
  EXPECT_EQ(check({{"wq", f64({128, 128})}, {"wo", Tensor()}}),
            "weights: 'wo' has no tensor, expected f64[128, 128]");
  // Several problems: the first in name order.
  EXPECT_EQ(check({{"zz", f64({1})}, {"wq", f64({1})}}),
            "weights: missing 'wo' (expected f64[128, 128])");
  EXPECT_EQ(check({{"aa", f64({1})}, {"wq", f64({1})}}),
            "weights: unexpected tensor 'aa' (f64[1]); the model's parameters are: wo, wq");
  EXPECT_EQ(CheckWeights(expected, {}).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphjit::runtime
