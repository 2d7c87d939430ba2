// A minimal JSON writer for the tools' --json output (objects, arrays, numbers, strings).
#ifndef GRAPHJIT_TOOLS_JSON_WRITER_H_
#define GRAPHJIT_TOOLS_JSON_WRITER_H_

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphjit::tools {

// Builds JSON text in order: Begin/End pairs nest, Key precedes each member of an object.
class JsonWriter {
 public:
  JsonWriter& BeginObject() { return Open('{'); }
  JsonWriter& EndObject() { return Close('}'); }
  JsonWriter& BeginArray() { return Open('['); }
  JsonWriter& EndArray() { return Close(']'); }
  JsonWriter& Key(const std::string& k) {
    Comma();
    out_ += Quote(k) + ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& Value(double v) {
    // JSON has no NaN or infinity: those become null.
    return Raw(std::isfinite(v) ? absl::StrFormat("%.17g", v) : "null");
  }
  JsonWriter& Value(int64_t v) { return Raw(absl::StrCat(v)); }
  JsonWriter& Value(int v) { return Raw(absl::StrCat(v)); }
  JsonWriter& Value(bool v) { return Raw(v ? "true" : "false"); }
  JsonWriter& Value(const std::string& v) { return Raw(Quote(v)); }
  JsonWriter& Value(const char* v) { return Raw(Quote(v)); }
  template <typename T>
  JsonWriter& Member(const std::string& k, const T& v) {
    return Key(k).Value(v);
  }
  template <typename T>
  JsonWriter& Array(const std::string& k, const std::vector<T>& values) {
    Key(k).BeginArray();
    for (const T& v : values) Value(v);
    return EndArray();
  }
  const std::string& str() const { return out_; }

 private:
  static std::string Quote(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') {
        q += '\\';
        q += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        q += absl::StrFormat("\\u%04x", c);
      } else {
        q += c;
      }
    }
    return q + "\"";
  }
  void Comma() {
    if (!after_key_ && !first_.empty() && !first_.back()) out_ += ", ";
    if (!after_key_ && !first_.empty()) first_.back() = false;
  }
  JsonWriter& Raw(const std::string& s) {
    Comma();
    after_key_ = false;
    out_ += s;
    return *this;
  }
  JsonWriter& Open(char c) {
    Comma();
    after_key_ = false;
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& Close(char c) {
    out_ += c;
    first_.pop_back();
    return *this;
  }

  std::string out_;
  std::vector<bool> first_;  // per open container: no member written yet
  bool after_key_ = false;
};

}  // namespace graphjit::tools

#endif  // GRAPHJIT_TOOLS_JSON_WRITER_H_
