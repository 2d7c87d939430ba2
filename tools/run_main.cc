// graphjit-run: runs a model spec, a textual IR file or an ONNX model on .npy (or ONNX
// TensorProto .pb) inputs and writes the outputs as .npy files.
//   graphjit-run decode --dim S=64 --bind P=63 --mode=jit --output-dir out/
//   graphjit-run g.gir --input x=@x.npy --weights weights/ --output-dir out/
//   graphjit-run model.onnx --input x=@x.npy --output-dir out/
//   graphjit-run decode --weights model.safetensors --mode=eager
//   graphjit-run decode:seed=3 --save-weights model.safetensors
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/compiled/compile_env.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/entries/policy.h"
#include "compiler/jit.h"
#include "compiler/store/cache_log.h"
#include "ir/parser.h"
#include "ir/status_macros.h"
#include "models/jit_model.h"
#include "models/model.h"
#include "models/onnx_model.h"
#include "onnx/import.h"
#include "onnx/specialize.h"
#include "onnx/tensor_proto.h"
#include "runtime/npy.h"
#include "runtime/weights.h"
#include "tools/flag_util.h"
#include "tools/input_flag.h"
#include "tools/weights_flag.h"

ABSL_FLAG(std::vector<std::string>, input, {},
          "NAME=@FILE.npy (or an ONNX TensorProto NAME=@FILE.pb) for a graph input (repeat "
          "the flag or separate with commas); a "
          "model's inputs not given are seeded random ones (--seed, --dim)");
ABSL_FLAG(std::string, weights, "",
          "DIR of NAME.npy files or FILE.safetensors: the weights every mode computes with, "
          "exactly one tensor per parameter with its dtype and shape (models default to "
          "their seeded weights; an IR file needs them)");
ABSL_FLAG(std::string, param_dir, "", "the old name of --weights (give one of the two)");
ABSL_FLAG(std::string, save_weights, "",
          "write the weights the run would use (a model's seeded ones, or --weights) to DIR "
          "as NAME.npy files or to FILE.safetensors, and exit without running");
ABSL_FLAG(std::vector<std::string>, bind, {}, "call symbols, e.g. --bind P=63");
ABSL_FLAG(std::vector<std::string>, dim, {},
          "for models: fix dynamic dims and size the example inputs, e.g. --dim S=64");
ABSL_FLAG(std::string, mode, "jit", "eager (models only), interp or jit");
ABSL_FLAG(std::string, policy, "",
          "with --mode=jit and a model: run through models::JitModel (a compile cache) with "
          "this shape policy (exact, pow2, mult128, symbolic, auto)");
ABSL_FLAG(std::string, tier, "o2",
          "--mode=jit: o2 (optimized code), baseline (compiles several times faster, runs "
          "slower) or, with --policy, tiered (served by the interpreter while baseline code "
          "compiles in the background; entries called 16 times recompiled at o2)");
ABSL_FLAG(std::string, output_dir, "", "write output i as outputI.npy here (else print)");
ABSL_FLAG(int64_t, seed, 0, "seed of example inputs");

namespace graphjit {
namespace {

using runtime::Tensor;
using runtime::TensorMap;

// The path of --weights or of its alias --param-dir; "" when neither is given.
absl::StatusOr<std::string> WeightsPath() {
  const std::string weights = absl::GetFlag(FLAGS_weights);
  const std::string alias = absl::GetFlag(FLAGS_param_dir);
  if (!weights.empty() && !alias.empty()) {
    return absl::InvalidArgumentError(
        "--param-dir is the old name of --weights: give one of them, not both");
  }
  return weights.empty() ? alias : weights;
}

absl::StatusOr<std::vector<Tensor>> Run(const std::string& what) {
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (mode != "eager" && mode != "interp" && mode != "jit") {
    return absl::InvalidArgumentError(
        absl::StrCat("--mode: unknown mode '", mode, "' (modes: eager, interp, jit)"));
  }
  GJ_ASSIGN_OR_RETURN(ir::Bindings bind,
                      tools::ParseBindingsFlag(absl::GetFlag(FLAGS_bind), "bind"));
  GJ_ASSIGN_OR_RETURN(ir::Bindings dims, tools::ParseBindingsFlag(absl::GetFlag(FLAGS_dim), "dim"));
  GJ_ASSIGN_OR_RETURN(std::string weights, WeightsPath());
  TensorMap inputs, params;
  GJ_RETURN_IF_ERROR(tools::ReadInputsFlag(absl::GetFlag(FLAGS_input), &inputs));

  std::unique_ptr<models::Model> model;
  std::unique_ptr<onnx::ImportedModel> onnx_model;  // for --policy on an ONNX file
  ir::Graph graph;
  if (absl::EndsWith(what, ".gir")) {
    if (mode == "eager") {
      return absl::InvalidArgumentError("--mode=eager needs a model spec, not an IR file");
    }
    GJ_ASSIGN_OR_RETURN(graph, ir::ParseGraphFile(what));
    if (!weights.empty()) {
      GJ_ASSIGN_OR_RETURN(params, tools::LoadGraphWeights(weights, graph));
    }
  } else if (absl::EndsWith(what, ".onnx")) {
    if (mode == "eager") {
      return absl::InvalidArgumentError("--mode=eager needs a model spec, not an ONNX file");
    }
    if (!weights.empty()) {
      return absl::InvalidArgumentError(
          "--weights: an ONNX model carries its own weights (initializers and Constants)");
    }
    // Inputs the model needs as values when it is built (axes, scales, pads...) are
    // specialized on the given ones (onnx/specialize.h): constants of the graph.
    GJ_ASSIGN_OR_RETURN(onnx::SpecializedImport specialized, onnx::ImportSpecialized(what, inputs));
    onnx::ImportedModel imported = std::move(specialized.model);
    for (const std::string& name : specialized.specialized) {
      if (compiler::LogFlagsFromEnvironment().recompiles) {
        compiler::LogLine("recompiles", absl::StrCat(what, ": specialized on the values of input '",
                                                     name, "' ", inputs.at(name).TypeString()));
      }
      inputs.erase(name);
    }
    for (const auto& [name, t] : inputs) {
      if (std::find(imported.input_names.begin(), imported.input_names.end(), name) ==
          imported.input_names.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--input ", name, ": ", what, " has no input '", name,
                         "' (inputs: ", absl::StrJoin(imported.input_names, ", "), ")"));
      }
    }
    graph = imported.graph;
    params = imported.params;
    onnx_model = std::make_unique<onnx::ImportedModel>(std::move(imported));
  } else {
    GJ_ASSIGN_OR_RETURN(model, models::CreateModel(what));
    // Before anything is traced or compiled: every mode below reads model->params().
    if (!weights.empty()) {
      GJ_RETURN_IF_ERROR(tools::ApplyWeightsFlag(weights, *model));
    }
    models::TraceOptions options;
    options.fixed_dims = dims;
    options.padded = inputs.contains("kmask");
    GJ_ASSIGN_OR_RETURN(graph, models::TraceModel(*model, options));
    params = model->params();
    // Inputs not given: the model's seeded examples, sized by --dim and --bind.
    ir::Bindings example = dims;
    for (const auto& [k, v] : bind) example[k] = v;
    GJ_ASSIGN_OR_RETURN(TensorMap ex, model->ExampleInputs(example, absl::GetFlag(FLAGS_seed)));
    for (auto& [name, t] : ex) inputs.try_emplace(name, t);
    bind = model->CompleteBindings(example);
    for (const std::string& d : model->DynamicDims()) bind.erase(d);  // bound from inputs
  }
  // tiered: the Jit's three tiers (interpreter at once, baseline in the background, O2
  // for entries called often); only --policy runs through a Jit.
  GJ_ASSIGN_OR_RETURN(const tools::TierFlag tier_flag,
                      tools::ParseTierFlag(absl::GetFlag(FLAGS_tier)));
  if (tier_flag.tiered() && absl::GetFlag(FLAGS_policy).empty()) {
    return absl::InvalidArgumentError("--tier=tiered needs --policy (it is a Jit's mode)");
  }
  const compiler::CodeTier tier = tier_flag.tier;
  if (const std::string path = absl::GetFlag(FLAGS_save_weights); !path.empty()) {
    if (params.empty()) {
      return absl::InvalidArgumentError(
          "--save-weights: no weights to save (an IR file's come from --weights)");
    }
    GJ_RETURN_IF_ERROR(runtime::SaveWeights(path, params));
    std::printf("wrote %s (%zu tensors)\n", path.c_str(), params.size());
    return std::vector<Tensor>{};
  }
  if (const std::string name = absl::GetFlag(FLAGS_policy); !name.empty()) {
    if ((model == nullptr && onnx_model == nullptr) || mode != "jit") {
      return absl::InvalidArgumentError(
          "--policy needs a model spec or an ONNX file (not an IR file) and --mode=jit");
    }
    GJ_ASSIGN_OR_RETURN(compiler::entries::ShapePolicy policy,
                        compiler::entries::ParsePolicy(name));
    compiler::JitOptions options;
    options.policy = policy;
    options.compile.codegen.tier = tier;
    options.tiered = tier_flag.tiered();
    options.reoptimize_after = tier_flag.reoptimize_after;
    if (onnx_model != nullptr) {
      // The model's dim symbols are the dynamic dims; padding policies would need the
      // dims to bucket named (JitOnnxModel's options.padding), which no flag gives yet.
      GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::JitFunction> fn,
                          models::JitOnnxModel(*onnx_model, options));
      return fn->Run(inputs, bind);
    }
    // JitModel copies the model's weights (the --weights ones, set above).
    GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::JitFunction> fn,
                        models::JitModel(*model, options));
    return fn->Run(inputs, bind);
  }
  if (mode == "eager") return models::RunEager(*model, inputs, bind);
  if (mode == "interp") return runtime::Interpret(graph, inputs, params, bind);
  compiler::CompileGraphOptions options;
  options.codegen.tier = tier;
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::CompiledGraph> cg,
                      compiler::CompiledGraph::Compile(graph, params, options));
  return cg->Run(inputs, bind);
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(absl::StrCat(
      "Runs a model, an IR file or an ONNX model on .npy inputs.\nUsage: graphjit-run "
      "MODEL_SPEC|FILE.gir|FILE.onnx "
      "[--input NAME=@x.npy]... [--weights DIR|FILE.safetensors] [--bind P=N] [--dim S=N] "
      "[--mode=eager|interp|jit] [--policy=P] [--output-dir DIR] "
      "[--save-weights DIR|FILE.safetensors]\nModels: ",
      absl::StrJoin(models::ModelNames(), ", ")));
  // Repeated --input flags accumulate (abseil keeps only the last occurrence otherwise).
  std::vector<std::string> normalized = tools::UnderscoreFlagNames(argc, argv);
  std::vector<std::string> merged, inputs;
  for (size_t i = 0; i < normalized.size(); ++i) {
    const std::string& a = normalized[i];
    if (absl::StartsWith(a, "--input=")) {
      inputs.push_back(a.substr(8));
    } else if (a == "--input" && i + 1 < normalized.size()) {
      inputs.push_back(normalized[++i]);
    } else {
      merged.push_back(a);
    }
  }
  if (!inputs.empty()) merged.push_back("--input=" + absl::StrJoin(inputs, ","));
  std::vector<char*> raw;
  for (std::string& a : merged) raw.push_back(a.data());
  std::vector<char*> args = absl::ParseCommandLine(static_cast<int>(raw.size()), raw.data());
  if (args.size() != 2) {
    std::fprintf(stderr, "%s\n", std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  }
  absl::StatusOr<std::vector<Tensor>> outputs = Run(args[1]);
  if (!outputs.ok()) {
    std::fprintf(stderr, "graphjit-run: %s\n", std::string(outputs.status().message()).c_str());
    return 1;
  }
  const std::string dir = absl::GetFlag(FLAGS_output_dir);
  for (size_t i = 0; i < outputs->size(); ++i) {
    const Tensor& t = (*outputs)[i];
    if (dir.empty()) {
      std::printf("output%zu: %s\n", i, t.DebugString(8).c_str());
      continue;
    }
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::string path = (std::filesystem::path(dir) / absl::StrCat("output", i, ".npy")).string();
    if (absl::Status s = runtime::WriteNpy(path, t); !s.ok()) {
      std::fprintf(stderr, "graphjit-run: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    std::printf("wrote %s (%s)\n", path.c_str(), t.TypeString().c_str());
  }
  return 0;
}

}  // namespace
}  // namespace graphjit

int main(int argc, char** argv) { return graphjit::Main(argc, argv); }
