// .safetensors round trips, the reference layout, BF16/F16 widening and every kind of
// malformed file (each built byte by byte here).
#include "runtime/safetensors.h"

#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphjit::runtime {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A fresh directory for one test's files, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::path(::testing::TempDir()) /
             absl::StrCat("graphjit_", info->test_suite_name(), "_", info->name(), "_", getpid()))
                .string();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// The 8-byte little-endian length.
std::string Length(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// A file: the header given as JSON text, then `data`.
std::string File(const std::string& header, const std::string& data = "") {
  return Length(header.size()) + header + data;
}

template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string out;
  for (T v : values) out.append(reinterpret_cast<const char*>(&v), sizeof(T));
  return out;
}

TensorMap EveryNativeDtype() {
  return {
      {"f64", *Tensor::FromDoubles(DType::kF64, {2, 3}, {1, -2, 3.5, 4, 5, 1e300})},
      {"f32", *Tensor::FromDoubles(DType::kF32, {4}, {0.5, 1, -2, 3})},
      {"i64", *Tensor::FromVector<int64_t>({1, 2, 1}, std::vector<int64_t>{7, INT64_MIN})},
      {"bool", *Tensor::FromDoubles(DType::kBool, {3}, {1, 0, 1})},
      {"i32", *Tensor::FromVector<int32_t>({2}, std::vector<int32_t>{-3, INT32_MAX})},
      {"scalar_f64", Tensor::Scalar(DType::kF64, 2.25)},
      {"scalar_bool", Tensor::Scalar(DType::kBool, 1)},
      {"empty_f32", *Tensor::Zeros(DType::kF32, {0, 3})},
      {"empty_i64", *Tensor::Zeros(DType::kI64, {0})},
  };
}

void ExpectSameTensors(const TensorMap& want, const TensorMap& got) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [name, t] : want) {
    ASSERT_TRUE(got.contains(name)) << name;
    EXPECT_EQ(got.at(name).TypeString(), t.TypeString()) << name;
    EXPECT_EQ(got.at(name).ToDoubles(), t.ToDoubles()) << name;
  }
}

TEST(Safetensors, RoundTripsEveryNativeDtypeScalarsAndEmptyTensors) {
  TensorMap tensors = EveryNativeDtype();
  absl::StatusOr<std::string> bytes = EncodeSafetensors(tensors);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  absl::StatusOr<TensorMap> back = ParseSafetensors(*bytes, "t.safetensors");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameTensors(tensors, *back);

  ScratchDir scratch;
  std::string path = scratch.path() + "/t.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, tensors).ok());
  absl::StatusOr<TensorMap> read = ReadSafetensors(path);
  ASSERT_TRUE(read.ok()) << read.status();
  ExpectSameTensors(tensors, *read);
  // The file and the encoding are the same bytes.
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(file, *bytes);

  absl::StatusOr<std::string> none = EncodeSafetensors({});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, File("{}      "));
  EXPECT_TRUE(ParseSafetensors(*none, "none")->empty());
}

TEST(Safetensors, WritesTheReferenceLayout) {
  // 8-byte elements first, then f32, then bool, each group by name: packed, and every
  // tensor aligned to its element size; header keys sorted; header padded to 8 bytes.
  TensorMap tensors = {
      {"a", *Tensor::FromDoubles(DType::kF32, {2}, {1, 2})},
      {"b", *Tensor::FromDoubles(DType::kF64, {1}, {3})},
      {"c", *Tensor::FromDoubles(DType::kBool, {1}, {1})},
      {"d", *Tensor::FromDoubles(DType::kI64, {}, {4})},
  };
  std::string header = R"({"a":{"data_offsets":[16,24],"dtype":"F32","shape":[2]},)"
                       R"("b":{"data_offsets":[0,8],"dtype":"F64","shape":[1]},)"
                       R"("c":{"data_offsets":[24,25],"dtype":"BOOL","shape":[1]},)"
                       R"("d":{"data_offsets":[8,16],"dtype":"I64","shape":[]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string data = Bytes<double>({3}) + Bytes<int64_t>({4}) + Bytes<float>({1, 2}) + "\x01";
  EXPECT_EQ(*EncodeSafetensors(tensors), File(header, data));
}

TEST(Safetensors, ReadsAFileInTheReferenceFormat) {
  // As safetensors.torch.save_file writes it: metadata first, no padding needed here.
  std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  ScratchDir scratch;
  std::string path = scratch.path() + "/model.safetensors";
  WriteFile(path, File(header, Bytes<float>({1.5f, -2.0f})));
  absl::StatusOr<TensorMap> t = ReadSafetensors(path);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ(t->at("w").TypeString(), "f32[2]");
  EXPECT_EQ(t->at("w").ToDoubles(), (std::vector<double>{1.5, -2.0}));
}

TEST(Safetensors, WidensBF16AndF16ToF32) {
  // Hand-encoded halves: 1.0, -2.5, the largest finite, +inf, a NaN, the smallest
  // subnormal, the largest subnormal (F16 only), -0.
  std::vector<uint16_t> f16 = {0x3C00, 0xC100, 0x7BFF, 0x7C00, 0x7E00, 0x0001, 0x03FF, 0x8000};
  std::vector<double> f16_want = {1.0, -2.5, 65504.0, INFINITY, NAN, 0x1p-24, 1023 * 0x1p-24, -0.0};
  std::vector<uint16_t> bf16 = {0x3F80, 0xC020, 0x7F7F, 0x7F80, 0x7FC0, 0x0001, 0xFF80};
  // bf16 is the top half of an f32: 0x7F7F is (2 - 2^-7) * 2^127, 0x0001 is 2^-133 (an
  // f32 subnormal), 0xFF80 is -inf.
  std::vector<double> bf16_want = {1.0,      -2.5,     (2 - 0x1p-7) * 0x1p127, INFINITY, NAN,
                                   0x1p-133, -INFINITY};
  std::string data;
  for (uint16_t h : f16) data.append(reinterpret_cast<const char*>(&h), 2);
  for (uint16_t h : bf16) data.append(reinterpret_cast<const char*>(&h), 2);
  std::string header = absl::StrCat(R"({"h":{"dtype":"F16","shape":[8],"data_offsets":[0,16]},)",
                                    R"("b":{"dtype":"BF16","shape":[7],"data_offsets":[16,30]},)",
                                    R"("keep":{"dtype":"F64","shape":[],"data_offsets":[32,40]}})");
  data += std::string(2, '\0') + Bytes<double>({7.0});  // a gap between tensors is allowed

  ::testing::internal::CaptureStderr();
  absl::StatusOr<TensorMap> t = ParseSafetensors(File(header, data), "half.safetensors");
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(log, "graphjit[weights]: half.safetensors: widened 2 BF16/F16 tensors to f32\n");
  EXPECT_EQ(t->at("keep").TypeString(), "f64[]");
  for (const auto& [name, want] : {std::pair{"h", f16_want}, std::pair{"b", bf16_want}}) {
    const Tensor& got = t->at(name);
    ASSERT_EQ(got.TypeString(), absl::StrCat("f32[", want.size(), "]"));
    for (size_t i = 0; i < want.size(); ++i) {
      double v = got.ValueAt(static_cast<int64_t>(i));
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(v)) << name << "[" << i << "]";
      } else {
        EXPECT_EQ(v, want[i]) << name << "[" << i << "]";
        EXPECT_EQ(std::signbit(v), std::signbit(want[i])) << name << "[" << i << "]";
      }
    }
  }
  // Every f16 bit pattern widens to the value its fields encode.
  std::string all;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    uint16_t h = static_cast<uint16_t>(bits);
    all.append(reinterpret_cast<const char*>(&h), 2);
  }
  ::testing::internal::CaptureStderr();
  absl::StatusOr<TensorMap> m = ParseSafetensors(
      File(R"({"x":{"dtype":"F16","shape":[65536],"data_offsets":[0,131072]}})", all), "all");
  ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(m.ok()) << m.status();
  for (uint32_t h = 0; h < 0x10000; ++h) {
    double got = m->at("x").ValueAt(h);
    int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    double magnitude = exponent == 0    ? std::ldexp(mantissa, -24)
                       : exponent == 31 ? (mantissa == 0 ? INFINITY : NAN)
                                        : std::ldexp(1024 + mantissa, exponent - 25);
    double want = (h & 0x8000) ? -magnitude : magnitude;
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << h;
    } else {
      ASSERT_EQ(got, want) << std::hex << h;
      ASSERT_EQ(std::signbit(got), std::signbit(want)) << std::hex << h;
    }
  }
}

TEST(Safetensors, OtherDtypesAreRejectedByName) {
  for (const char* dtype : {"I16", "U8", "I8", "F8_E4M3", "F8_E5M2", "U64", "float32"}) {
    std::string header =
        absl::StrCat(R"({"emb":{"dtype":")", dtype, R"(","shape":[1],"data_offsets":[0,4]}})");
    absl::StatusOr<TensorMap> t = ParseSafetensors(File(header, "abcd"), "m.safetensors");
    ASSERT_FALSE(t.ok()) << dtype;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(
        t.status().message(),
        absl::StrCat("m.safetensors: tensor 'emb': unsupported dtype '", dtype,
                     "' (supported: F64, F32, I64, I32, BOOL; BF16 and F16 are widened to f32)"));
  }
}

// An entry for tensor `w` with the given fields (raw JSON text).
std::string W(const std::string& fields) { return absl::StrCat(R"({"w":)", fields, "}"); }

TEST(Safetensors, MalformedFilesNameTheFileAndTheTensor) {
  const std::string f32x2 = Bytes<float>({1, 2});
  struct Case {
    std::string bytes;
    std::string message;   // a part of the message after "FILE: "
    bool names_w = false;  // the message names tensor 'w'
  };
  std::vector<Case> cases = {
      {"", "file has 0 bytes, too short"},
      {std::string("\x05\0\0\0\0", 5), "file has 5 bytes, too short"},
      {Length(0) + "{}", "header length is 0"},
      {Length(100) + "{}", "header length 100 runs past the end of the file (10 bytes)"},
      {Length(uint64_t{1} << 40) + "{}", "header length 1099511627776 is over the limit of"},
      {Length(~uint64_t{0}) + "{}", "is over the limit"},
      {Length(100'000'001) + "{}", "is over the limit of 100000000 bytes"},
      {File(R"({"w": {)"), "malformed JSON header: "},
      {File(R"({"w": 1} x)"), "malformed JSON header: "},
      {File(std::string("{\"\xff\":1}")), "malformed JSON header: "},  // not UTF-8
      {File("[1, 2]"), "header is not a JSON object (got [1,2])"},
      {File(R"("w")"), "header is not a JSON object"},
      {File(W("3")), "entry is not an object", true},
      {File(W("[]")), "entry is not an object", true},
      {File(W(R"({"shape":[2],"data_offsets":[0,8]})"), f32x2), "missing \"dtype\"", true},
      {File(W(R"({"dtype":4,"shape":[2],"data_offsets":[0,8]})"), f32x2),
       "\"dtype\" is not a string: 4", true},
      {File(W(R"({"dtype":"F32","data_offsets":[0,8]})"), f32x2), "missing \"shape\"", true},
      {File(W(R"({"dtype":"F32","shape":2,"data_offsets":[0,8]})"), f32x2),
       "\"shape\" is not an array: 2", true},
      {File(W(R"({"dtype":"F32","shape":[2.0],"data_offsets":[0,8]})"), f32x2),
       "bad dim 2.0 in \"shape\"", true},
      {File(W(R"({"dtype":"F32","shape":["2"],"data_offsets":[0,8]})"), f32x2),
       "bad dim \"2\" in \"shape\"", true},
      {File(W(R"({"dtype":"F32","shape":[null],"data_offsets":[0,8]})"), f32x2), "bad dim null",
       true},
      {File(W(R"({"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,8]})"), f32x2),
       "bad dim 18446744073709551615", true},
      {File(W(R"({"dtype":"F32","shape":[2,-1],"data_offsets":[0,8]})"), f32x2),
       "negative dim -1 in shape [2, -1]", true},
      {File(W(R"({"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8]})"), f32x2),
       "shape [4294967296, 4294967296, 4] has too many elements", true},
      {File(W(R"({"dtype":"F64","shape":[1152921504606846976],"data_offsets":[0,8]})"), f32x2),
       "has too many elements", true},  // fits int64 as a count, not as bytes
      {File(W(R"({"dtype":"F32","shape":[2]})"), f32x2), "missing \"data_offsets\"", true},
      {File(W(R"({"dtype":"F32","shape":[2],"data_offsets":[0]})"), f32x2),
       "\"data_offsets\" must be two non-negative integers [begin, end], got [0]", true},
      {File(W(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8,16]})"), f32x2),
       "\"data_offsets\" must be two non-negative integers", true},
      {File(W(R"({"dtype":"F32","shape":[2],"data_offsets":{"0":8}})"), f32x2),
       "\"data_offsets\" must be two non-negative integers", true},
      {File(W(R"({"dtype":"F32","shape":[2],"data_offsets":[-1,7]})"), f32x2), "got [-1,7]", true},
      {File(W(R"({"dtype":"F32","shape":[2],"data_offsets":[0,"8"]})"), f32x2), "got [0,\"8\"]",
       true},
      {File(W(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8.5]})"), f32x2), "got [0,8.5]",
       true},
      {File(W(R"({"dtype":"F32","shape":[0],"data_offsets":[8,0]})"), f32x2),
       "data_offsets [8, 0] have begin > end", true},
      {File(W(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), f32x2),
       "data_offsets [0, 16] run past the end of the data (8 bytes)", true},
      {File(W(R"({"dtype":"F32","shape":[2],"data_offsets":[0,18446744073709551615]})"), f32x2),
       "\"data_offsets\" must be two non-negative integers", true},
      {File(W(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})"), f32x2),
       "data_offsets [0, 8] hold 8 bytes, but F32[3] needs 12", true},
      {File(W(R"({"dtype":"F32","shape":[],"data_offsets":[0,8]})"), f32x2),
       "data_offsets [0, 8] hold 8 bytes, but F32[] needs 4", true},
      {File(W(R"({"dtype":"BOOL","shape":[3],"data_offsets":[0,3]})"),
            std::string("\x01\x02\x00", 3)),
       "BOOL element 1 is byte 2 (expected 0 or 1)", true},
      {File(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
            R"("w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
            Bytes<float>({1, 2, 3})),
       "tensors 'a' and 'w' overlap (data_offsets [0, 8] and [4, 12])", true},
      {File(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("v":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
            Bytes<float>({1})),
       "tensors 'v' and 'w' overlap", true},
      {File(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
            f32x2),
       "duplicate tensor name 'w'", true},
      {File(W(R"({"dtype":"F32","dtype":"I32","shape":[2],"data_offsets":[0,8]})"), f32x2),
       "tensor 'w': duplicate key 'dtype'", true},
      {File(R"({"__metadata__":"pt","w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", f32x2),
       "\"__metadata__\" is not an object (got \"pt\")"},
  };
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    std::string path = absl::StrCat(dir, "/bad", i, ".safetensors");
    WriteFile(path, c.bytes);
    absl::StatusOr<TensorMap> t = ReadSafetensors(path);
    ASSERT_FALSE(t.ok()) << "case " << i << ": " << c.message;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << t.status();
    std::string message(t.status().message());
    EXPECT_THAT(message, StartsWith(path + ": ")) << "case " << i;
    EXPECT_THAT(message, HasSubstr(c.message)) << "case " << i;
    if (c.names_w) {
      EXPECT_THAT(message, HasSubstr("'w'")) << "case " << i;
    }
    // The in-memory parser agrees.
    absl::StatusOr<TensorMap> parsed = ParseSafetensors(c.bytes, "mem");
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().message(), "mem" + message.substr(path.size()));
  }

  EXPECT_EQ(ReadSafetensors(dir + "/missing.safetensors").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(ReadSafetensors(dir + "/missing.safetensors").status().message()),
              HasSubstr("missing.safetensors"));
  absl::Status is_dir = ReadSafetensors(dir).status();
  EXPECT_EQ(is_dir.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(is_dir.message(), dir + ": not a regular file");
}

TEST(Safetensors, TruncatedOrCorruptedFilesNeverCrash) {
  std::string good = *EncodeSafetensors(EveryNativeDtype());
  ASSERT_TRUE(ParseSafetensors(good, "x").ok());
  // Every proper prefix is missing data or header.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(ParseSafetensors(good.substr(0, n), "x").ok()) << n;
  }
  // Any single corrupted byte is either still a valid file or an InvalidArgument.
  for (size_t i = 0; i < good.size(); ++i) {
    for (char c : {'\0', '\x7f', '"', '9', ']', '\xff'}) {
      std::string bad = good;
      bad[i] = c;
      absl::StatusOr<TensorMap> t = ParseSafetensors(bad, "x");
      if (!t.ok()) {
        EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << i;
      }
    }
  }
}

TEST(Safetensors, WriterRejectsWhatItCannotWrite) {
  ScratchDir scratch;
  const std::string& dir = scratch.path();
  auto expect = [&](const TensorMap& tensors, const std::string& message) {
    absl::Status s = WriteSafetensors(dir + "/w.safetensors", tensors);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), absl::StrCat(dir, "/w.safetensors: ", message));
    EXPECT_EQ(EncodeSafetensors(tensors).status().code(), absl::StatusCode::kInvalidArgument);
  };
  Tensor one = Tensor::Scalar(DType::kF32, 1);
  expect({{"__metadata__", one}}, "tensor name '__metadata__' is reserved for metadata");
  expect({{"w", Tensor()}}, "tensor 'w': not a valid tensor (default-constructed)");
  expect({{"a", one}, {"bad\xff", one}}, "tensor 'bad\\xff': name is not valid UTF-8");
  EXPECT_FALSE(std::filesystem::exists(dir + "/w.safetensors"));
  EXPECT_EQ(WriteSafetensors(dir + "/no/such/dir/w.safetensors", {{"w", one}}).code(),
            absl::StatusCode::kNotFound);
  // Names are free-form in this format (unlike file names).
  TensorMap odd = {{"model.layers/0.wq", one}, {"", one}, {"quote\"d", one}};
  absl::StatusOr<TensorMap> back = ParseSafetensors(*EncodeSafetensors(odd), "odd");
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameTensors(odd, *back);
}

}  // namespace
}  // namespace graphjit::runtime
