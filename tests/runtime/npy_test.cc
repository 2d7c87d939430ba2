// .npy round trips and malformed files.
#include "runtime/npy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::runtime {
namespace {

using ::testing::HasSubstr;

TEST(Npy, RoundTripsEveryDtype) {
  std::vector<Tensor> tensors = {
      *Tensor::FromDoubles(DType::kF64, {2, 3}, {1, -2, 3.5, 4, 5, 6}),
      *Tensor::FromDoubles(DType::kF32, {4}, {0.5, 1, 2, 3}),
      *Tensor::FromDoubles(DType::kI64, {1, 2, 1}, {7, -9}),
      *Tensor::FromDoubles(DType::kBool, {3}, {1, 0, 1}),
      *Tensor::FromVector<int32_t>({2}, std::vector<int32_t>{INT32_MIN, 5}),
      Tensor::Scalar(DType::kF64, 2.25),
      *Tensor::Zeros(DType::kF64, {0, 3}),
  };
  for (const Tensor& t : tensors) {
    std::string bytes = EncodeNpy(t);
    EXPECT_EQ((10 + static_cast<size_t>(bytes[8])) % 64, 0u);  // data 64-byte aligned
    absl::StatusOr<Tensor> back = ParseNpy(bytes, "t.npy");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->TypeString(), t.TypeString());
    EXPECT_EQ(back->ToDoubles(), t.ToDoubles());
  }
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // numpy.save of np.arange(3, dtype='<f8') (format 1.0).
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  header.append(118 - header.size() - 1, ' ');
  header += '\n';
  std::string bytes =
      std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\x00' + header;
  for (double v : {0.0, 1.0, 2.0}) bytes.append(reinterpret_cast<const char*>(&v), 8);
  absl::StatusOr<Tensor> t = ParseNpy(bytes, "a.npy");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ToDoubles(), (std::vector<double>{0, 1, 2}));
}

TEST(Npy, MalformedFilesNameTheFileAndTheProblem) {
  std::string good = EncodeNpy(*Tensor::FromDoubles(DType::kF64, {2, 2}, {1, 2, 3, 4}));
  auto expect = [](const std::string& bytes, const char* what) {
    absl::StatusOr<Tensor> t = ParseNpy(bytes, "x.npy");
    ASSERT_FALSE(t.ok());
    EXPECT_THAT(std::string(t.status().message()), HasSubstr("x.npy: "));
    EXPECT_THAT(std::string(t.status().message()), HasSubstr(what));
  };
  expect("hello", "magic");
  expect(good.substr(0, good.size() - 3), "data has 29 bytes");
  expect(good.substr(0, 20), "truncated header");
  std::string f2 = good;
  f2.replace(f2.find("<f8"), 3, "<f2");
  expect(f2, "unsupported dtype '<f2'");
  std::string big = good;
  big.replace(big.find("<f8"), 3, ">f8");
  expect(big, "unsupported dtype '>f8'");
  std::string fortran = good;
  fortran.replace(fortran.find("False"), 5, "True ");
  expect(fortran, "Fortran");
  std::string shape = good;
  shape.replace(shape.find("(2, 2)"), 6, "(2, -2)");
  expect(shape, "bad shape");
  // Every truncation is an error, never a crash.
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(ParseNpy(good.substr(0, n), "x.npy").ok());
  EXPECT_EQ(ReadNpy("/nonexistent/x.npy").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace graphjit::runtime
