// Fixed-width little-endian bytes for the compiler's private records (the lowered program
// and the graph-level record of the disk cache): a writer, and a reader that never reads
// past the end and refuses what does not fit, so a damaged record is an error, not a crash.
#ifndef GRAPHJIT_IR_BYTE_IO_H_
#define GRAPHJIT_IR_BYTE_IO_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/sym_expr.h"

namespace graphjit::ir {

class ByteWriter {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void I64(int64_t v) { Raw(&v, sizeof(v)); }
  void F64(double v) { Raw(&v, sizeof(v)); }
  // Length, then the bytes.
  void Str(absl::string_view s) {
    I64(static_cast<int64_t>(s.size()));
    Raw(s.data(), s.size());
  }
  void Raw(const void* data, size_t n) { out_.append(static_cast<const char*>(data), n); }
  // Zeros up to a multiple of `alignment` bytes from the start.
  void Align(size_t alignment) {
    out_.append((alignment - out_.size() % alignment) % alignment, 0);
  }
  // A constant as its value, anything else as its text (most dims are constants, and
  // reading a value is much cheaper than parsing text).
  void Sym(const SymExpr& e);
  size_t size() const { return out_.size(); }
  std::string Take() && { return std::move(out_); }

 private:
  std::string out_;
};

// Reads what ByteWriter wrote. The first failure sticks (later reads return zeros and
// empty strings) and is reported once as DataLoss, prefixed with `what_record` and naming
// the field being read.
class ByteReader {
 public:
  ByteReader(absl::string_view bytes, std::string what_record)
      : size_(bytes.size()), rest_(bytes), record_(std::move(what_record)) {}

  uint8_t U8(absl::string_view what);
  int64_t I64(absl::string_view what);
  double F64(absl::string_view what);
  std::string Str(absl::string_view what);
  // Skips what ByteWriter::Align wrote (the same multiple from the start).
  void Align(size_t alignment, absl::string_view what) {
    const size_t at = size_ - rest_.size();
    Raw(static_cast<int64_t>((alignment - at % alignment) % alignment), what);
  }
  // The next n bytes (a view into the input), or empty on failure.
  absl::string_view Raw(int64_t n, absl::string_view what);
  // What ByteWriter::Sym wrote.
  SymExpr Sym(absl::string_view what);
  // A count of items of at least `min_item_bytes` each, refused when the bytes left
  // cannot hold that many (so damage never asks for a huge allocation).
  int64_t Count(absl::string_view what, int64_t min_item_bytes);
  // An integer in [lo, hi]; else a failure naming `what`, and lo.
  int64_t Ranged(absl::string_view what, int64_t lo, int64_t hi);
  // A one-byte enum with `count` values.
  template <typename Enum>
  Enum EnumValue(absl::string_view what, int count) {
    const int64_t v = U8(what);
    if (ok() && v >= count) {
      Fail(what, " ", v, " out of range (", count, " values)");
      return Enum{};
    }
    return static_cast<Enum>(v);
  }
  // Fails unless every byte was read.
  void ExpectEnd();

  template <typename... Args>
  void Fail(const Args&... args);
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

 private:
  void Take(void* out, size_t n, absl::string_view what);

  const size_t size_;
  absl::string_view rest_;
  const std::string record_;
  absl::Status status_;
};

template <typename... Args>
void ByteReader::Fail(const Args&... args) {
  if (status_.ok()) status_ = absl::DataLossError(absl::StrCat(record_, ": ", args...));
}

}  // namespace graphjit::ir

#endif  // GRAPHJIT_IR_BYTE_IO_H_
