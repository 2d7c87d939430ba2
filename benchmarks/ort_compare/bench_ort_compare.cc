// graphjit's half of benchmarks/ort_compare: the PP-OCRv4 recognizer (or --model, e.g.
// the TransformerEncoderLayer of scripts/export_torch_models.py) imported from ONNX and
// run through models::JitOnnxModel on the same .npy inputs ONNX Runtime gets
// (ort_run.js), one benchmark per input, compiled before timing. compare.py drives both;
// by hand:
//   bench_ort_compare --prepare=x.npy --lines=a.ppm,b.ppm --width=320   (the input)
//   OPENBLAS_NUM_THREADS=1 bench_ort_compare --inputs=x.npy --output_dir=out/
//       --benchmark_repetitions=5 --benchmark_report_aggregates_only=true   (one line)
// --output_dir writes each input's output as DIR/STEM.npy, for the max |diff| against
// ONNX Runtime's. A stateful model takes its other inputs from --feed and carries its
// state from call to call with --carry (Silero VAD: --feed=sr=sr.npy,h=h.npy,c=c.npy
// --carry=hn=h,cn=c). A model graphjit cannot import or compile is reported as the
// benchmark's error (e.g. "op Conv is not supported" before the importer had Conv).
// --page=FILE.ppm times a whole OCR page instead (page.py drives it beside ONNX Runtime).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "compiler/jit.h"
#include "ir/status_macros.h"
#include "models/ocr.h"
#include "models/ocr_page.h"
#include "models/onnx_model.h"
#include "onnx/import.h"
#include "onnx/specialize.h"
#include "runtime/npy.h"

ABSL_FLAG(std::string, fetch_dir, "",
          "where scripts/fetch_models.sh put the model (default $GRAPHJIT_FETCH_DIR or "
          "third_party/fetched)");
ABSL_FLAG(std::string, model, "",
          "the ONNX model to run (default: the recognizer in --fetch_dir); its first input "
          "gets each of --inputs");
ABSL_FLAG(std::vector<std::string>, inputs, {}, "the model's inputs x, as .npy files");
ABSL_FLAG(std::vector<std::string>, feed, {},
          "the model's other inputs, NAME=FILE.npy each (e.g. sr=sr.npy,h=h.npy,c=c.npy); "
          "inputs the importer needs as values (Silero's sr) are fixed at import");
ABSL_FLAG(std::vector<std::string>, carry, {},
          "OUT=IN pairs: output OUT of each call is input IN of the next (a stream's state: "
          "Silero's hn=h,cn=c), so the timed calls run a stream");
ABSL_FLAG(std::string, output_dir, "", "write the output for IN.npy as DIR/IN.npy");
ABSL_FLAG(std::string, prepare, "",
          "write the preprocessed batch of --lines (PPM files) padded to --width as this "
          ".npy file, and exit");
ABSL_FLAG(std::vector<std::string>, lines, {}, "text-line PPM files, for --prepare");
ABSL_FLAG(int64_t, width, 0, "the batch's width for --prepare (0: the widest line)");
ABSL_FLAG(std::string, page, "",
          "a page image (PPM): time reading it whole (detector, angle classifier, recognizer "
          "and the steps between), with each model's share as counters");
ABSL_FLAG(std::string, page_inputs, "",
          "with --page: write each model call's input of one read as DIR/det_K.npy, "
          "DIR/cls_K.npy, DIR/rec_K.npy, for ONNX Runtime's half (page.py)");

namespace graphjit {
namespace {

// The import and the Jit function every benchmark shares: one entry per input shape
// under the exact policy, so each benchmark times its own specialized code.
struct Model {
  absl::Status status;
  onnx::ImportedModel model;
  std::unique_ptr<compiler::JitFunction> function;
};

// --fetch_dir, or where scripts/fetch_models.sh puts the models.
std::string FetchDir() {
  return absl::GetFlag(FLAGS_fetch_dir).empty() ? models::OcrFetchDir(".")
                                                : absl::GetFlag(FLAGS_fetch_dir);
}

// The --model file, or the recognizer's.
std::string ModelPath() {
  if (!absl::GetFlag(FLAGS_model).empty()) return absl::GetFlag(FLAGS_model);
  return models::OcrFilesIn(FetchDir()).model;
}

// `r->model` under Jit, the exact policy: one entry per input shape.
void CompileExact(Model* r) {
  compiler::JitOptions options;
  options.policy = compiler::entries::ShapePolicy::kExact;
  absl::StatusOr<std::unique_ptr<compiler::JitFunction>> fn =
      models::JitOnnxModel(r->model, options);
  if (fn.ok()) r->function = *std::move(fn);
  r->status = fn.status();
}

Model& Shared() {
  static Model* r = [] {
    auto* r = new Model;
    absl::StatusOr<onnx::ImportedModel> model = onnx::Import(ModelPath());
    if (!model.ok()) {
      r->status = model.status();
      return r;
    }
    r->model = *std::move(model);
    CompileExact(r);
    return r;
  }();
  return *r;
}

// The call's inputs: x as the model's first input, and the --feed files.
absl::StatusOr<runtime::TensorMap> CallInputs(const runtime::Tensor& x) {
  GJ_ASSIGN_OR_RETURN(std::vector<std::string> names, onnx::ModelInputNames(ModelPath()));
  if (names.empty()) return absl::InvalidArgumentError("the model has no inputs");
  runtime::TensorMap call = {{names[0], x}};
  for (const std::string& feed : absl::GetFlag(FLAGS_feed)) {
    const size_t eq = feed.find('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--feed '", feed, "': expected NAME=FILE.npy"));
    }
    const std::string name = feed.substr(0, eq);
    if (!absl::c_linear_search(names, name)) {
      return absl::InvalidArgumentError(absl::StrCat("--feed: the model has no input '", name,
                                                     "' (its inputs: ", absl::StrJoin(names, ", "),
                                                     ")"));
    }
    GJ_ASSIGN_OR_RETURN(call[name], runtime::ReadNpy(feed.substr(eq + 1)));
  }
  return call;
}

// A model whose symbolic import fails (dims that agree only for some sizes: the OCR
// detector's sides must be multiples of 32; inputs needed as values, as --feed gives) is
// imported at each input's shape instead (onnx::ImportSpecialized), one import and Jit
// function per shape.
Model& SpecializedFor(const runtime::TensorMap& call, const runtime::Tensor& x) {
  static auto* models = new std::map<std::vector<int64_t>, std::unique_ptr<Model>>();
  std::unique_ptr<Model>& r = (*models)[x.shape()];
  if (r != nullptr) return *r;
  r = std::make_unique<Model>();
  absl::StatusOr<onnx::SpecializedImport> imported = onnx::ImportSpecialized(ModelPath(), call);
  if (!imported.ok()) {
    r->status = imported.status();
    return *r;
  }
  r->model = std::move(imported->model);
  CompileExact(r.get());
  return *r;
}

// The --carry pairs as (output index, input name) of `model`.
absl::StatusOr<std::vector<std::pair<size_t, std::string>>> Carries(
    const onnx::ImportedModel& model) {
  std::vector<std::pair<size_t, std::string>> out;
  for (const std::string& pair : absl::GetFlag(FLAGS_carry)) {
    const std::vector<std::string> parts = absl::StrSplit(pair, '=');
    const auto from =
        parts.size() == 2 ? absl::c_find(model.output_names, parts[0]) : model.output_names.end();
    if (from == model.output_names.end() || !absl::c_linear_search(model.input_names, parts[1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("--carry '", pair, "': expected OUT=IN, an output (",
                       absl::StrJoin(model.output_names, ", "), ") and an input (",
                       absl::StrJoin(model.input_names, ", "), ")"));
    }
    out.emplace_back(from - model.output_names.begin(), parts[1]);
  }
  return out;
}

void BM_Model(benchmark::State& state, const std::string& path) {
  absl::StatusOr<runtime::Tensor> x = runtime::ReadNpy(path);
  absl::StatusOr<runtime::TensorMap> call = x.ok() ? CallInputs(*x) : x.status();
  const bool fed = !absl::GetFlag(FLAGS_feed).empty();
  Model& r = !call.ok() || (!fed && Shared().status.ok()) ? Shared() : SpecializedFor(*call, *x);
  absl::Status status = call.ok() ? r.status : call.status();
  absl::StatusOr<std::vector<runtime::Tensor>> out;
  absl::StatusOr<std::vector<std::pair<size_t, std::string>>> carries = Carries(r.model);
  runtime::TensorMap inputs;
  if (status.ok()) status = carries.status();
  if (status.ok()) {
    for (const std::string& name : r.model.input_names) inputs[name] = call->at(name);
    out = r.function->Run(inputs);  // compiles: not timed
    status = out.status();
  }
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return;
  }
  if (const std::string dir = absl::GetFlag(FLAGS_output_dir); !dir.empty()) {
    std::filesystem::create_directories(dir);
    const std::string file = dir + "/" + std::filesystem::path(path).filename().string();
    if (absl::Status s = runtime::WriteNpy(file, (*out)[0]); !s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  for (auto _ : state) {
    out = r.function->Run(inputs);
    benchmark::DoNotOptimize(out);
    if (!out.ok()) break;
    for (const auto& [from, to] : *carries) inputs[to] = (*out)[from];
  }
  if (!out.ok()) state.SkipWithError(std::string(out.status().message()).c_str());
  state.counters["N"] = static_cast<double>(x->dim(0));
  if (x->rank() == 4) state.counters["W"] = static_cast<double>(x->dim(3));
}

// A model runner that adds its calls' seconds to *seconds and, while *record_dir is set,
// writes each input as RECORD_DIR/STEM_K.npy.
models::OcrModelFn Timed(models::OcrModelFn run, const std::string& stem, double* seconds,
                         const std::string* record_dir) {
  return [run = std::move(run), stem, seconds, record_dir,
          calls = 0](const runtime::Tensor& x) mutable -> absl::StatusOr<runtime::Tensor> {
    if (!record_dir->empty()) {
      GJ_RETURN_IF_ERROR(
          runtime::WriteNpy(absl::StrCat(*record_dir, "/", stem, "_", calls++, ".npy"), x));
    }
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<runtime::Tensor> y = run(x);
    *seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return y;
  };
}

// The whole page through models::OcrPageReader, compiled before timing (the first read);
// counters det_ms, cls_ms, rec_ms: each model's time in one read, the rest is pre- and
// post-processing.
void BM_Page(benchmark::State& state, const std::string& path) {
  absl::StatusOr<models::RgbImage> page = models::ReadPpm(path);
  absl::StatusOr<std::unique_ptr<models::OcrPageReader>> graphjit =
      page.ok() ? models::OcrPageReader::Create(models::OcrPageFilesIn(FetchDir())) : page.status();
  if (!graphjit.ok()) {
    state.SkipWithError(std::string(graphjit.status().message()).c_str());
    return;
  }
  double seconds[3] = {0, 0, 0};
  std::string record_dir = absl::GetFlag(FLAGS_page_inputs);
  if (!record_dir.empty()) std::filesystem::create_directories(record_dir);
  const models::OcrPageModels& m = (*graphjit)->models();
  std::unique_ptr<models::OcrPageReader> reader =
      models::OcrPageReader::WithModels({Timed(m.detect, "det", &seconds[0], &record_dir),
                                         Timed(m.classify, "cls", &seconds[1], &record_dir),
                                         Timed(m.recognize, "rec", &seconds[2], &record_dir)},
                                        (*graphjit)->alphabet());
  absl::StatusOr<std::vector<models::OcrLine>> lines = reader->Read(*page);  // compiles
  record_dir.clear();
  if (!lines.ok()) {
    state.SkipWithError(std::string(lines.status().message()).c_str());
    return;
  }
  for (double& s : seconds) s = 0;
  for (auto _ : state) {
    lines = reader->Read(*page);
    benchmark::DoNotOptimize(lines);
    if (!lines.ok()) break;
  }
  if (!lines.ok()) state.SkipWithError(std::string(lines.status().message()).c_str());
  const double reads = static_cast<double>(state.iterations());
  state.counters["lines"] = static_cast<double>(lines->size());
  state.counters["det_ms"] = seconds[0] * 1e3 / reads;
  state.counters["cls_ms"] = seconds[1] * 1e3 / reads;
  state.counters["rec_ms"] = seconds[2] * 1e3 / reads;
}

int Prepare() {
  std::vector<runtime::Tensor> lines;
  for (const std::string& file : absl::GetFlag(FLAGS_lines)) {
    absl::StatusOr<models::RgbImage> image = models::ReadPpm(file);
    absl::StatusOr<runtime::Tensor> x =
        image.ok() ? models::PreprocessOcrLine(*image) : image.status();
    if (!x.ok()) {
      std::fprintf(stderr, "bench_ort_compare: %s\n", x.status().ToString().c_str());
      return 1;
    }
    lines.push_back(*std::move(x));
  }
  absl::StatusOr<runtime::Tensor> batch = models::BatchOcrLines(lines, absl::GetFlag(FLAGS_width));
  absl::Status s =
      batch.ok() ? runtime::WriteNpy(absl::GetFlag(FLAGS_prepare), *batch) : batch.status();
  if (!s.ok()) {
    std::fprintf(stderr, "bench_ort_compare: --prepare: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace graphjit

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);  // takes the --benchmark_* flags out first
  absl::ParseCommandLine(argc, argv);
  if (!absl::GetFlag(FLAGS_prepare).empty()) return graphjit::Prepare();
  if (const std::string page = absl::GetFlag(FLAGS_page); !page.empty()) {
    benchmark::RegisterBenchmark(
        ("page/" + std::filesystem::path(page).stem().string()).c_str(),
        [page](benchmark::State& state) { graphjit::BM_Page(state, page); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  } else if (absl::GetFlag(FLAGS_inputs).empty()) {
    std::fprintf(stderr, "bench_ort_compare: give --inputs=x.npy,... or --page (or --prepare)\n");
    return 1;
  }
  // `recognizer/1x320`, or `<model stem>/<input stem>` for --model.
  const std::string prefix =
      absl::GetFlag(FLAGS_model).empty()
          ? "recognizer"
          : std::filesystem::path(absl::GetFlag(FLAGS_model)).stem().string();
  for (const std::string& path : absl::GetFlag(FLAGS_inputs)) {
    benchmark::RegisterBenchmark(
        (prefix + "/" + std::filesystem::path(path).stem().string()).c_str(),
        [path](benchmark::State& state) { graphjit::BM_Model(state, path); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
