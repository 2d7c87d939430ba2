// Runs a Python exporter of the repository (scripts/export_torch_models.py,
// benchmarks/zoo/export.py) into a fresh temporary directory, for the tests that import
// what it writes.
#ifndef GRAPHJIT_TESTS_MODELS_RUN_EXPORTER_H_
#define GRAPHJIT_TESTS_MODELS_RUN_EXPORTER_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace graphjit::models {

// /usr/bin/python3 SOURCE_DIR/`script` DIR, DIR a new directory named after `tag`; DIR,
// or "" when the exporter exits with status 2 (its torch or torchvision is missing: the
// caller skips). Any other failure is a test failure naming DIR.log.
inline std::string RunExporter(const std::string& script, const std::string& tag) {
  std::string path = absl::StrCat(::testing::TempDir(), "/graphjit_", tag, "_", ::getpid());
  std::filesystem::remove_all(path);
  const std::string command = absl::StrCat("/usr/bin/python3 ", GRAPHJIT_SOURCE_DIR, "/", script,
                                           " ", path, " > ", path, ".log 2>&1");
  const int status = std::system(command.c_str());
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) return "";
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ADD_FAILURE() << command << " failed (status " << status << "); see " << path << ".log";
  }
  return path;
}

}  // namespace graphjit::models

#endif  // GRAPHJIT_TESTS_MODELS_RUN_EXPORTER_H_
