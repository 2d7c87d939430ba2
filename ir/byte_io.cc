#include "ir/byte_io.h"

#include <cstring>

namespace graphjit::ir {

void ByteReader::Take(void* out, size_t n, absl::string_view what) {
  if (!ok()) return;
  if (rest_.size() < n) {
    Fail(what, ": truncated");
    return;
  }
  std::memcpy(out, rest_.data(), n);
  rest_.remove_prefix(n);
}

uint8_t ByteReader::U8(absl::string_view what) {
  uint8_t v = 0;
  Take(&v, 1, what);
  return v;
}

int64_t ByteReader::I64(absl::string_view what) {
  int64_t v = 0;
  Take(&v, sizeof(v), what);
  return ok() ? v : 0;
}

double ByteReader::F64(absl::string_view what) {
  double v = 0;
  Take(&v, sizeof(v), what);
  return ok() ? v : 0;
}

absl::string_view ByteReader::Raw(int64_t n, absl::string_view what) {
  if (!ok()) return {};
  if (n < 0 || static_cast<uint64_t>(n) > rest_.size()) {
    Fail(what, ": ", n, " bytes past the end");
    return {};
  }
  absl::string_view out = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return out;
}

std::string ByteReader::Str(absl::string_view what) {
  const int64_t n = I64(what);
  return std::string(Raw(n, what));
}

int64_t ByteReader::Count(absl::string_view what, int64_t min_item_bytes) {
  const int64_t n = I64(what);
  if (ok() && (n < 0 || n > static_cast<int64_t>(rest_.size()) / min_item_bytes)) {
    Fail(what, ": count ", n, " does not fit the ", rest_.size(), " bytes left");
  }
  return ok() ? n : 0;
}

int64_t ByteReader::Ranged(absl::string_view what, int64_t lo, int64_t hi) {
  const int64_t v = I64(what);
  if (ok() && (v < lo || v > hi)) Fail(what, " ", v, " out of range [", lo, ", ", hi, "]");
  return ok() ? v : lo;
}

void ByteWriter::Sym(const SymExpr& e) {
  if (std::optional<int64_t> c = e.AsConstant()) {
    U8(0);
    I64(*c);
  } else {
    U8(1);
    Str(e.ToString());
  }
}

SymExpr ByteReader::Sym(absl::string_view what) {
  if (U8(what) == 0) return SymExpr(I64(what));
  const std::string text = Str(what);
  if (!ok()) return SymExpr();
  absl::StatusOr<SymExpr> e = ParseSymExpr(text);
  if (!e.ok()) {
    Fail(what, " `", text, "`: ", e.status().message());
    return SymExpr();
  }
  return *std::move(e);
}

void ByteReader::ExpectEnd() {
  if (ok() && !rest_.empty()) Fail(rest_.size(), " bytes past the end");
}

}  // namespace graphjit::ir
