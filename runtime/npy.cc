#include "runtime/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ir/status_macros.h"

namespace graphjit::runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

absl::Status Bad(absl::string_view what, absl::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", msg));
}

// The value text of `key` in the header dict: `'descr': '<f8'` -> `'<f8'`.
std::optional<std::string> DictValue(absl::string_view header, absl::string_view key) {
  std::string quoted = absl::StrCat("'", key, "'");
  size_t at = header.find(quoted);
  if (at == absl::string_view::npos) return std::nullopt;
  size_t colon = header.find(':', at + quoted.size());
  if (colon == absl::string_view::npos) return std::nullopt;
  absl::string_view rest = header.substr(colon + 1);
  rest = absl::StripLeadingAsciiWhitespace(rest);
  if (rest.empty()) return std::nullopt;
  size_t end;
  if (rest[0] == '(') {
    end = rest.find(')');
    if (end == absl::string_view::npos) return std::nullopt;
    return std::string(rest.substr(0, end + 1));
  }
  if (rest[0] == '\'') {
    end = rest.find('\'', 1);
    if (end == absl::string_view::npos) return std::nullopt;
    return std::string(rest.substr(0, end + 1));
  }
  end = rest.find_first_of(",}");
  if (end == absl::string_view::npos) return std::nullopt;
  return std::string(absl::StripTrailingAsciiWhitespace(rest.substr(0, end)));
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes, absl::string_view what) {
  if (bytes.size() < kMagicLen + 4 ||
      bytes.substr(0, kMagicLen) != absl::string_view(kMagic, kMagicLen)) {
    return Bad(what, "not a .npy file (expected the \\x93NUMPY magic)");
  }
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, pos = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return Bad(what, "truncated header");
    for (int i = 3; i >= 0; --i)
      header_len = (header_len << 8) | static_cast<uint8_t>(bytes[8 + i]);
    pos = 12;
  } else {
    return Bad(what, absl::StrCat("unsupported .npy format version ", major, " (expected 1-3)"));
  }
  if (bytes.size() < pos + header_len) return Bad(what, "truncated header");
  absl::string_view header = bytes.substr(pos, header_len);
  pos += header_len;

  std::optional<std::string> descr = DictValue(header, "descr");
  std::optional<std::string> fortran = DictValue(header, "fortran_order");
  std::optional<std::string> shape_text = DictValue(header, "shape");
  if (!descr || !fortran || !shape_text) {
    return Bad(what, "header lacks 'descr', 'fortran_order' or 'shape'");
  }
  if (*fortran != "False")
    return Bad(what, "Fortran-ordered arrays are not supported (save with C order)");
  DType dtype;
  if (*descr == "'<f8'") {
    dtype = DType::kF64;
  } else if (*descr == "'<f4'") {
    dtype = DType::kF32;
  } else if (*descr == "'<i8'") {
    dtype = DType::kI64;
  } else if (*descr == "'|b1'") {
    dtype = DType::kBool;
  } else if (*descr == "'<i4'") {
    dtype = DType::kI32;
  } else {
    return Bad(what, absl::StrCat("unsupported dtype ", *descr,
                                  " (expected '<f8', '<f4', '<i8', '<i4' or '|b1')"));
  }
  std::vector<int64_t> shape;
  absl::string_view dims = absl::StripSuffix(absl::StripPrefix(*shape_text, "("), ")");
  for (absl::string_view d : absl::StrSplit(dims, ',', absl::SkipWhitespace())) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(d), &v) || v < 0 || v > (int64_t{1} << 40)) {
      return Bad(what, absl::StrCat("bad shape ", *shape_text));
    }
    shape.push_back(v);
  }
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > (int64_t{1} << 40) / d)
      return Bad(what, absl::StrCat("shape ", *shape_text, " is too large"));
    count *= d;
  }
  size_t need = static_cast<size_t>(count) * ir::DTypeSize(dtype);
  if (bytes.size() - pos != need) {
    return Bad(what, absl::StrCat("data has ", bytes.size() - pos, " bytes, shape ", *shape_text,
                                  " of ", ir::DTypeName(dtype), " needs ", need));
  }
  if (dtype == DType::kBool) {
    // numpy writes bools as bytes 0 and 1; any other byte would load as a bool with an
    // undefined value (reading it is undefined behaviour), so it is rejected.
    for (size_t i = 0; i < need; ++i) {
      uint8_t byte = static_cast<uint8_t>(bytes[pos + i]);
      if (byte > 1) {
        return Bad(what, absl::StrCat("bool element ", i, " is byte ", static_cast<int>(byte),
                                      " (expected 0 or 1)"));
      }
    }
  }
  GJ_ASSIGN_OR_RETURN(Tensor t, Tensor::Empty(dtype, shape));
  if (need > 0) std::memcpy(t.raw_data(), bytes.data() + pos, need);
  return t;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream buf;
  buf << in.rdbuf();
  return ParseNpy(buf.str(), path);
}

std::string EncodeNpy(const Tensor& t) {
  const char* descr = t.dtype() == DType::kF64   ? "<f8"
                      : t.dtype() == DType::kF32 ? "<f4"
                      : t.dtype() == DType::kI64 ? "<i8"
                      : t.dtype() == DType::kI32 ? "<i4"
                                                 : "|b1";
  std::string shape = absl::StrJoin(t.shape(), ", ");
  if (t.rank() == 1) shape += ",";
  std::string header =
      absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (", shape, "), }");
  // Pad with spaces so the data starts 64-byte aligned, ending the header with '\n'.
  size_t total = kMagicLen + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicLen);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(t.raw_data()), static_cast<size_t>(t.nbytes()));
  return out;
}

absl::Status WriteNpy(const std::string& path, const Tensor& tensor) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::NotFoundError(absl::StrCat(path, ": cannot open for writing"));
  std::string bytes = EncodeNpy(tensor);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) return absl::InternalError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

}  // namespace graphjit::runtime
