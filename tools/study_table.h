// Plain-text tables and time formatting for the study tool.
#ifndef GRAPHJIT_TOOLS_STUDY_TABLE_H_
#define GRAPHJIT_TOOLS_STUDY_TABLE_H_

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"

namespace graphjit::tools {

// `1.23 ms`, `45.6 us`, `2.01 s`.
inline std::string FormatSeconds(double s) {
  if (s >= 1) return absl::StrFormat("%.2f s", s);
  if (s >= 1e-3) return absl::StrFormat("%.2f ms", s * 1e3);
  if (s >= 1e-6) return absl::StrFormat("%.1f us", s * 1e6);
  return absl::StrFormat("%.0f ns", s * 1e9);
}

class Table {
 public:
  explicit Table(std::vector<std::string> header) : rows_{std::move(header)} {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print() const {
    std::vector<size_t> width(rows_[0].size(), 0);
    for (const auto& r : rows_) {
      for (size_t i = 0; i < r.size() && i < width.size(); ++i)
        width[i] = std::max(width[i], r[i].size());
    }
    for (size_t r = 0; r < rows_.size(); ++r) {
      std::string line = " ";
      for (size_t i = 0; i < rows_[r].size(); ++i) {
        line += absl::StrFormat(" %-*s", static_cast<int>(width[i]), rows_[r][i]);
      }
      std::printf("%s\n", line.c_str());
      if (r == 0) {
        std::string rule = " ";
        for (size_t w : width) rule += " " + std::string(w, '-');
        std::printf("%s\n", rule.c_str());
      }
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace graphjit::tools

#endif  // GRAPHJIT_TOOLS_STUDY_TABLE_H_
