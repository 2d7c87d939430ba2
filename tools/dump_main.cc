// graphjit-dump: prints a model's (or a .gir or .onnx file's) IR, to inspect what graphjit
// builds.
//   graphjit-dump decode                      optimized decode layer, symbolic S and P
//   graphjit-dump decode --stage=traced       as the model recorded it
//   graphjit-dump decode --dim S=128          the exact-shape graph for S = 128
//   graphjit-dump decode --print-after-all    the IR after every pass and lowering step
//   graphjit-dump decode --print-after=fuse_attention   the kernels after that lowering step
//   graphjit-dump graph.gir                   parse, verify and re-print a textual IR file
//   graphjit-dump model.onnx --stage=traced   an ONNX model as imported
//   graphjit-dump decode --dim S=64 --profile time each compiled kernel (us, bytes, GB/s)
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/analysis/bytes_moved.h"
#include "compiler/analysis/flops.h"
#include "compiler/codegen/native_code.h"
#include "compiler/compiled/back_end.h"
#include "compiler/compiled/compile_env.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/compiled/profile.h"
#include "compiler/entries/policy.h"
#include "compiler/lower/lower.h"
#include "compiler/lower/simplify_index.h"
#include "compiler/passes/pipeline.h"
#include "ir/clock.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/status_macros.h"
#include "models/model.h"
#include "models/onnx_model.h"
#include "onnx/import.h"
#include "onnx/specialize.h"
#include "runtime/jit_helpers.h"
#include "runtime/seeded_inputs.h"
#include "studies/six_nd.h"
#include "tools/compile_steps_report.h"
#include "tools/flag_util.h"
#include "tools/input_flag.h"
#include "tools/weights_flag.h"

ABSL_FLAG(std::string, stage, "optimized",
          "what to print: traced (as the model recorded it), optimized (after the pass "
          "pipeline), kernels (the lowered kernel program), llvm (LLVM IR as emitted), "
          "llvm-opt (after LLVM's O2), asm (machine code)");
ABSL_FLAG(std::vector<std::string>, print_after, {},
          "also print the IR after these passes or lowering steps (comma-separated names; "
          "after a lowering step, e.g. fuse_attention, the kernel program)");
ABSL_FLAG(std::vector<std::string>, passes, {},
          "the graph passes to run, in order (comma-separated; default: the default "
          "pipeline), e.g. to compare a compile or a profile without one of them");
ABSL_FLAG(bool, print_after_all, false,
          "also print the IR after every pass and the kernel program after every lowering "
          "step");
ABSL_FLAG(std::vector<std::string>, dim, {},
          "fix dynamic dims to constants, e.g. --dim S=128 (comma-separated for several)");
ABSL_FLAG(bool, padded, false, "trace with the optional inputs of padded shapes (kmask)");
ABSL_FLAG(std::vector<std::string>, input, {},
          "for an ONNX file: NAME=@FILE.npy (or .pb) of an input whose values the model needs "
          "when it is built (axes, scales, pads, a k): the model is specialized on them, and "
          "on the given inputs' shapes if its symbolic import fails, as graphjit-run does");
ABSL_FLAG(std::string, policy, "",
          "show the graph a compile-cache policy compiles for --dim S=N: exact, pow2, mult128 "
          "(padded to the bucket, with kmask), symbolic (S left symbolic for N >= 2), auto "
          "(its first compile: exact)");
ABSL_FLAG(std::vector<std::string>, bind, {},
          "values of call symbols (e.g. --bind P=127) for evaluating --stats formulas");
ABSL_FLAG(std::string, dtype, "", "f32 or f64: the model's dtype (unless its spec says)");
ABSL_FLAG(bool, profile, false,
          "compile, run --profile-calls times on example inputs (a model's, or seeded random "
          "ones sized by --dim / --bind for an IR file) and print each kernel's median time, "
          "bytes, GB/s and share of the call");
ABSL_FLAG(bool, fuse_attention, true,
          "lower attention (scores, softmax, P @ V) as one kernel; false: as five, to compare");
ABSL_FLAG(bool, fuse_epilogues, true,
          "apply the pointwise ops after a tiled product (bias, activation, residual) in its "
          "stores; false: in a kernel of their own, to compare");
ABSL_FLAG(bool, fills_once, true,
          "run kernels that store the same constants every call (a pad's border of zeros) "
          "once per workspace; false: on every call, to compare");
ABSL_FLAG(int32_t, profile_calls, 200, "timed calls for --profile (after 3 warm-up calls)");
ABSL_FLAG(std::string, tier, "o2",
          "code tier of the compiled stages, --stats and --profile: o2 or baseline");
ABSL_FLAG(std::string, products, "",
          "the kernels of large products: auto, tiles (generated) or blas (OpenBLAS); "
          "default: GRAPHJIT_PRODUCTS, else auto");
ABSL_FLAG(bool, stats, false,
          "print node counts (total and computing) after each pass, and pass times");
ABSL_FLAG(bool, compile_steps, false,
          "compile the graph, then time LLVM's steps for each of its modules and an empty "
          "module (TargetMachine, pass set-up, IR passes, instruction selection, register "
          "allocation, the rest of codegen, link) at --tier, with the costliest passes");
ABSL_FLAG(int32_t, compile_steps_runs, 3, "runs per module for --compile-steps (medians)");
ABSL_FLAG(int32_t, compile_steps_top, 5,
          "--compile-steps lists this many of each module's costliest IR and machine passes");
ABSL_FLAG(std::string, weights, "",
          "DIR of NAME.npy files or FILE.safetensors: the weights to compile with (what "
          "constant folding and fold_norm_weight fold), one tensor per parameter with its "
          "dtype and shape (default: a model's seeded weights; an IR file's params stay "
          "unfolded)");

namespace graphjit {
namespace {

// How a call runs on the graph's threads (KernelSet::PlanOf) at the symbols' values in
// `values`: one line with each phase that leaves the calling thread, its kernels and
// where their parts go; "on the calling thread" when nothing does.
void PrintStepPlan(const compiler::CompiledGraph& compiled, const ir::Bindings& values) {
  const compiler::Program& program = compiled.program();
  if (compiled.kernels().run_threads() == 1) {
    std::printf("# step on 1 thread\n");
    return;
  }
  std::vector<int64_t> symbols;
  for (const std::string& name : program.symbols) {
    auto it = values.find(name);
    if (it == values.end()) {
      std::printf("# step on %d threads: give %s (--dim or --bind) to see its phases\n",
                  compiled.kernels().run_threads(), name.c_str());
      return;
    }
    symbols.push_back(it->second);
  }
  const std::vector<compiler::KernelSet::StepTask> plan = compiled.kernels().PlanOf(symbols.data());
  std::vector<std::string> phases;
  std::string phase;
  int current = -1;
  bool forks = false;
  auto flush = [&] {
    if (forks) phases.push_back(absl::StrCat("[", phase, "]"));
    phase.clear();
    forks = false;
  };
  for (const compiler::KernelSet::StepTask& t : plan) {
    if (t.phase != current) {
      flush();
      current = t.phase;
    }
    forks |= t.thread > 0;
    absl::StrAppend(&phase, phase.empty() ? "" : " ", program.kernels[t.kernel].name,
                    t.ranged && t.begin > 0 ? absl::StrCat("[", t.begin, ":]") : "", "@t",
                    t.thread);
  }
  flush();
  std::printf(
      "# step on %d threads: %s\n", compiled.kernels().run_threads(),
      phases.empty()
          ? "on the calling thread"
          : absl::StrCat(phases.size(), " phases leave the caller: ", absl::StrJoin(phases, " "))
                .c_str());
}

// A graph to dump and the parameter values its passes may fold (for a .gir file, only
// --weights).
struct Loaded {
  ir::Graph graph;
  runtime::TensorMap params;
  std::unique_ptr<models::Model> model;  // null for an IR file
  models::TraceOptions options;
};

absl::StatusOr<Loaded> LoadGraph(const std::string& what, const ir::Bindings& dims) {
  if (!absl::GetFlag(FLAGS_input).empty() && !absl::EndsWith(what, ".onnx")) {
    return absl::InvalidArgumentError("--input applies to ONNX files, not " + what);
  }
  if (absl::EndsWith(what, ".gir")) {
    if (!absl::GetFlag(FLAGS_policy).empty() || !absl::GetFlag(FLAGS_dtype).empty()) {
      return absl::InvalidArgumentError("--policy and --dtype apply to model specs, not IR files");
    }
    GJ_ASSIGN_OR_RETURN(ir::Graph g, ir::ParseGraphFile(what));
    Loaded loaded;
    loaded.graph = std::move(g);
    if (const std::string path = absl::GetFlag(FLAGS_weights); !path.empty()) {
      GJ_ASSIGN_OR_RETURN(loaded.params, tools::LoadGraphWeights(path, loaded.graph));
    }
    return loaded;
  }
  if (absl::EndsWith(what, ".onnx")) {
    if (!absl::GetFlag(FLAGS_policy).empty() || !absl::GetFlag(FLAGS_dtype).empty()) {
      return absl::InvalidArgumentError(
          "--policy and --dtype apply to model specs, not ONNX files");
    }
    if (!absl::GetFlag(FLAGS_weights).empty()) {
      return absl::InvalidArgumentError(
          "--weights: an ONNX model carries its own weights (initializers and Constants)");
    }
    runtime::TensorMap inputs;
    GJ_RETURN_IF_ERROR(tools::ReadInputsFlag(absl::GetFlag(FLAGS_input), &inputs));
    onnx::ImportedModel imported;
    if (inputs.empty()) {
      absl::StatusOr<onnx::ImportedModel> model = onnx::Import(what);
      if (const std::string needed = onnx::InputNeededAtImport(model.status()); !needed.empty()) {
        return absl::Status(model.status().code(),
                            absl::StrCat(model.status().message(),
                                         " (give its values with --input ", needed, "=@FILE.npy)"));
      }
      GJ_ASSIGN_OR_RETURN(imported, std::move(model));
    } else {
      GJ_ASSIGN_OR_RETURN(onnx::SpecializedImport specialized,
                          onnx::ImportSpecialized(what, inputs));
      imported = std::move(specialized.model);
    }
    Loaded loaded;
    // --dim fixes the model's dynamic dims: the graph replayed with constant input shapes,
    // as the exact policy compiles it.
    absl::StatusOr<ir::Graph> graph = models::SpecializeOnnxGraph(imported, dims);
    if (!graph.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--dim ", graph.status().message()));
    }
    loaded.graph = *std::move(graph);
    loaded.params = std::move(imported.params);
    return loaded;
  }
  std::string spec = what;
  if (const std::string dtype = absl::GetFlag(FLAGS_dtype); !dtype.empty()) {
    if (dtype != "f32" && dtype != "f64") {
      return absl::InvalidArgumentError(
          absl::StrCat("--dtype: expected f32 or f64, got '", dtype, "'"));
    }
    if (spec.find("dtype=") == std::string::npos) {
      spec += absl::StrCat(spec.find(':') == std::string::npos ? ":" : ",", "dtype=", dtype);
    }
  }
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<models::Model> model, models::CreateModel(spec));
  if (const std::string path = absl::GetFlag(FLAGS_weights); !path.empty()) {
    GJ_RETURN_IF_ERROR(tools::ApplyWeightsFlag(path, *model));
  }
  std::vector<std::string> dyn = model->DynamicDims();
  for (const auto& [name, value] : dims) {
    if (std::find(dyn.begin(), dyn.end(), name) == dyn.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim: model has no dynamic dim '", name,
                       "' (dynamic dims: ", dyn.empty() ? "none" : absl::StrJoin(dyn, ", "), ")"));
    }
  }
  models::TraceOptions options;
  options.fixed_dims = dims;
  options.padded = absl::GetFlag(FLAGS_padded);
  if (const std::string name = absl::GetFlag(FLAGS_policy); !name.empty()) {
    GJ_ASSIGN_OR_RETURN(compiler::entries::ShapePolicy policy,
                        compiler::entries::ParsePolicy(name));
    options.padded = compiler::entries::PadsInputs(policy);
    for (const std::string& d : dyn) {
      auto it = dims.find(d);
      if (it == dims.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--policy: give the length to compile for with --dim ", d, "=N"));
      }
      // auto's first compile is exact; later ones are what symbolic gives.
      compiler::entries::DimKey key = compiler::entries::KeyFor(
          policy == compiler::entries::ShapePolicy::kAuto ? compiler::entries::ShapePolicy::kExact
                                                          : policy,
          it->second);
      if (key == compiler::entries::kSymbolicDim) {
        options.fixed_dims.erase(d);
      } else {
        options.fixed_dims[d] = key;
      }
    }
  }
  GJ_ASSIGN_OR_RETURN(ir::Graph g, models::TraceModel(*model, options));
  Loaded loaded;
  loaded.graph = std::move(g);
  loaded.params = model->params();
  loaded.model = std::move(model);
  loaded.options = options;
  return loaded;
}

// Inputs and call bindings for --profile: a model's example inputs, or for an IR file
// seeded normal floats and zero integers of the declared shapes at `values`.
absl::Status ProfileInputs(const Loaded& loaded, const ir::Graph& graph, const ir::Bindings& values,
                           runtime::TensorMap* inputs, ir::Bindings* bindings) {
  if (loaded.model != nullptr) {
    GJ_ASSIGN_OR_RETURN(*inputs, loaded.model->ExampleInputs(values, 0));
    *bindings = loaded.model->CompleteBindings(values);
    for (const std::string& d : loaded.model->DynamicDims()) bindings->erase(d);
    return absl::OkStatus();
  }
  absl::StatusOr<runtime::TensorMap> seeded = runtime::SeededInputs(graph, values, 0);
  if (!seeded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--profile: ", seeded.status().message(),
                     " (give its symbols' values with --dim or --bind)"));
  }
  *inputs = *std::move(seeded);
  *bindings = values;
  return absl::OkStatus();
}

std::vector<std::string> LowerStepNames() {
  std::vector<std::string> names;
  for (const compiler::LowerStep& step : compiler::BuiltinLowerSteps()) names.push_back(step.name);
  return names;
}

// `512*S+346112`, and its value when every symbol is bound (`= 411648`).
std::string Formula(const ir::SymExpr& e, const ir::Bindings& bindings) {
  absl::StatusOr<int64_t> v = e.Evaluate(bindings);
  return v.ok() && !e.IsConstant() ? absl::StrCat(e.ToString(), " = ", *v) : e.ToString();
}

void PrintStats(const ir::Graph& traced, const compiler::Pipeline* pipeline) {
  std::printf("# %-18s %7s %9s %10s\n", "stage", "nodes", "computing", "time (us)");
  std::printf("# %-18s %7d %9d %10s\n", "traced", traced.num_nodes(), traced.NumComputeNodes(), "");
  if (pipeline == nullptr) return;
  for (const compiler::PassStats& s : pipeline->stats()) {
    std::printf("# %-18s %7d %9d %10.1f\n", s.name.c_str(), s.nodes_after, s.compute_after,
                s.seconds * 1e6);
  }
}

// `stage` (kernels, llvm, llvm-opt, asm) of a compiled graph; of a graph with regions,
// of each of its compiled pieces in turn, each under a `# PATH` line.
void PrintCompiledStage(const compiler::CompiledGraph& compiled, const std::string& stage,
                        const std::string& path) {
  if (const compiler::ControlFlow* control = compiled.control_flow()) {
    for (const auto& [label, piece] : control->Compiled()) {
      const std::string at = path.empty() ? label : absl::StrCat(path, " / ", label);
      std::printf("# %s\n", at.c_str());
      PrintCompiledStage(*piece, stage, at);
    }
    return;
  }
  if (stage == "kernels") std::fputs(compiler::ProgramToString(compiled.program()).c_str(), stdout);
  if (stage == "llvm") std::fputs(compiled.kernels().llvm_ir().c_str(), stdout);
  if (stage == "llvm-opt") std::fputs(compiled.kernels().optimized_ir().c_str(), stdout);
  if (stage == "asm") std::fputs(compiled.kernels().assembly().c_str(), stdout);
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(absl::StrCat(
      "Prints graphjit IR.\nUsage: graphjit-dump MODEL_SPEC|FILE.gir|FILE.onnx [flags]\nModels: ",
      absl::StrJoin(models::ModelNames(), ", "),
      " (e.g. decode:d=128,H=8,G=2,dh=16,f=344,dtype=f64)"));
  std::vector<std::string> normalized = tools::UnderscoreFlagNames(argc, argv);
  std::vector<char*> raw;
  for (std::string& a : normalized) raw.push_back(a.data());
  std::vector<char*> args = absl::ParseCommandLine(static_cast<int>(raw.size()), raw.data());
  if (args.size() != 2) {
    std::fprintf(stderr, "%s\n", std::string(absl::ProgramUsageMessage()).c_str());
    return 2;
  }
  const std::string stage = absl::GetFlag(FLAGS_stage);
  const std::vector<std::string> stages = {"traced", "optimized", "kernels",
                                           "llvm",   "llvm-opt",  "asm"};
  if (std::find(stages.begin(), stages.end(), stage) == stages.end()) {
    std::fprintf(stderr, "graphjit-dump: unknown --stage '%s' (stages: %s)\n", stage.c_str(),
                 absl::StrJoin(stages, ", ").c_str());
    return 2;
  }
  absl::StatusOr<ir::Bindings> dims = tools::ParseBindingsFlag(absl::GetFlag(FLAGS_dim), "dim");
  absl::StatusOr<ir::Bindings> bind = tools::ParseBindingsFlag(absl::GetFlag(FLAGS_bind), "bind");
  if (dims.ok() && !bind.ok()) dims = bind.status();
  absl::StatusOr<Loaded> loaded =
      dims.ok() ? LoadGraph(args[1], *dims) : absl::StatusOr<Loaded>(dims.status());
  if (!loaded.ok()) {
    std::fprintf(stderr, "graphjit-dump: %s\n", std::string(loaded.status().message()).c_str());
    return 1;
  }
  ir::Graph graph = loaded->graph;
  compiler::Pipeline pipeline = compiler::Pipeline::Default();
  if (const std::vector<std::string> passes = absl::GetFlag(FLAGS_passes); !passes.empty()) {
    absl::StatusOr<compiler::Pipeline> chosen = compiler::Pipeline::FromNames(passes);
    if (!chosen.ok()) {
      std::fprintf(stderr, "graphjit-dump: --passes: %s\n",
                   std::string(chosen.status().message()).c_str());
      return 1;
    }
    pipeline = *std::move(chosen);
  }
  compiler::LowerPipeline lowering =
      compiler::LowerPipeline::FromOptions({.fuse_attention = absl::GetFlag(FLAGS_fuse_attention),
                                            .fuse_epilogues = absl::GetFlag(FLAGS_fuse_epilogues),
                                            .fills_once = absl::GetFlag(FLAGS_fills_once)});
  std::vector<std::string> print_after = absl::GetFlag(FLAGS_print_after);
  if (absl::GetFlag(FLAGS_print_after_all)) print_after.push_back("*");
  // Names of lowering steps go to the lowering, of back-end steps to the back end, the
  // rest to the pass pipeline ("*" to all three); a name that is none is reported with
  // every list.
  std::vector<std::string> after_passes, after_steps, after_back_end;
  for (const std::string& name : print_after) {
    const bool step = absl::c_linear_search(LowerStepNames(), name);
    const bool back_end = absl::c_linear_search(compiler::BackEnd::StepNames(), name);
    if (name == "*" || (!step && !back_end)) after_passes.push_back(name);
    if (name == "*" || step) after_steps.push_back(name);
    if (name == "*" || back_end) after_back_end.push_back(name);
  }
  absl::Status status =
      pipeline.SetPrintAfter(after_passes, [](const std::string& pass, const ir::Graph& g) {
        std::printf("# IR after %s\n%s", pass.c_str(), ir::PrintGraph(g).c_str());
      });
  if (!status.ok()) {
    status = absl::InvalidArgumentError(
        absl::StrCat(status.message(), "; lowering steps: ", absl::StrJoin(LowerStepNames(), ", "),
                     "; back-end steps: ", absl::StrJoin(compiler::BackEnd::StepNames(), ", ")));
  }
  if (status.ok()) {
    status = lowering.SetPrintAfter(after_steps,
                                    [](const std::string& step, const compiler::Program& program) {
                                      std::printf("# kernels after %s\n%s", step.c_str(),
                                                  compiler::ProgramToString(program).c_str());
                                    });
  }
  bool optimize = stage != "traced" || !print_after.empty();
  std::optional<compiler::ProductKernels> products_flag;
  if (const std::string products = absl::GetFlag(FLAGS_products); !products.empty()) {
    products_flag = compiler::ParseProductKernels(products);
    if (!products_flag.has_value()) {
      std::fprintf(stderr, "graphjit-dump: --products=%s (expected auto, tiles or blas)\n",
                   products.c_str());
      return 1;
    }
  }
  // As a compile would run the passes (orient_products depends on the products' kernels).
  compiler::CompileGraphOptions pass_options;
  pass_options.products = products_flag;
  compiler::PassContext ctx = compiler::PassContextFor(loaded->params, pass_options);
  if (status.ok() && optimize) status = pipeline.Run(&graph, &ctx);
  // The program after each lowering step (the compile below lowers again, unprinted).
  if (status.ok() && !after_steps.empty()) status = lowering.Run(graph).status();
  std::unique_ptr<compiler::CompiledGraph> compiled;
  compiler::ProductKernels products_used = compiler::ProductKernels::kAuto;
  const bool profile = absl::GetFlag(FLAGS_profile);
  const bool compile_steps = absl::GetFlag(FLAGS_compile_steps);
  bool compile = stage == "kernels" || stage == "llvm" || stage == "llvm-opt" || stage == "asm" ||
                 absl::GetFlag(FLAGS_stats) || profile || compile_steps || !after_back_end.empty();
  if (status.ok() && compile) {
    compiler::CompileGraphOptions options;
    options.optimize = false;  // the pipeline above already ran
    options.fuse_attention = absl::GetFlag(FLAGS_fuse_attention);
    options.fuse_epilogues = absl::GetFlag(FLAGS_fuse_epilogues);
    options.fills_once = absl::GetFlag(FLAGS_fills_once);
    options.codegen.keep_ir = stage == "llvm" || stage == "llvm-opt" || compile_steps;
    options.codegen.emit_asm = stage == "asm";
    options.print_after_back_end = after_back_end;
    options.back_end_sink = [](const std::string& step, const std::string& text) {
      std::printf("# back end after %s\n%s", step.c_str(), text.c_str());
    };
    absl::StatusOr<compiler::CodeTier> tier = compiler::ParseCodeTier(absl::GetFlag(FLAGS_tier));
    if (!tier.ok()) {
      std::fprintf(stderr, "graphjit-dump: --tier: %s\n",
                   std::string(tier.status().message()).c_str());
      return 1;
    }
    options.codegen.tier = *tier;
    options.products = products_flag;
    products_used = compiler::ProductsOf(options);
    absl::StatusOr<std::unique_ptr<compiler::CompiledGraph>> cg =
        compiler::CompiledGraph::Compile(graph, ctx.params, options);
    if (cg.ok()) {
      compiled = *std::move(cg);
    } else {
      status = cg.status();
    }
  }
  if (!status.ok()) {
    std::fprintf(stderr, "graphjit-dump: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  if (compile_steps) {
    std::vector<std::string> labels;
    for (const auto& module : compiled->kernels().stats().compiled_modules) {
      labels.push_back(absl::StrJoin(module.kernels, ", "));
    }
    absl::StatusOr<std::string> report = tools::CompileStepsReport(
        compiled->kernels().llvm_ir(), labels, *compiler::ParseCodeTier(absl::GetFlag(FLAGS_tier)),
        absl::GetFlag(FLAGS_compile_steps_runs), absl::GetFlag(FLAGS_compile_steps_top));
    if (!report.ok()) {
      std::fprintf(stderr, "graphjit-dump: --compile-steps: %s\n",
                   std::string(report.status().message()).c_str());
      return 1;
    }
    std::fputs(report->c_str(), stdout);
    return 0;
  }
  if (profile && compiled->control_flow() != nullptr) {
    std::fprintf(stderr,
                 "graphjit-dump: --profile: the graph has loops or branches (regions), compiled as "
                 "pieces that are not profiled kernel by kernel; --stage=kernels lists them\n");
    return 1;
  }
  if (profile) {
    ir::Bindings values = *dims;
    for (const auto& [k, v] : *bind) values[k] = v;
    runtime::TensorMap inputs;
    ir::Bindings bindings;
    status = ProfileInputs(*loaded, graph, values, &inputs, &bindings);
    absl::StatusOr<compiler::KernelProfile> p =
        status.ok() ? compiler::ProfileKernels(*compiled, inputs, bindings,
                                               absl::GetFlag(FLAGS_profile_calls))
                    : absl::StatusOr<compiler::KernelProfile>(status);
    if (!p.ok()) {
      std::fprintf(stderr, "graphjit-dump: %s\n", std::string(p.status().message()).c_str());
      return 1;
    }
    // Kernel times depend on the CPU (vector width, caches) and on the threads a call's
    // kernels split over (GRAPHJIT_NUM_THREADS, default every available core): say which.
    const compiler::HostTarget target = compiler::DescribeHostTarget();
    const int threads = compiled->kernels().run_threads();
    std::printf("# target: %s, LLVM %s, kernels on %d thread%s\n", target.cpu_name.c_str(),
                target.llvm_version.c_str(), threads, threads == 1 ? "" : "s");
    std::fputs(compiler::FormatProfile(*p).c_str(), stdout);
    return 0;
  }
  if (print_after.empty()) {
    if (stage == "traced") std::fputs(ir::PrintGraph(loaded->graph).c_str(), stdout);
    if (stage == "optimized") std::fputs(ir::PrintGraph(graph).c_str(), stdout);
    if (stage != "traced" && stage != "optimized") PrintCompiledStage(*compiled, stage, "");
  }
  if (absl::GetFlag(FLAGS_stats)) {
    PrintStats(loaded->graph, optimize ? &pipeline : nullptr);
    // Lowering's steps (run here unless printed after), with the kernels after each.
    if (!lowering.stats().empty() || lowering.Run(graph).ok()) {
      std::vector<std::string> steps;
      for (const compiler::LowerStepStats& st : lowering.stats()) {
        steps.push_back(absl::StrFormat("%s %d (%.1f us)", st.name, st.kernels, st.seconds * 1e6));
      }
      std::printf("# lowering steps, kernels after each: %s\n", absl::StrJoin(steps, ", ").c_str());
    }
    compiler::TrafficReport traffic = compiler::ProgramTraffic(compiled->program());
    ir::Bindings values = *dims;
    for (const auto& [k, v] : *bind) values[k] = v;
    std::printf("# FLOPs (matmul, 2 per multiply-add): %s; kernel bytes read %s, written %s\n",
                Formula(compiler::CountFlops(graph).total, values).c_str(),
                Formula(traffic.bytes_read, values).c_str(),
                Formula(traffic.bytes_written, values).c_str());
    if (loaded->model != nullptr) {
      // Forward and training (forward + autodiff backward) FLOPs of the traced model.
      absl::StatusOr<studies::ModelFlops> mf =
          studies::CountModelFlops(*loaded->model, loaded->options);
      if (mf.ok()) {
        std::printf("# params N = %lld; forward FLOPs %s; training FLOPs %s\n",
                    static_cast<long long>(mf->num_params), Formula(mf->forward, values).c_str(),
                    Formula(mf->train, values).c_str());
      } else {
        std::printf("# training FLOPs: %s\n", std::string(mf.status().message()).c_str());
      }
    }
    const compiler::PhaseTimings& t = compiled->timings();
    std::printf(
        "# compile (ms, tier %s): lower %.2f, llvm ir %.2f, llvm passes %.2f, codegen %.2f; "
        "kernels %zu, workspace %s bytes\n",
        absl::GetFlag(FLAGS_tier).c_str(), t.lower * 1e3, t.ir_build * 1e3, t.optimize * 1e3,
        t.codegen * 1e3, compiled->program().kernels.size(),
        compiled->program().workspace_bytes.ToString().c_str());
    // Phases above are summed over the kernels, which compile in parallel.
    const compiler::KernelSetStats& k = compiled->kernels().stats();
    std::printf(
        "# kernels: %d distinct of %d; compiled %d, reused %d (live), loaded %d (disk/remote); "
        "%d modules on %d threads, %.2f ms wall\n",
        k.distinct, k.kernels, k.compiled, k.reused, k.loaded, k.modules, k.threads,
        k.wall_seconds * 1e3);
    std::vector<std::string> back_end;
    for (const ir::StepStats& st : k.steps) {
      back_end.push_back(absl::StrFormat("%s %.1f us", st.name, st.seconds * 1e6));
    }
    std::printf("# back-end steps: %s\n", absl::StrJoin(back_end, ", ").c_str());
    // Which kernels the large products run (GRAPHJIT_PRODUCTS, --products).
    int tiles = 0, blas = 0;
    for (const compiler::Kernel& kernel : compiled->program().kernels) {
      tiles += kernel.kind == compiler::KernelKind::kMatmul &&
               kernel.order == compiler::MatmulOrder::kTiles;
      blas += kernel.kind == compiler::KernelKind::kExternMatmul;
    }
    std::printf("# products (%s; OpenBLAS runs its %s kernels): %d tiled, %d OpenBLAS\n",
                compiler::ProductKernelsName(products_used), runtime::BlasCoreName().c_str(), tiles,
                blas);
    PrintStepPlan(*compiled,
                  loaded->model != nullptr ? loaded->model->CompleteBindings(values) : values);
    // Only with a remote cache (GRAPHJIT_REMOTE_CACHE); counts are of modules.
    if (k.remote) {
      std::printf(
          "# remote cache: fetched %d kernels; modules: hits %d, misses %d, lock waits %d, "
          "fallbacks %d\n",
          k.fetched, k.remote_hits, k.remote_misses, k.remote_lock_waits, k.remote_fallbacks);
    }
    // Only with a disk cache (GRAPHJIT_CACHE_DIR): what its records cost to read and check
    // (checksum and tag, docs/SECURITY.md), summed over the process.
    if (const compiler::DiskCache* disk = compiler::CompileEnv::FromEnvironment().disk) {
      const compiler::DiskCacheStats d = disk->stats();
      std::printf(
          "# disk cache: %s: hits %lld, misses %lld, rejected %lld, stores %lld; reading and "
          "checking records %.3f ms\n",
          disk->dir().c_str(), static_cast<long long>(d.hits), static_cast<long long>(d.misses),
          static_cast<long long>(d.rejected), static_cast<long long>(d.stores),
          d.check_seconds * 1e3);
    }
    // What each compiled module cost, and how much IR the passes worked on.
    for (size_t m = 0; m < k.compiled_modules.size(); ++m) {
      const compiler::KernelSetStats::Module& module = k.compiled_modules[m];
      std::printf(
          "# module %zu (%s): IR instructions %lld -> %lld, llvm passes %.2f ms, codegen %.2f "
          "ms\n",
          m + 1, absl::StrJoin(module.kernels, ", ").c_str(),
          static_cast<long long>(module.timings.ir_instructions),
          static_cast<long long>(module.timings.optimized_instructions),
          module.timings.optimize * 1e3, module.timings.codegen * 1e3);
    }
    // Index simplification (the last step of lower): distinct expression nodes per kernel
    // as lowering builds them and as codegen gets them.
    absl::StatusOr<compiler::LoweredGraph> plain =
        compiler::Lower(graph, {.simplify_indices = false,
                                .fuse_attention = absl::GetFlag(FLAGS_fuse_attention),
                                .fuse_epilogues = absl::GetFlag(FLAGS_fuse_epilogues),
                                .fills_once = absl::GetFlag(FLAGS_fills_once)});
    if (plain.ok()) {
      const compiler::ExprNodeCounts before = compiler::CountKernelExprNodes(plain->program);
      const ir::Clock::time_point start = ir::Clock::now();
      compiler::SimplifyKernelIndices(&plain->program);
      const double ms = 1e3 * ir::SecondsSince(start);
      const compiler::ExprNodeCounts after = compiler::CountKernelExprNodes(plain->program);
      std::printf(
          "# index exprs: %lld nodes -> %lld (all expr nodes %lld -> %lld, as printed "
          "%lld -> %lld; simplify %.2f ms)\n",
          static_cast<long long>(before.i64_nodes), static_cast<long long>(after.i64_nodes),
          static_cast<long long>(before.nodes), static_cast<long long>(after.nodes),
          static_cast<long long>(before.printed_nodes), static_cast<long long>(after.printed_nodes),
          ms);
    }
  }
  return 0;
}

}  // namespace
}  // namespace graphjit

int main(int argc, char** argv) { return graphjit::Main(argc, argv); }
