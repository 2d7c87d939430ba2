#include "compiler/compiled/compiled_graph.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/tiles_plan.h"
#include "compiler/compiled/call_frame.h"
#include "compiler/compiled/graph_record.h"
#include "compiler/compiled/profile.h"
#include "compiler/lower/matmul_strategy.h"
#include "compiler/store/disk_cache.h"
#include "ir/clock.h"
#include "ir/printer.h"
#include "ir/status_macros.h"
#include "runtime/thread_pool.h"

namespace graphjit::compiler {
namespace {

void DumpStage(const std::string& dir, int64_t index, const std::string& graph, const char* stage,
               const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream(std::filesystem::path(dir) / absl::StrCat(index, ".", graph, ".", stage, ".txt"))
      << text;
}

}  // namespace

absl::Status CheckThreads(const std::optional<int>& threads, const char* option) {
  if (!threads.has_value() || (*threads >= 1 && *threads <= runtime::kMaxThreads)) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(option, " must be in [1, ", runtime::kMaxThreads,
                                                 "] (unset: GRAPHJIT_NUM_THREADS or the CPUs "
                                                 "this process may use), got ",
                                                 *threads));
}

const CompileEnv& EnvOf(const CompileGraphOptions& options) {
  return options.env != nullptr ? *options.env : CompileEnv::FromEnvironment();
}

int ThreadsOf(const CompileGraphOptions& options) {
  if (options.threads.has_value()) return *options.threads;
  return EnvOf(options).threads;
}

ProductKernels ProductsOf(const CompileGraphOptions& options) {
  if (options.products.has_value()) return *options.products;
  return EnvOf(options).products;
}

PassContext PassContextFor(const runtime::TensorMap& params, const CompileGraphOptions& options) {
  PassContext ctx{params, options.params_are_constant};
  const ProductKernels products = ProductsOf(options);
  if (ProductsRunAsTiles(products)) {
    ctx.tile_vector_bytes = CodegenVectorBytes(options.codegen.max_vector_bytes);
    const int vector_bytes = ctx.tile_vector_bytes;
    ctx.tile_rows = [vector_bytes](int64_t m, int64_t n, int64_t element_bytes) {
      return codegen_internal::TileRowsFor(m, n, vector_bytes, element_bytes);
    };
  }
  return ctx;
}

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompiledGraph::Compile(
    const ir::Graph& graph, const runtime::TensorMap& params, const CompileGraphOptions& options) {
  return Compile(graph, params, options, /*read_record=*/true);
}

absl::StatusOr<std::unique_ptr<CompiledGraph>> CompiledGraph::Compile(
    const ir::Graph& graph, const runtime::TensorMap& params, const CompileGraphOptions& options,
    bool read_record) {
  GJ_RETURN_IF_ERROR(CheckThreads(options.threads, "CompileGraphOptions::threads"));
  GJ_RETURN_IF_ERROR(CheckVectorBytes(options.codegen.max_vector_bytes,
                                      "CompileGraphOptions::codegen.max_vector_bytes"));
  static std::atomic<int64_t> compiles{0};
  const CompileEnv& env = EnvOf(options);
  // Like XLA's --xla_dump_to: every compile writes its stages as <N>.<graph>.<stage>.txt.
  const std::string& dump_dir = env.dump_dir;
  const int64_t index = compiles.fetch_add(1);
  CompileOptions codegen = options.codegen;
  if (!dump_dir.empty()) {
    codegen.keep_ir = true;
    DumpStage(dump_dir, index, graph.name(), "0-traced", ir::PrintGraph(graph));
  }
  std::unique_ptr<CompiledGraph> cg(new CompiledGraph(env.profile));
  if (graph.HasRegions() || graph.HasRuntimeOps()) {
    GJ_RETURN_IF_ERROR(cg->OptimizeAndCompileControl(graph, params, options));
    if (!dump_dir.empty()) {
      DumpStage(dump_dir, index, graph.name(), "1-optimized", ir::PrintGraph(cg->graph_));
    }
    return cg;
  }
  // A warm start reads what the passes and lowering made from the disk cache's graph-level
  // record (compiler/compiled/graph_record.h). Not when the stages are to be seen: dumps
  // and kept IR want every stage run.
  std::optional<ContentKey> record_key;
  bool from_record = false;
  std::vector<KernelBinding> bindings;  // the record's: no canonicalizing of the kernels
  if (options.optimize && env.disk != nullptr && dump_dir.empty() && !codegen.keep_ir &&
      !codegen.emit_asm) {
    const auto start = ir::Clock::now();
    record_key = GraphRecordKey(graph, params, options);
    from_record = read_record && record_key.has_value() &&
                  cg->ReadRecord(*env.disk, *record_key, params, &bindings);
    cg->timings_.record = ir::SecondsSince(start);
  }
  if (!from_record) GJ_RETURN_IF_ERROR(cg->OptimizeAndLower(graph, params, options));
  const auto start = ir::Clock::now();
  cg->constants_ = ConstantTensors(cg->graph_, cg->lowered_);
  cg->bounds_ = DynamicBounds(cg->graph_);
  (from_record ? cg->timings_.record : cg->timings_.lower) += ir::SecondsSince(start);

  if (!dump_dir.empty()) {
    DumpStage(dump_dir, index, graph.name(), "1-optimized", ir::PrintGraph(cg->graph_));
    DumpStage(dump_dir, index, graph.name(), "2-kernels", ProgramToString(cg->lowered_.program));
  }
  KernelSetOptions kernel_options;
  kernel_options.codegen = codegen;
  kernel_options.threads = env.compile_threads;
  kernel_options.run_threads = options.threads.value_or(env.threads);
  if (options.min_parallel_work >= 0) kernel_options.min_parallel_work = options.min_parallel_work;
  kernel_options.store = env.kernels;
  kernel_options.disk = env.disk;
  kernel_options.remote = env.remote;
  if (from_record) kernel_options.bindings = &bindings;
  kernel_options.print_after = options.print_after_back_end;
  kernel_options.print_sink = options.back_end_sink;
  absl::StatusOr<std::unique_ptr<KernelSet>> kernels =
      KernelSet::Compile(cg->lowered_.program, kernel_options);
  if (!kernels.ok() && from_record && kernels.status().code() == absl::StatusCode::kDataLoss) {
    // The record's kernel bindings do not match its program (a damaged record that passed
    // its checks): it is never read again, and the graph compiles as without it.
    env.disk->Remove(*record_key);
    return Compile(graph, params, options, /*read_record=*/false);
  }
  GJ_RETURN_IF_ERROR(kernels.status());
  cg->kernels_ = *std::move(kernels);
  if (!dump_dir.empty()) {
    DumpStage(dump_dir, index, graph.name(), "3-llvm", cg->kernels_->llvm_ir());
    DumpStage(dump_dir, index, graph.name(), "4-llvm-opt", cg->kernels_->optimized_ir());
  }
  cg->timings_ += cg->kernels_->stats().timings;  // ir_build, optimize, codegen
  // Written once the kernels compiled, so a failed compile leaves no record.
  if (record_key.has_value() && !from_record) {
    const auto start = ir::Clock::now();
    const EncodedGraphRecord encoded = EncodeGraphRecord(
        cg->graph_, MadeParams(params, cg->params_), cg->lowered_, cg->kernels_->bindings());
    // The pack first, so a record never names a pack not yet written; and once: the
    // records of every entry with these weights share it.
    if (!encoded.pack.empty() && !env.disk->Contains(encoded.pack_key)) {
      env.disk->Store(encoded.pack_key, encoded.pack);
    }
    env.disk->Store(*record_key, encoded.record);
    cg->timings_.record += ir::SecondsSince(start);
  }
  return cg;
}

absl::Status CompiledGraph::Optimize(const ir::Graph& graph, const runtime::TensorMap& params,
                                     const CompileGraphOptions& options) {
  graph_ = graph;
  PassContext ctx = PassContextFor(params, options);
  const auto start = ir::Clock::now();
  if (options.optimize) {
    Pipeline pipeline = Pipeline::Default();
    GJ_RETURN_IF_ERROR(pipeline.Run(&graph_, &ctx));
    pass_stats_ = pipeline.stats();
  }
  params_ = std::move(ctx.params);
  timings_.passes = ir::SecondsSince(start);
  return absl::OkStatus();
}

absl::Status CompiledGraph::OptimizeAndLower(const ir::Graph& graph,
                                             const runtime::TensorMap& params,
                                             const CompileGraphOptions& options) {
  GJ_RETURN_IF_ERROR(Optimize(graph, params, options));
  const auto start = ir::Clock::now();
  LowerOptions lower_options;
  lower_options.fuse_attention = options.fuse_attention;
  lower_options.fuse_epilogues = options.fuse_epilogues;
  lower_options.fills_once = options.fills_once;
  lower_options.products = ProductsOf(options);
  GJ_ASSIGN_OR_RETURN(lowered_, Lower(graph_, lower_options));
  timings_.lower = ir::SecondsSince(start);
  return absl::OkStatus();
}

absl::Status CompiledGraph::OptimizeAndCompileControl(const ir::Graph& graph,
                                                      const runtime::TensorMap& params,
                                                      const CompileGraphOptions& options) {
  GJ_RETURN_IF_ERROR(Optimize(graph, params, options));
  lowered_.program.name = graph_.name();
  GJ_ASSIGN_OR_RETURN(kernels_, KernelSet::Compile(lowered_.program, {}));
  GJ_ASSIGN_OR_RETURN(control_, ControlFlow::Compile(graph_, params_, options));
  control_->AddTimings(&timings_);
  return absl::OkStatus();
}

bool CompiledGraph::ReadRecord(DiskCache& disk, const ContentKey& key,
                               const runtime::TensorMap& params,
                               std::vector<KernelBinding>* bindings) {
  std::optional<std::string> payload = disk.Load(key);
  if (!payload.has_value()) return false;
  absl::StatusOr<GraphRecord> record = DecodeGraphRecord(*payload);
  if (record.ok() && !record->packed.empty()) {
    // Mapped, not read: the weights the passes made are used in place.
    std::optional<DiskCache::SharedPayload> pack = disk.LoadShared(record->pack_key);
    if (!pack.has_value()) {
      record = absl::DataLossError(
          absl::StrCat("graph record: its weight pack ", record->pack_key.ToHex(), " is missing"));
    } else if (absl::Status s = UnpackParams(pack->bytes, pack->owner, &*record); !s.ok()) {
      disk.Reject(record->pack_key, std::string(s.message()));
      record = s;
    }
  }
  if (record.ok()) {
    // The caller's weights (the key holds their bytes) and the ones the passes made.
    runtime::TensorMap merged = params;
    for (auto& [name, tensor] : record->made_params) merged.insert_or_assign(name, tensor);
    for (ir::ValueId id : record->graph.Params()) {
      if (!merged.contains(record->graph.node(id).name())) {
        record = absl::DataLossError(
            absl::StrCat("graph record: param '", record->graph.node(id).name(), "' missing"));
        break;
      }
    }
    if (record.ok()) {
      graph_ = std::move(record->graph);
      params_ = std::move(merged);
      lowered_ = std::move(record->lowered);
      *bindings = std::move(record->bindings);
      from_record_ = true;
      return true;
    }
  }
  disk.Reject(key, std::string(record.status().message()));
  return false;
}

struct CompiledGraph::EnvProfile {
  std::mutex mu;  // calls may come from several threads
  std::vector<double> seconds;
  ir::Bindings symbols;
  int calls = 0;
};

CompiledGraph::CompiledGraph(bool profile) {
  if (profile) env_profile_ = std::make_unique<EnvProfile>();
}

CompiledGraph::~CompiledGraph() {
  if (env_profile_ == nullptr) return;
  std::lock_guard<std::mutex> lock(env_profile_->mu);
  if (env_profile_->calls == 0) return;
  KernelProfile profile =
      MakeProfile(program(), env_profile_->seconds, env_profile_->calls, env_profile_->symbols);
  std::fprintf(stderr, "%s", FormatProfile(profile).c_str());
}

absl::StatusOr<std::vector<runtime::Tensor>> CompiledGraph::Run(
    const runtime::TensorMap& inputs, const ir::Bindings& bindings) const {
  if (env_profile_ != nullptr) {
    std::vector<double> seconds;
    ir::Bindings symbols;
    absl::StatusOr<std::vector<runtime::Tensor>> out =
        RunTimed(inputs, bindings, &seconds, &symbols);
    if (out.ok()) {
      std::lock_guard<std::mutex> lock(env_profile_->mu);
      std::vector<double>& sum = env_profile_->seconds;
      sum.resize(seconds.size());
      for (size_t k = 0; k < seconds.size(); ++k) sum[k] += seconds[k];
      env_profile_->symbols = std::move(symbols);  // the bytes column uses the last call's
      ++env_profile_->calls;
    }
    return out;
  }
  if (control_ != nullptr) return control_->Run(inputs, bindings, params_);
  GJ_ASSIGN_OR_RETURN(CallFrame frame, PrepareCall(graph_, lowered_, inputs, params_, constants_,
                                                   bindings, &bounds_));
  kernels_->Run(frame.args.data(), frame.symbols.data(), frame.workspace.get());
  return std::move(frame.outputs);
}

absl::StatusOr<std::vector<runtime::Tensor>> CompiledGraph::RunTimed(
    const runtime::TensorMap& inputs, const ir::Bindings& bindings,
    std::vector<double>* kernel_seconds, ir::Bindings* symbols) const {
  if (control_ != nullptr) {  // the pieces are not timed kernel by kernel
    kernel_seconds->clear();
    symbols->clear();
    return control_->Run(inputs, bindings, params_);
  }
  GJ_ASSIGN_OR_RETURN(CallFrame frame, PrepareCall(graph_, lowered_, inputs, params_, constants_,
                                                   bindings, &bounds_));
  kernel_seconds->resize(program().kernels.size(), 0.0);
  kernels_->RunTimed(frame.args.data(), frame.symbols.data(), frame.workspace.get(),
                     kernel_seconds->data());
  symbols->clear();
  for (size_t s = 0; s < program().symbols.size(); ++s) {
    (*symbols)[program().symbols[s]] = frame.symbols[s];
  }
  return std::move(frame.outputs);
}

std::vector<std::string> CompiledGraph::donated_inputs() const {
  std::vector<std::string> names;
  for (const ArgBinding& arg : lowered_.args) {
    if (arg.kind == ArgBinding::Kind::kOutput && arg.donor_arg >= 0) {
      names.push_back(lowered_.args[arg.donor_arg].name);
    }
  }
  return names;
}

}  // namespace graphjit::compiler
