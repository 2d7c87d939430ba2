#include "tools/study_ocr_common.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "compiler/compiled/graph_store.h"

namespace graphjit::study {
namespace {

std::string ShellQuote(const std::string& s) {
  return "'" + absl::StrReplaceAll(s, {{"'", "'\\''"}}) + "'";
}

// A scratch directory removed with everything in it when this goes out of scope.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "graphjit-ocr.XXXXXX");
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

absl::StatusOr<models::RgbImage> RenderWithScript(const std::string& script,
                                                  const std::vector<std::string>& args) {
  ScratchDir dir;
  if (dir.path().empty()) return absl::InternalError("cannot create a scratch dir in /tmp");
  const std::string ppm = dir.path() + "/out.ppm";
  const std::string err = dir.path() + "/render.err";
  // The script's shebang names /usr/bin/python3, the one that sees Debian's PIL.
  std::string command = absl::StrCat("/usr/bin/python3 ", ShellQuote(script));
  for (const std::string& a : args) absl::StrAppend(&command, " ", ShellQuote(a));
  absl::StrAppend(&command, " ", ppm, " 2> ", err);
  if (std::system(command.c_str()) != 0) {
    std::ifstream in(err);
    std::stringstream message;
    message << in.rdbuf();
    return absl::UnavailableError(
        absl::StrCat(script, " could not render (", absl::StripAsciiWhitespace(message.str()),
                     "); it needs /usr/bin/python3 with python3-pil and fonts-dejavu-core "
                     "(scripts/bootstrap.sh installs them)"));
  }
  return models::ReadPpm(ppm);
}

compiler::JitOptions OcrJitOptions(const CodeSource& source, compiler::entries::ShapePolicy policy,
                                   const compiler::CompileEnv* env) {
  namespace entries = compiler::entries;
  compiler::JitOptions jit;
  jit.policy = entries::PadsInputs(policy) ? entries::ShapePolicy::kExact : policy;
  jit.compile.env = env;
  jit.compile.codegen.tier = source.tier;
  if (!source.warm) jit.store = std::make_shared<compiler::GraphStore>();
  return jit;
}

absl::Status SkipOcrSection(absl::string_view key, const std::string& why,
                            tools::JsonWriter& json) {
  std::printf("  skipped: %s\n\n", why.c_str());
  json.Key(std::string(key)).BeginObject().Member("skipped", why).EndObject();
  return absl::OkStatus();
}

}  // namespace graphjit::study
