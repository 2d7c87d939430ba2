// .safetensors reading and writing: an 8-byte little-endian header length, a JSON header
// (name -> dtype, shape, data_offsets) and the raw data. Every field of a file is checked
// before it is used, so a malformed or hostile file is an error, never an out-of-bounds read.
#include "runtime/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"
#include "nlohmann/json.hpp"

namespace graphjit::runtime {
namespace {

// Tensor data is copied byte for byte, so the host must share the format's byte order.
static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

using nlohmann::json;

// The reference implementation's limit: a longer header is almost surely not a real file,
// and refusing it bounds the memory a bad file can make us allocate before any check.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
constexpr char kMetadataKey[] = "__metadata__";
constexpr char kSupported[] =
    "supported: F64, F32, I64, I32, BOOL; BF16 and F16 are widened to f32";

enum class Widen { kNo, kBF16, kF16 };

// A dtype as stored in a file and the dtype it is loaded as.
struct FileDType {
  const char* name;
  int64_t size;
  DType dtype;
  Widen widen;
};

constexpr FileDType kFileDTypes[] = {
    {"F64", 8, DType::kF64, Widen::kNo},  {"F32", 4, DType::kF32, Widen::kNo},
    {"I64", 8, DType::kI64, Widen::kNo},  {"BOOL", 1, DType::kBool, Widen::kNo},
    {"I32", 4, DType::kI32, Widen::kNo},  {"BF16", 2, DType::kF32, Widen::kBF16},
    {"F16", 2, DType::kF32, Widen::kF16},
};

const FileDType* FindFileDType(absl::string_view name) {
  for (const FileDType& d : kFileDTypes) {
    if (name == d.name) return &d;
  }
  return nullptr;
}

const char* NativeName(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return "F64";
    case DType::kF32:
      return "F32";
    case DType::kI64:
      return "I64";
    case DType::kBool:
      return "BOOL";
    case DType::kI32:
      return "I32";
  }
  return "?";
}

// Names are printed as they are, except for bytes that would garble a message.
std::string Quote(absl::string_view name) { return absl::StrCat("'", absl::CHexEscape(name), "'"); }

absl::Status Bad(absl::string_view what, absl::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", msg));
}
absl::Status BadTensor(absl::string_view what, absl::string_view name, absl::string_view msg) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": tensor ", Quote(name), ": ", msg));
}

// A JSON value for an error message, cut short: a bad file may hold a huge one.
std::string Short(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 64) s = absl::StrCat(s.substr(0, 60), " ...");
  return s;
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

// An integer JSON value as int64 (nullopt for anything else, or one beyond int64).
std::optional<int64_t> AsInt64(const json& v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return std::nullopt;
}

// bf16 is the top half of an f32, so widening is a shift (NaN payloads included).
float BF16ToFloat(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

// IEEE binary16 -> binary32, exact for every value.
float F16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) {  // inf, or NaN with its payload kept
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, a normal f32
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign != 0 ? -magnitude : magnitude;
  }
  // Rebias the exponent from 15 to 127.
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

// Where the bytes come from: a string in memory or an open file. Callers only ask for
// ranges they have checked against size().
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual uint64_t size() const = 0;
  // Copies [offset, offset + n) to `dst`; false on an I/O error.
  virtual bool Read(uint64_t offset, size_t n, void* dst) = 0;
};

class StringSource : public ByteSource {
 public:
  explicit StringSource(absl::string_view bytes) : bytes_(bytes) {}
  uint64_t size() const override { return bytes_.size(); }
  bool Read(uint64_t offset, size_t n, void* dst) override {
    if (n > 0) std::memcpy(dst, bytes_.data() + offset, n);
    return true;
  }

 private:
  absl::string_view bytes_;
};

class FileSource : public ByteSource {
 public:
  FileSource(std::ifstream in, uint64_t size) : in_(std::move(in)), size_(size) {}
  uint64_t size() const override { return size_; }
  bool Read(uint64_t offset, size_t n, void* dst) override {
    if (n == 0) return true;
    in_.seekg(static_cast<std::streamoff>(offset));
    in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(n));
    return static_cast<bool>(in_);
  }

 private:
  std::ifstream in_;
  uint64_t size_;
};

// One checked header entry. Offsets are relative to the start of the data.
struct Entry {
  std::string name;
  const FileDType* dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// Parses the header JSON. nlohmann keeps the last of duplicate keys silently, which would
// let a file hide a tensor (or a second dtype) from us: the callback sees every key of
// every object and records the first duplicate.
absl::StatusOr<json> ParseHeaderJson(const std::string& text, absl::string_view what) {
  std::vector<absl::flat_hash_set<std::string>> open_objects;
  std::string entry;  // the top-level key whose value is being parsed
  std::optional<std::string> duplicate;
  json::parser_callback_t callback = [&](int depth, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (event == json::parse_event_t::key && !open_objects.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (depth == 1) entry = key;
      if (!open_objects.back().insert(key).second && !duplicate) {
        duplicate = depth == 1
                        ? absl::StrCat("duplicate tensor name ", Quote(key))
                        : absl::StrCat("tensor ", Quote(entry), ": duplicate key ", Quote(key));
      }
    }
    return true;
  };
  json header;
  // The rest of graphjit reports errors as Status; nlohmann's exceptions stop here.
  try {
    header = json::parse(text, callback);
  } catch (const json::exception& e) {
    return Bad(what, absl::StrCat("malformed JSON header: ", e.what()));
  }
  if (duplicate) return Bad(what, *duplicate);
  if (!header.is_object()) {
    return Bad(what, absl::StrCat("header is not a JSON object (got ", Short(header), ")"));
  }
  return header;
}

absl::StatusOr<Entry> ParseEntry(const std::string& name, const json& v, uint64_t data_size,
                                 absl::string_view what) {
  if (!v.is_object()) {
    return BadTensor(what, name,
                     absl::StrCat("entry is not an object with dtype, shape and data_offsets "
                                  "(got ",
                                  Short(v), ")"));
  }
  Entry e;
  e.name = name;
  auto dtype = v.find("dtype");
  if (dtype == v.end() || !dtype->is_string()) {
    return BadTensor(what, name,
                     dtype == v.end() ? "missing \"dtype\""
                                      : absl::StrCat("\"dtype\" is not a string: ", Short(*dtype)));
  }
  const std::string& dtype_name = dtype->get_ref<const std::string&>();
  e.dtype = FindFileDType(dtype_name);
  if (e.dtype == nullptr) {
    return BadTensor(what, name,
                     absl::StrCat("unsupported dtype ", Quote(dtype_name), " (", kSupported, ")"));
  }

  auto shape = v.find("shape");
  if (shape == v.end() || !shape->is_array()) {
    return BadTensor(what, name,
                     shape == v.end() ? "missing \"shape\""
                                      : absl::StrCat("\"shape\" is not an array: ", Short(*shape)));
  }
  for (const json& d : *shape) {
    std::optional<int64_t> dim = AsInt64(d);
    if (!dim) return BadTensor(what, name, absl::StrCat("bad dim ", Short(d), " in \"shape\""));
    e.shape.push_back(*dim);
  }
  // Element count and byte size, refusing overflow (as Tensor::Empty will, in the same
  // dim order).
  int64_t numel = 1;
  const int64_t limit = std::numeric_limits<int64_t>::max() / e.dtype->size;
  for (int64_t d : e.shape) {
    if (d < 0) {
      return BadTensor(what, name,
                       absl::StrCat("negative dim ", d, " in shape ", ShapeString(e.shape)));
    }
    if (d != 0 && numel > limit / d) {
      return BadTensor(what, name,
                       absl::StrCat("shape ", ShapeString(e.shape), " has too many elements"));
    }
    numel *= d;
  }
  const uint64_t nbytes = static_cast<uint64_t>(numel) * static_cast<uint64_t>(e.dtype->size);

  auto offsets = v.find("data_offsets");
  if (offsets == v.end()) return BadTensor(what, name, "missing \"data_offsets\"");
  std::optional<int64_t> begin, end;
  if (offsets->is_array() && offsets->size() == 2) {
    begin = AsInt64((*offsets)[0]);
    end = AsInt64((*offsets)[1]);
  }
  if (!begin || !end || *begin < 0 || *end < 0) {
    return BadTensor(what, name,
                     absl::StrCat("\"data_offsets\" must be two non-negative integers "
                                  "[begin, end], got ",
                                  Short(*offsets)));
  }
  e.begin = static_cast<uint64_t>(*begin);
  e.end = static_cast<uint64_t>(*end);
  std::string range = absl::StrCat("data_offsets [", e.begin, ", ", e.end, "]");
  if (e.begin > e.end) return BadTensor(what, name, absl::StrCat(range, " have begin > end"));
  if (e.end > data_size) {
    return BadTensor(what, name,
                     absl::StrCat(range, " run past the end of the data (", data_size, " bytes)"));
  }
  if (e.end - e.begin != nbytes) {
    return BadTensor(what, name,
                     absl::StrCat(range, " hold ", e.end - e.begin, " bytes, but ", e.dtype->name,
                                  ShapeString(e.shape), " needs ", nbytes));
  }
  return e;
}

// Reads one checked entry's data into a new tensor of its load dtype.
absl::StatusOr<Tensor> LoadEntry(const Entry& e, uint64_t data_start, ByteSource& source,
                                 absl::string_view what) {
  absl::StatusOr<Tensor> t = Tensor::Empty(e.dtype->dtype, e.shape);
  if (!t.ok()) return BadTensor(what, e.name, t.status().message());
  const size_t nbytes = static_cast<size_t>(e.end - e.begin);
  auto read_failed = [&] {
    return BadTensor(what, e.name, absl::StrCat("read of ", nbytes, " bytes failed"));
  };
  if (e.dtype->widen == Widen::kNo) {
    if (!source.Read(data_start + e.begin, nbytes, t->raw_data())) return read_failed();
    if (e.dtype->dtype == DType::kBool) {
      // Any other byte would be a bool with an undefined value.
      const uint8_t* bytes = static_cast<const uint8_t*>(t->raw_data());
      for (size_t i = 0; i < nbytes; ++i) {
        if (bytes[i] > 1) {
          return BadTensor(what, e.name,
                           absl::StrCat("BOOL element ", i, " is byte ", static_cast<int>(bytes[i]),
                                        " (expected 0 or 1)"));
        }
      }
    }
    return t;
  }
  std::vector<uint16_t> halves(static_cast<size_t>(t->numel()));
  if (!source.Read(data_start + e.begin, nbytes, halves.data())) return read_failed();
  float* out = t->data<float>();
  for (size_t i = 0; i < halves.size(); ++i) {
    out[i] = e.dtype->widen == Widen::kBF16 ? BF16ToFloat(halves[i]) : F16ToFloat(halves[i]);
  }
  return t;
}

absl::StatusOr<TensorMap> Parse(ByteSource& source, absl::string_view what) {
  const uint64_t size = source.size();
  if (size < 8) {
    return Bad(what, absl::StrCat("file has ", size,
                                  " bytes, too short for a .safetensors header (8-byte length)"));
  }
  uint8_t length_bytes[8];
  if (!source.Read(0, 8, length_bytes)) return Bad(what, "cannot read the header length");
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | length_bytes[i];
  if (header_len == 0) return Bad(what, "header length is 0 (expected a JSON object)");
  if (header_len > kMaxHeaderBytes) {
    return Bad(what, absl::StrCat("header length ", header_len, " is over the limit of ",
                                  kMaxHeaderBytes, " bytes"));
  }
  if (header_len > size - 8) {
    return Bad(what, absl::StrCat("header length ", header_len, " runs past the end of the file (",
                                  size, " bytes)"));
  }
  std::string text(static_cast<size_t>(header_len), '\0');
  if (!source.Read(8, text.size(), text.data())) return Bad(what, "cannot read the header");
  GJ_ASSIGN_OR_RETURN(json header, ParseHeaderJson(text, what));

  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey) {
      // Free-form strings (e.g. {"format": "pt"}); nothing here changes how we load.
      if (!value.is_object()) {
        return Bad(what,
                   absl::StrCat("\"__metadata__\" is not an object (got ", Short(value), ")"));
      }
      continue;
    }
    GJ_ASSIGN_OR_RETURN(Entry e, ParseEntry(name, value, data_size, what));
    entries.push_back(std::move(e));
  }

  // Two tensors sharing bytes would alias in the file; the format forbids it. Empty ranges
  // hold nothing and cannot overlap.
  std::vector<const Entry*> by_offset;
  for (const Entry& e : entries) {
    if (e.end > e.begin) by_offset.push_back(&e);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](const Entry* a, const Entry* b) {
    return std::tie(a->begin, a->end, a->name) < std::tie(b->begin, b->end, b->name);
  });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const Entry& a = *by_offset[i - 1];
    const Entry& b = *by_offset[i];
    if (b.begin < a.end) {
      return Bad(what, absl::StrCat("tensors ", Quote(a.name), " and ", Quote(b.name),
                                    " overlap (data_offsets [", a.begin, ", ", a.end, "] and [",
                                    b.begin, ", ", b.end, "])"));
    }
  }

  TensorMap tensors;
  int widened = 0;
  for (const Entry& e : entries) {
    GJ_ASSIGN_OR_RETURN(tensors[e.name], LoadEntry(e, data_start, source, what));
    if (e.dtype->widen != Widen::kNo) ++widened;
  }
  if (widened > 0) {
    // One write, so lines of concurrent loads do not interleave.
    std::string line = absl::StrCat("graphjit[weights]: ", what, ": widened ", widened,
                                    " BF16/F16 tensors to f32\n");
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  return tensors;
}

// The header and the order of the data of a file to write.
struct Plan {
  std::string header;  // padded with spaces to a multiple of 8 bytes
  std::vector<std::pair<std::string, const Tensor*>> order;
};

absl::StatusOr<Plan> MakePlan(const TensorMap& tensors, absl::string_view what) {
  Plan plan;
  for (const auto& [name, t] : tensors) plan.order.emplace_back(name, &t);
  // As the reference writer: larger elements first, then by name. With the header padded
  // to 8 bytes this aligns each tensor's data to its element size, and the data is packed
  // without gaps, as strict readers require.
  std::sort(plan.order.begin(), plan.order.end(), [](const auto& a, const auto& b) {
    int64_t sa = ir::DTypeSize(a.second->dtype()), sb = ir::DTypeSize(b.second->dtype());
    return sa != sb ? sa > sb : a.first < b.first;
  });
  json header = json::object();
  uint64_t offset = 0;
  for (const auto& [name, t] : plan.order) {
    if (name == kMetadataKey) {
      return Bad(what, absl::StrCat("tensor name ", Quote(name), " is reserved for metadata"));
    }
    if (!t->valid()) return BadTensor(what, name, "not a valid tensor (default-constructed)");
    json entry = json::object();
    entry["dtype"] = NativeName(t->dtype());
    entry["shape"] = json::array();
    for (int64_t d : t->shape()) entry["shape"].push_back(d);
    uint64_t nbytes = static_cast<uint64_t>(t->nbytes());
    entry["data_offsets"] = json::array({offset, offset + nbytes});
    offset += nbytes;
    header[name] = std::move(entry);
  }
  try {
    plan.header = header.dump();
  } catch (const json::exception&) {
    // Only a name can be invalid UTF-8: find it for the message.
    for (const auto& [name, t] : plan.order) {
      try {
        (void)json(name).dump();
      } catch (const json::exception&) {
        return BadTensor(what, name, "name is not valid UTF-8");
      }
    }
    return Bad(what, "cannot encode the header");
  }
  plan.header.append((8 - plan.header.size() % 8) % 8, ' ');
  return plan;
}

std::string LengthBytes(uint64_t n) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

}  // namespace

absl::StatusOr<TensorMap> ParseSafetensors(absl::string_view bytes, absl::string_view what) {
  StringSource source(bytes);
  return Parse(source, what);
}

absl::StatusOr<TensorMap> ReadSafetensors(const std::string& path) {
  std::error_code ec;
  std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status))
    return absl::NotFoundError(absl::StrCat(path, ": not found"));
  if (!std::filesystem::is_regular_file(status)) return Bad(path, "not a regular file");
  uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(path, ": cannot stat: ", ec.message()));
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  FileSource source(std::move(in), size);
  return Parse(source, path);
}

absl::StatusOr<std::string> EncodeSafetensors(const TensorMap& tensors) {
  GJ_ASSIGN_OR_RETURN(Plan plan, MakePlan(tensors, "safetensors"));
  std::string out = LengthBytes(plan.header.size()) + plan.header;
  for (const auto& [name, t] : plan.order) {
    out.append(static_cast<const char*>(t->raw_data()), static_cast<size_t>(t->nbytes()));
  }
  return out;
}

absl::Status WriteSafetensors(const std::string& path, const TensorMap& tensors) {
  GJ_ASSIGN_OR_RETURN(Plan plan, MakePlan(tensors, path));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::NotFoundError(absl::StrCat(path, ": cannot open for writing"));
  // Tensor by tensor, so writing never needs a second copy of the weights in memory.
  std::string length = LengthBytes(plan.header.size());
  out.write(length.data(), 8);
  out.write(plan.header.data(), static_cast<std::streamsize>(plan.header.size()));
  for (const auto& [name, t] : plan.order) {
    out.write(static_cast<const char*>(t->raw_data()), static_cast<std::streamsize>(t->nbytes()));
  }
  out.close();
  if (!out) return absl::InternalError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

}  // namespace graphjit::runtime
