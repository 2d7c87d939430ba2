// graphjit-study: the lectures' studies with real compilation, on the decode layer.
//   1 policies   the decode loop under exact / pow2 / mult128 / symbolic / auto
//   2 symbolic   one symbolic graph vs exact-shape graphs
//   3 breaks     lazy execution of a data-dependent loop (graph breaks)
//   4 overhead   eager vs interpreter vs compiled code for one decode call
//   5 flops      the 6N table and the GPT-3 arithmetic (FLOPs counted on graphs)
//   6 powerlaws  power laws and why they appear (lecture 4, demos 1 and 2)
// Every number printed comes from this run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/analysis/flops.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/compiled/graph_store.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "models/model.h"
#include "studies/decode_loop.h"
#include "studies/lazy_demo.h"
#include "studies/powerlaws.h"
#include "studies/six_nd.h"
#include "tools/flag_util.h"
#include "tools/json_writer.h"
#include "tools/study_table.h"
#include "tools/weights_flag.h"

ABSL_FLAG(std::vector<std::string>, only, {},
          "sections to run (default all): policies, symbolic, breaks, overhead, flops, "
          "powerlaws");
ABSL_FLAG(int64_t, steps, 512, "decode steps of the policy study");
ABSL_FLAG(int64_t, prompt, 100, "cache rows before the first decode step");
ABSL_FLAG(bool, tiered, false,
          "policy study: tiered compilation (misses interpreted while the code compiles in "
          "the background); the table then shows the worst stall of any step");
ABSL_FLAG(bool, warm_cache, false,
          "reuse code from the disk and remote caches (GRAPHJIT_CACHE_DIR, "
          "GRAPHJIT_REMOTE_CACHE) and report compiled, loaded and reused kernels apart; by "
          "default every study compiles cold (empty code stores of its own, no disk or remote "
          "tier), so compile times say what compiling costs");
ABSL_FLAG(std::string, dtype, "f64", "f32 or f64 (the decode model's dtype)");
ABSL_FLAG(std::string, model, "decode", "decode model spec (dtype= in it wins over --dtype)");
ABSL_FLAG(std::string, json, "", "also write the results as JSON to this file");
ABSL_FLAG(std::string, weights, "",
          "DIR of NAME.npy files or FILE.safetensors: the weights of --model for the "
          "policies, symbolic and overhead studies, one tensor per parameter with its dtype "
          "and shape (default: the model's seeded weights)");

namespace graphjit {
namespace {

using ir::Clock;
using runtime::Tensor;
using runtime::TensorMap;
using tools::Table;

// Median over `batches` of the mean time of `reps` calls of f.
double MedianCallSeconds(const std::function<void()>& f, int reps, int batches = 7) {
  std::vector<double> t;
  for (int b = 0; b < batches; ++b) {
    auto start = Clock::now();
    for (int i = 0; i < reps; ++i) f();
    t.push_back(ir::SecondsSince(start) / reps);
  }
  return ir::Median(std::move(t));
}

// A progress line on stderr, only when it is a terminal.
void Progress(const std::string& what) {
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K%s", what.c_str());
}
void ProgressDone() {
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\r\033[K");
}

void Observations(const std::vector<std::string>& lines) {
  std::printf("\nObservations:\n");
  for (const std::string& l : lines) std::printf("  - %s\n", l.c_str());
  std::printf("\n");
}

// Where the studies' code comes from: cold (the default) or the process's caches.
struct CodeSource {
  compiler::CompileEnv env;
  bool warm = false;
  // A fresh memory tier, for a study that must not find code an earlier one compiled.
  compiler::CompileEnv Fresh(compiler::KernelStore* kernels) const {
    compiler::CompileEnv e = env;
    if (!warm) e.kernels = kernels;
    return e;
  }
};

CodeSource MakeCodeSource(bool warm, compiler::KernelStore* cold_kernels) {
  CodeSource source;
  source.warm = warm;
  source.env = warm ? compiler::CompileEnv::FromEnvironment() : compiler::CompileEnv::MemoryOnly();
  if (!warm) source.env.kernels = cold_kernels;
  return source;
}

std::string Describe(const CodeSource& source) {
  if (!source.warm) {
    return "cold: every compile is real (empty code stores, no disk or remote cache; "
           "--warm_cache reuses them)";
  }
  return absl::StrCat("warm: code reused from memory",
                      source.env.disk != nullptr ? ", the disk cache" : "",
                      source.env.remote != nullptr ? ", the remote cache" : "",
                      " where it was compiled before (compiled, loaded and reused kept apart)");
}

#define RETURN_IF_ERROR(expr)                 \
  do {                                        \
    if (absl::Status _s = (expr); !_s.ok()) { \
      return _s;                              \
    }                                         \
  } while (0)

// What exact's row says: entries built per KV length, and how their kernels were
// obtained. Only compiled kernels are called compiles: loads from a warm cache are not.
std::string ExactObservation(const compiler::cache::CacheStats& s, double run_seconds,
                             int64_t steps) {
  const std::string per_entry =
      tools::FormatSeconds(s.compile_seconds / std::max<int64_t>(1, s.compiles));
  if (s.kernels_loaded == 0) {
    return absl::StrFormat(
        "exact compiles once per KV length: %d compiles at %s each, %s in all, against %s "
        "of running the %d steps; of their kernels %d were compiled and %d reused from "
        "earlier entries (content-addressed: only what depends on S is compiled again).",
        s.compiles, per_entry, tools::FormatSeconds(s.compile_seconds),
        tools::FormatSeconds(run_seconds), static_cast<int>(steps),
        static_cast<int>(s.kernels_compiled), static_cast<int>(s.kernels_reused));
  }
  return absl::StrFormat(
      "exact builds an entry per KV length: %d entries in %s (%s each) against %s of running "
      "the %d steps; of their kernels %d were compiled, %d loaded from the disk or remote "
      "cache (compiled by an earlier run, not this one) and %d reused from earlier entries.",
      s.compiles, tools::FormatSeconds(s.compile_seconds), per_entry,
      tools::FormatSeconds(run_seconds), static_cast<int>(steps),
      static_cast<int>(s.kernels_compiled), static_cast<int>(s.kernels_loaded),
      static_cast<int>(s.kernels_reused));
}

// ---- 1. policies ----------------------------------------------------------------------

absl::Status StudyPolicies(const models::Model& model, const CodeSource& source,
                           tools::JsonWriter& json) {
  namespace cache = compiler::cache;
  studies::DecodeLoopOptions loop;
  loop.prompt = absl::GetFlag(FLAGS_prompt);
  loop.steps = absl::GetFlag(FLAGS_steps);
  std::printf("== 1. Compile-cache policies: %lld decode steps, KV length %lld -> %lld ==\n\n",
              static_cast<long long>(loop.steps), static_cast<long long>(loop.prompt + 1),
              static_cast<long long>(loop.prompt + loop.steps));
  struct Row {
    std::string name;
    studies::DecodeLoopResult r;
    double run_seconds = 0, max_diff = 0;
  };
  std::vector<Row> rows;
  for (cache::ShapePolicy p : cache::AllPolicies()) {
    Progress(absl::StrCat("policies: ", cache::PolicyName(p), " ..."));
    // Cold: each policy starts from empty code stores, so its compiles are all its own.
    compiler::KernelStore kernels;
    const compiler::CompileEnv env = source.Fresh(&kernels);
    compiler::JitOptions options;
    options.policy = p;
    options.tiered = absl::GetFlag(FLAGS_tiered);
    options.compile.env = &env;
    if (!source.warm) options.store = std::make_shared<compiler::CodeStore>();
    GJ_ASSIGN_OR_RETURN(studies::DecodeLoopResult r, studies::RunDecodeLoop(model, options, loop));
    Row row{std::string(cache::PolicyName(p)), std::move(r)};
    double total = 0;
    for (double s : row.r.step_seconds) total += s;
    // Tiered compiles run in the background, outside the steps; only traces are inside.
    row.run_seconds =
        total - (options.tiered ? row.r.stats.trace_seconds : row.r.stats.compile_seconds);
    rows.push_back(std::move(row));
  }
  ProgressDone();
  const Row& exact = rows[0];
  std::printf("Code: %s\n\n", Describe(source).c_str());
  Table t({"policy", "entries built", "kernels compiled", "loaded", "reused",
           source.warm ? "build time" : "compile time", "per entry", "padding",
           "run time (no builds)", "worst stall", "interpreted", "max |diff| vs exact"});
  json.Member("code_cache", source.warm ? "warm" : "cold");
  json.Key("policies").BeginArray();
  for (Row& row : rows) {
    for (size_t i = 0; i < row.r.outputs.size(); ++i) {
      row.max_diff =
          std::max(row.max_diff, runtime::MaxAbsDiff(row.r.outputs[i], exact.r.outputs[i]));
    }
    const cache::CacheStats& s = row.r.stats;
    t.Add({row.name, absl::StrCat(s.compiles), absl::StrCat(s.kernels_compiled),
           absl::StrCat(s.kernels_loaded), absl::StrCat(s.kernels_reused),
           tools::FormatSeconds(s.compile_seconds),
           tools::FormatSeconds(s.compile_seconds / std::max<int64_t>(1, s.compiles)),
           absl::StrFormat("%.1f%%", 100 * s.padding_overhead()),
           tools::FormatSeconds(row.run_seconds), tools::FormatSeconds(s.max_stall_seconds),
           absl::StrCat(s.interpreted), absl::StrFormat("%.1e", row.max_diff)});
    json.BeginObject()
        .Member("policy", row.name)
        .Member("compiles", s.compiles)
        .Member("compile_seconds", s.compile_seconds)
        .Member("kernels_compiled", s.kernels_compiled)
        .Member("kernels_loaded", s.kernels_loaded)
        .Member("kernels_reused", s.kernels_reused)
        .Member("max_stall_seconds", s.max_stall_seconds)
        .Member("interpreted_calls", s.interpreted)
        .Member("background_compiles", s.background_compiles)
        .Member("dropped_compiles", s.dropped_compiles)
        .Member("padding_ratio", s.padding_overhead())
        .Member("run_seconds", row.run_seconds)
        .Member("max_abs_diff", row.max_diff)
        .Member("hits", s.hits)
        .Array("step_seconds", row.r.step_seconds)
        .EndObject();
  }
  json.EndArray();
  t.Print();
  auto find = [&](const char* name) -> const Row& {
    for (const Row& r : rows) {
      if (r.name == name) return r;
    }
    return rows[0];
  };
  const Row &pow2 = find("pow2"), &m128 = find("mult128"), &sym = find("symbolic"),
            &aut = find("auto");
  double worst = 0;
  for (const Row& r : rows) worst = std::max(worst, r.max_diff);
  Observations({
      ExactObservation(exact.r.stats, exact.run_seconds, loop.steps),
      // Warm, an entry's code may have been loaded rather than compiled: say "built".
      absl::StrFormat("Buckets trade %s for waste: pow2 %s %d times and reads %.1f%% "
                      "extra KV rows; mult128 %s %d times for %.1f%%.",
                      source.warm ? "entries" : "compiles", source.warm ? "builds" : "compiles",
                      pow2.r.stats.compiles, 100 * pow2.r.stats.padding_overhead(),
                      source.warm ? "builds" : "compiles", m128.r.stats.compiles,
                      100 * m128.r.stats.padding_overhead()),
      absl::StrFormat("symbolic serves every length >= 2 with %d %s; auto %s %d "
                      "times (exact first, then symbolic once the length changed). Running its "
                      "steps took %s in all; exact's took %s, which includes the first call of "
                      "each freshly compiled entry.",
                      sym.r.stats.compiles, source.warm ? "entry build(s)" : "compile(s)",
                      source.warm ? "built entries" : "compiled", aut.r.stats.compiles,
                      tools::FormatSeconds(sym.run_seconds),
                      tools::FormatSeconds(exact.run_seconds)),
      absl::StrFormat("All policies agree with exact to %.1e: padding with a -inf mask changes "
                      "only the summation length and rounding order.",
                      worst),
  });
  return absl::OkStatus();
}

// ---- 2. symbolic vs specialized -------------------------------------------------------

TensorMap FreshCaches(const TensorMap& in) {
  TensorMap out = in;
  for (const char* n : {"k_cache", "v_cache"}) out[n] = in.at(n).Clone();
  return out;
}

// What shape inference did with the symbols, read off the traced graph: the first
// softmax's operand (the attention scores), the axis it reduces and the shape of the
// matmul that consumes it.
std::string SymbolicShapesObservation(const ir::Graph& g) {
  for (ir::ValueId id = 0; id < g.num_nodes(); ++id) {
    const ir::Node& n = g.node(id);
    if (n.op != ir::OpCode::kSoftmax) continue;
    const ir::Shape& scores = n.type.shape;
    absl::StatusOr<int> axis = ir::NormalizeAxis(n.attrs.GetInt("axis"), n.type.rank(), "");
    if (!axis.ok()) break;
    for (ir::ValueId u = id + 1; u < g.num_nodes(); ++u) {
      const ir::Node& m = g.node(u);
      if (m.op != ir::OpCode::kMatmul || m.operands[0] != id) continue;
      return absl::StrCat("Shape inference works on symbols: the scores are ",
                          ir::ShapeToString(scores), ", softmax reduces over ",
                          scores[*axis].ToString(), " and the weighted sum brings it back to ",
                          ir::ShapeToString(m.type.shape),
                          "; the code reads the symbols from the inputs' shapes at run time.");
    }
  }
  return absl::StrCat("Shape inference works on symbols: the graph's ", g.num_nodes(),
                      " values have shapes over ", absl::StrJoin(g.Symbols(), ", "),
                      ", which the code reads from the inputs' shapes at run time.");
}

absl::Status StudySymbolic(const models::Model& model, const CodeSource& source,
                           tools::JsonWriter& json) {
  std::printf("== 2. One symbolic graph vs a graph per length ==\n\n");
  Progress("symbolic: compiling ...");
  GJ_ASSIGN_OR_RETURN(ir::Graph g, models::TraceModel(model));
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::CompiledGraph> sym,
                      compiler::CompiledGraph::Compile(g, model.params(), {.env = &source.env}));
  Table t({"S", "max |symbolic - exact|", "symbolic call", "exact call", "exact / symbolic"});
  json.Key("symbolic").BeginArray();
  std::vector<double> ratios;
  for (int64_t S : {2, 7, 64, 500}) {
    Progress(absl::StrCat("symbolic: S = ", S));
    models::TraceOptions options;
    options.fixed_dims = {{"S", S}};
    GJ_ASSIGN_OR_RETURN(ir::Graph ge, models::TraceModel(model, options));
    GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::CompiledGraph> exact,
                        compiler::CompiledGraph::Compile(ge, model.params(), {.env = &source.env}));
    GJ_ASSIGN_OR_RETURN(TensorMap in, model.ExampleInputs({{"S", S}}, 1));
    ir::Bindings bind = {{"P", S - 1}};
    absl::StatusOr<std::vector<Tensor>> a = sym->Run(FreshCaches(in), bind);
    absl::StatusOr<std::vector<Tensor>> b = exact->Run(FreshCaches(in), bind);
    if (!a.ok()) return a.status();
    if (!b.ok()) return b.status();
    double diff = runtime::MaxAbsDiff((*a)[0], (*b)[0]);
    // The caches are updated in place at row P each call: rerunning is the same work.
    TensorMap ins = FreshCaches(in), ine = FreshCaches(in);
    double ts = MedianCallSeconds([&] { (void)(sym)->Run(ins, bind); }, 200);
    double te = MedianCallSeconds([&] { (void)(exact)->Run(ine, bind); }, 200);
    ratios.push_back(te / ts);
    t.Add({absl::StrCat(S), absl::StrFormat("%.1e", diff), tools::FormatSeconds(ts),
           tools::FormatSeconds(te), absl::StrFormat("%.2f", te / ts)});
    json.BeginObject()
        .Member("S", S)
        .Member("max_abs_diff", diff)
        .Member("symbolic_seconds", ts)
        .Member("exact_seconds", te)
        .EndObject();
  }
  json.EndArray();
  ProgressDone();
  t.Print();
  std::sort(ratios.begin(), ratios.end());
  Observations({
      SymbolicShapesObservation(g),
      absl::StrFormat("Exact-shape code took %.2fx the symbolic code's time (median over the "
                      "lengths, range %.2f-%.2fx): %s",
                      ratios[ratios.size() / 2], ratios.front(), ratios.back(),
                      ratios[ratios.size() / 2] < 1
                          ? "fixed trip counts let LLVM fold index arithmetic and drop loop "
                            "remainders, what a symbolic kernel gives up."
                          : "on this run specialization bought nothing measurable; the symbolic "
                            "kernel's run-time trip counts cost little at these sizes."),
      "Lengths 0 and 1 are specialized separately (a size-1 dim broadcasts), so the symbolic "
      "graph may assume S >= 2.",
  });
  return absl::OkStatus();
}

// ---- 3. graph breaks ------------------------------------------------------------------

absl::Status StudyBreaks(const CodeSource& source, tools::JsonWriter& json) {
  std::printf("== 3. Graph breaks: iterate y <- tanh(y @ W) until the change is < 1e-12 ==\n\n");
  Progress("breaks: running ...");
  absl::StatusOr<studies::LazyDemoResult> r = studies::RunLazyDemo(200, 1e-12, &source.env);
  ProgressDone();
  if (!r.ok()) return r.status();
  std::vector<int> ops;
  int empty = 0;
  for (const compiler::GraphBreak& g : r->graphs) {
    if (g.ops == 0) {
      ++empty;
    } else if (std::find(ops.begin(), ops.end(), g.ops) == ops.end()) {
      ops.push_back(g.ops);
    }
  }
  Table t({"way", "graphs", "ops per graph", "compiles", "time", "max |diff| vs eager"});
  t.Add({"lazy, data-dependent stop", absl::StrCat(r->graphs.size()), absl::StrJoin(ops, ", "),
         absl::StrCat(r->compiles), tools::FormatSeconds(r->lazy_seconds),
         absl::StrFormat("%.1e", r->max_abs_diff)});
  t.Add({"fixed count, traced (unrolled)", "1", absl::StrCat(r->unrolled_ops),
         absl::StrCat(r->unrolled_compiles),
         tools::FormatSeconds(r->unrolled_compile_seconds + r->unrolled_run_seconds),
         absl::StrFormat("%.1e", r->unrolled_max_abs_diff)});
  t.Print();
  json.Key("graph_breaks")
      .BeginObject()
      .Member("iterations", r->iterations)
      .Member("graphs", static_cast<int64_t>(r->graphs.size()))
      .Member("empty_graphs", empty)
      .Member("final_graph_empty", r->graphs.back().ops == 0)
      .Member("compiles", r->compiles)
      .Member("max_abs_diff", r->max_abs_diff)
      .Member("lazy_seconds", r->lazy_seconds)
      .Member("unrolled_ops", r->unrolled_ops)
      .Member("unrolled_compile_seconds", r->unrolled_compile_seconds)
      .Member("unrolled_run_seconds", r->unrolled_run_seconds)
      .Array("ops_per_graph", ops)
      .EndObject();
  Observations({
      absl::StrFormat("%d iterations became %zu graphs: %zu of %s ops, one per stopping test, "
                      "and a final empty one (y_new was already computed by the last test's "
                      "graph).",
                      r->iterations, r->graphs.size(), r->graphs.size() - empty,
                      absl::StrJoin(ops, ", "), empty),
      absl::StrFormat("Every graph has the same structure on new data, so the structural-hash "
                      "cache compiled %d time(s) for %zu graphs; fusion stops at each break and "
                      "every result round-trips through memory.",
                      r->compiles, r->graphs.size()),
      absl::StrFormat("With the count known up front the loop traces into one graph of %d ops: "
                      "one compile (%s) and one run (%s), against %s for the lazy loop.",
                      r->unrolled_ops, tools::FormatSeconds(r->unrolled_compile_seconds),
                      tools::FormatSeconds(r->unrolled_run_seconds),
                      tools::FormatSeconds(r->lazy_seconds)),
  });
  return absl::OkStatus();
}

// ---- 4. overhead ----------------------------------------------------------------------

absl::Status StudyOverhead(const models::Model& model, const CodeSource& source,
                           tools::JsonWriter& json) {
  const int64_t S = 64;
  std::printf("== 4. Framework overhead: one decode call at KV length %lld ==\n\n",
              static_cast<long long>(S));
  Progress("overhead: compiling ...");
  models::TraceOptions options;
  options.fixed_dims = {{"S", S}};
  GJ_ASSIGN_OR_RETURN(ir::Graph traced, models::TraceModel(model, options));
  GJ_ASSIGN_OR_RETURN(
      std::unique_ptr<compiler::CompiledGraph> cg,
      compiler::CompiledGraph::Compile(traced, model.params(), {.env = &source.env}));
  GJ_ASSIGN_OR_RETURN(TensorMap in, model.ExampleInputs({{"S", S}}, 3));
  ir::Bindings bind = {{"P", S - 1}};
  Progress("overhead: timing ...");
  TensorMap run_in = FreshCaches(in);
  double t_eager = MedianCallSeconds([&] { (void)models::RunEager(model, in, bind); }, 100);
  double t_interp = MedianCallSeconds(
      [&] { (void)runtime::Interpret(cg->graph(), in, cg->params(), bind); }, 100);
  double t_code = MedianCallSeconds([&] { (void)(cg)->Run(run_in, bind); }, 300);
  ProgressDone();
  int eager_ops = traced.NumComputeNodes(), graph_ops = cg->graph().NumComputeNodes();
  int kernels = static_cast<int>(cg->program().kernels.size());
  Table t({"way", "per call", "ops", "per op", "vs compiled"});
  t.Add({"eager (op by op, traced model's ops)", tools::FormatSeconds(t_eager),
         absl::StrCat(eager_ops), tools::FormatSeconds(t_eager / eager_ops),
         absl::StrFormat("%.1fx", t_eager / t_code)});
  t.Add({"interpreter (optimized graph)", tools::FormatSeconds(t_interp), absl::StrCat(graph_ops),
         tools::FormatSeconds(t_interp / graph_ops), absl::StrFormat("%.1fx", t_interp / t_code)});
  t.Add({"compiled (fused kernels)", tools::FormatSeconds(t_code),
         absl::StrCat(graph_ops, " in ", kernels, " kernels"),
         tools::FormatSeconds(t_code / graph_ops), "1.0x"});
  t.Print();
  // The FLOP count of the graph that ran (matmuls, 2 per multiply-add; exact shapes, so
  // a number).
  const std::optional<int64_t> counted = compiler::CountFlops(traced).total.AsConstant();
  if (!counted.has_value())
    return absl::InternalError("overhead: FLOPs of an exact graph are symbolic");
  const double flops = static_cast<double>(*counted);
  json.Key("overhead")
      .BeginObject()
      .Member("S", S)
      .Member("eager_seconds", t_eager)
      .Member("interpreter_seconds", t_interp)
      .Member("compiled_seconds", t_code)
      .Member("eager_ops", eager_ops)
      .Member("graph_ops", graph_ops)
      .Member("kernels", kernels)
      .Member("matmul_flops", flops)
      .EndObject();
  Observations({
      absl::StrFormat("The layer's matmuls are %.2f MFLOP; the compiled call runs at %.1f GFLOP/s. "
                      "At this size most of the eager and interpreted time is per-op cost: "
                      "dispatch, shape checks and one allocation per op (%s per op eagerly).",
                      flops / 1e6, flops / t_code / 1e9, tools::FormatSeconds(t_eager / eager_ops)),
      absl::StrFormat("The interpreter is %.1fx slower than the compiled code and eager %.1fx: "
                      "the compiled code fuses %d ops into %d loop nests with no per-op "
                      "dispatch or allocation.",
                      t_interp / t_code, t_eager / t_code, graph_ops, kernels),
  });
  return absl::OkStatus();
}

// ---- 5. FLOPs -------------------------------------------------------------------------

absl::Status StudyFlops(tools::JsonWriter& json) {
  std::printf(
      "== 5. Where C = 6ND comes from: FLOPs counted on forward and autodiff graphs ==\n\n");
  Progress("flops: tracing and differentiating ...");
  absl::StatusOr<std::vector<studies::SixNRow>> rows = studies::SeedSixNTable();
  ProgressDone();
  if (!rows.ok()) return rows.status();
  studies::Gpt3Compute gpt3;
  std::fputs(studies::FormatSixNReport(*rows, gpt3).c_str(), stdout);
  json.Key("flops").BeginObject().Key("rows").BeginArray();
  for (const studies::SixNRow& r : *rows) {
    json.BeginObject()
        .Member("name", r.name)
        .Member("spec", r.spec)
        .Member("params", r.num_params)
        .Member("forward_flops_per_token", r.forward_per_token())
        .Member("train_flops_per_token", r.train_per_token())
        .Member("train_over_6n", r.train_over_6n())
        .Member("context_over_width", r.context_over_width())
        .EndObject();
  }
  json.EndArray()
      .Member("gpt3_flops", gpt3.flops())
      .Member("gpt3_pf_days", gpt3.pf_days())
      .Member("gpt3_attention_share", gpt3.attention_share())
      .EndObject();
  const studies::SixNRow& lin = rows->front();
  const studies::SixNRow *narrow = nullptr, *widest = nullptr;
  for (const studies::SixNRow& r : *rows) {
    if (r.context_over_width() <= 0) continue;
    if (narrow == nullptr || r.context_over_width() > narrow->context_over_width()) narrow = &r;
    if (widest == nullptr || r.context_over_width() < widest->context_over_width()) widest = &r;
  }
  std::vector<std::string> obs = {absl::StrFormat(
      "The linear layer: forward %.0f FLOPs per parameter per token, training "
      "%.0f: backward computes two matmuls (input and weight gradients) per "
      "forward one.",
      lin.forward_per_token() / lin.num_params, lin.train_per_token() / lin.num_params)};
  if (narrow != nullptr && widest != nullptr) {
    obs.push_back(absl::StrFormat(
        "6N misses attention's QK^T and weighted sum, which grow with context x width: at T/d = "
        "%.2f (%s) training is %.3f x 6N, at T/d = %.2f (%s) only %.3f x 6N.",
        narrow->context_over_width(), narrow->name, narrow->train_over_6n(),
        widest->context_over_width(), widest->name, widest->train_over_6n()));
  }
  obs.push_back(absl::StrFormat(
      "GPT-3: 6 x %.3g x %.3g = %.3g FLOPs = %.0f PF-days; attention "
      "adds %.1f%% to its forward FLOPs.",
      gpt3.num_params, gpt3.tokens, gpt3.flops(), gpt3.pf_days(), 100 * gpt3.attention_share()));
  Observations(obs);
  return absl::OkStatus();
}

// ---- 6. power laws ----------------------------------------------------------------------

void CurveJson(tools::JsonWriter& json, const studies::ScalingCurve& c) {
  json.Member("name", c.name)
      .Array("x", c.x)
      .Array("y", c.y)
      .Member("slope", c.fit.slope)
      .Member("intercept", c.fit.intercept)
      .Member("r_squared", c.fit.r_squared)
      .Member("theory_slope", c.theory_slope);
}

// "0.9487 (-5.1%)": a loss factor and the change it means.
std::string Factor(double f) { return absl::StrFormat("%.4f (%+.1f%%)", f, 100 * (f - 1)); }

absl::Status StudyPowerLaws(const CodeSource& source, tools::JsonWriter& json) {
  std::printf("== 6. Power laws, and why they appear (lecture 4, demos 1 and 2) ==\n\n");
  Progress("powerlaws: compiling and running ...");
  studies::PowerLawOptions options;
  options.env = &source.env;
  absl::StatusOr<studies::PowerLawStudy> r = studies::RunPowerLawStudy(options);
  ProgressDone();
  if (!r.ok()) return r.status();
  const studies::PowerLawOptions& o = r->options;

  std::printf("(1a) A pure power law L = A N^-alpha is the line log L = log A - alpha log N.\n");
  Table f({"alpha", "loss factor per 2x N", "per 10x N", "N factor that halves the loss"});
  for (const studies::LossFactors& x : r->factors) {
    f.Add({absl::StrFormat("%g", x.alpha), Factor(x.per_doubling), Factor(x.per_tenfold),
           absl::StrFormat("%.3g", x.halving_multiplier)});
  }
  f.Print();
  std::printf(
      "\n(1b) With the irreducible term: L(N) = E + A N^-alpha, E = %g, A = %g, alpha = %g "
      "(Chinchilla's N term). Local slopes are -d log y / d log N to the next N.\n",
      o.chinchilla_e, o.chinchilla_a, o.chinchilla_alpha);
  Table c({"N", "L(N)", "L - E", "local slope of L", "local slope of L - E"});
  for (const studies::ChinchillaPoint& p : r->chinchilla) {
    const bool last = std::isnan(p.loss_slope);
    c.Add({absl::StrFormat("%.0e", p.n), absl::StrFormat("%.4f", p.loss),
           absl::StrFormat("%.4f", p.reducible), last ? "" : absl::StrFormat("%.4f", p.loss_slope),
           last ? "" : absl::StrFormat("%.4f", p.reducible_slope)});
  }
  c.Print();

  const studies::ScalingCurve& mean = r->mean_estimation;
  std::printf(
      "\n(2a) Estimating a mean: MSE of the mean of n samples of N(%g, 1), %lld "
      "repetitions per n.\n",
      o.mean_true, static_cast<long long>(o.mean_reps));
  Table m({"n", "MSE", "n x MSE"});
  for (size_t i = 0; i < mean.x.size(); ++i) {
    m.Add({absl::StrFormat("%g", mean.x[i]), absl::StrFormat("%.5f", mean.y[i]),
           absl::StrFormat("%.3f", mean.x[i] * mean.y[i])});
  }
  m.Print();
  std::printf("  fitted log-log slope %.3f (theory %g: MSE = sigma^2 / n)\n", mean.fit.slope,
              mean.theory_slope);

  std::printf(
      "\n(2b) 1-nearest-neighbour regression of sum_j sin(2 pi x_j) on [0, 1)^d, %lld "
      "test points: MSE by training points n.\n",
      static_cast<long long>(o.nn_test));
  std::vector<std::string> header = {"d"};
  for (int64_t n : o.nn_train) header.push_back(absl::StrCat("n=", n));
  header.push_back("fitted slope");
  header.push_back("theory -2/d");
  Table nn(header);
  for (size_t i = 0; i < r->nearest_neighbor.size(); ++i) {
    const studies::ScalingCurve& cv = r->nearest_neighbor[i];
    std::vector<std::string> row = {absl::StrCat(o.nn_dims[i])};
    for (double y : cv.y) row.push_back(absl::StrFormat("%.2e", y));
    row.push_back(absl::StrFormat("%.3f", cv.fit.slope));
    row.push_back(absl::StrFormat("%.3f", cv.theory_slope));
    nn.Add(row);
  }
  nn.Print();

  const studies::ScalingCurve& cap = r->zipf_capacity;
  const studies::ScalingCurve& data = r->zipf_data;
  std::printf("\n(2c) Zipf \"knowledge pieces\": p_k ~ k^-%g over %lld pieces.\n", 1 + o.zipf_alpha,
              static_cast<long long>(o.zipf_pieces));
  Table z({"n", "mass after the n most frequent", "D", "mass unseen in D samples"});
  for (size_t i = 0; i < std::max(cap.x.size(), data.x.size()); ++i) {
    const bool c_row = i < cap.x.size(), d_row = i < data.x.size();
    z.Add({c_row ? absl::StrFormat("%g", cap.x[i]) : "",
           c_row ? absl::StrFormat("%.4f", cap.y[i]) : "",
           d_row ? absl::StrFormat("%.0e", data.x[i]) : "",
           d_row ? absl::StrFormat("%.4f", data.y[i]) : ""});
  }
  z.Print();
  std::printf(
      "  fitted slopes: capacity-limited %.3f (theory -alpha = %.3f), data-limited %.3f "
      "(theory -alpha/(1+alpha) = %.3f)\n",
      cap.fit.slope, cap.theory_slope, data.fit.slope, data.theory_slope);
  std::printf(
      "\nRandom numbers: std::mt19937_64 on the host (seed %llu for (2a), seed d for "
      "(2b)), not the lecture's numpy default_rng (PCG64), whose stream is not reproduced "
      "bit for bit: the samples, and so the digits of (2a) and (2b), differ from the "
      "lecture's; (1) and (2c) use no random numbers. Everything computed on them ran as "
      "compiled graphs: %lld compiles (%s) in a section of %s.\n",
      static_cast<unsigned long long>(o.mean_seed), static_cast<long long>(r->compiles),
      tools::FormatSeconds(r->compile_seconds).c_str(), tools::FormatSeconds(r->seconds).c_str());

  json.Key("powerlaws").BeginObject().Key("loss_factors").BeginArray();
  for (const studies::LossFactors& x : r->factors) {
    json.BeginObject()
        .Member("alpha", x.alpha)
        .Member("per_doubling", x.per_doubling)
        .Member("per_tenfold", x.per_tenfold)
        .Member("halving_multiplier", x.halving_multiplier)
        .EndObject();
  }
  json.EndArray()
      .Key("chinchilla")
      .BeginObject()
      .Member("E", o.chinchilla_e)
      .Member("A", o.chinchilla_a)
      .Member("alpha", o.chinchilla_alpha)
      .Key("points")
      .BeginArray();
  for (const studies::ChinchillaPoint& p : r->chinchilla) {
    json.BeginObject()
        .Member("n", p.n)
        .Member("loss", p.loss)
        .Member("reducible", p.reducible)
        .Member("loss_slope", p.loss_slope)  // null for the last N
        .Member("reducible_slope", p.reducible_slope)
        .EndObject();
  }
  json.EndArray().EndObject();
  json.Key("mean_estimation").BeginObject();
  CurveJson(json, mean);
  json.EndObject().Key("nearest_neighbor").BeginArray();
  for (size_t i = 0; i < r->nearest_neighbor.size(); ++i) {
    json.BeginObject().Member("d", o.nn_dims[i]);
    CurveJson(json, r->nearest_neighbor[i]);
    json.EndObject();
  }
  json.EndArray().Key("zipf_capacity").BeginObject();
  CurveJson(json, cap);
  json.EndObject().Key("zipf_data").BeginObject();
  CurveJson(json, data);
  json.EndObject()
      .Member("rng", "std::mt19937_64 (host); not numpy's PCG64 stream")
      .Member("compiles", r->compiles)
      .Member("compile_seconds", r->compile_seconds)
      .Member("seconds", r->seconds)
      .EndObject();

  const studies::LossFactors& kaplan = r->factors.front();
  const auto& chin = r->chinchilla;
  const studies::ChinchillaPoint& first = chin.front();
  const studies::ChinchillaPoint& last = chin[chin.size() - 2];  // the last with a slope
  double min_reducible = first.reducible_slope, max_reducible = first.reducible_slope;
  bool loss_flattens = true;
  for (size_t i = 0; i + 1 < chin.size(); ++i) {
    min_reducible = std::min(min_reducible, chin[i].reducible_slope);
    max_reducible = std::max(max_reducible, chin[i].reducible_slope);
    if (i > 0) loss_flattens = loss_flattens && chin[i].loss_slope < chin[i - 1].loss_slope;
  }
  std::vector<std::string> slopes, dims;
  bool flatter_with_d = true;
  for (size_t i = 0; i < r->nearest_neighbor.size(); ++i) {
    slopes.push_back(absl::StrFormat("%.3f", r->nearest_neighbor[i].fit.slope));
    dims.push_back(absl::StrCat(o.nn_dims[i]));
    if (i > 0) {
      flatter_with_d =
          flatter_with_d && r->nearest_neighbor[i].fit.slope > r->nearest_neighbor[i - 1].fit.slope;
    }
  }
  double n_mse_lo = mean.x[0] * mean.y[0], n_mse_hi = n_mse_lo;
  for (size_t i = 0; i < mean.x.size(); ++i) {
    n_mse_lo = std::min(n_mse_lo, mean.x[i] * mean.y[i]);
    n_mse_hi = std::max(n_mse_hi, mean.x[i] * mean.y[i]);
  }
  Observations({
      absl::StrFormat("A pure power law loses the same fraction per doubling from any N: at "
                      "alpha = %g, %.1f%% per doubling and %.1f%% per 10x, so halving the loss "
                      "takes %.3g times the parameters; scale alone is an expensive lever.",
                      kaplan.alpha, 100 * (1 - kaplan.per_doubling), 100 * (1 - kaplan.per_tenfold),
                      kaplan.halving_multiplier),
      absl::StrFormat(
          "With E = %g the local slope of L %s from %.4f to %.4f between N = %.0e and "
          "%.0e, which looks like scaling failing; L - E keeps %s throughout. Plot "
          "L - E, not L.",
          o.chinchilla_e, loss_flattens ? "falls" : "moves", first.loss_slope, last.loss_slope,
          first.n, chin.back().n,
          absl::StrFormat("%.4f", min_reducible) == absl::StrFormat("%.4f", max_reducible)
              ? absl::StrFormat("%.4f", min_reducible)
              : absl::StrFormat("%.4f to %.4f", min_reducible, max_reducible)),
      absl::StrFormat("(2a) The simplest estimator is already a scaling law: slope %.3f against "
                      "%g, n x MSE between %.3f and %.3f (sigma^2 = 1).",
                      mean.fit.slope, mean.theory_slope, n_mse_lo, n_mse_hi),
      absl::StrFormat("(2b) The exponent depends on dimension: slopes %s for d = %s against -2/d; "
                      "%s. High intrinsic dimension is one explanation of the small data "
                      "exponents of neural nets.",
                      absl::StrJoin(slopes, ", "), absl::StrJoin(dims, ", "),
                      flatter_with_d ? "each higher d is flatter"
                                     : "on this run the order by d is not monotonic"),
      absl::StrFormat("(2c) One Zipf distribution sets both exponents: remembering the n most "
                      "frequent pieces leaves a tail with slope %.3f (theory %.3f), seeing D "
                      "samples leaves unseen mass with slope %.3f (theory %.3f).",
                      cap.fit.slope, cap.theory_slope, data.fit.slope, data.theory_slope),
  });
  return absl::OkStatus();
}

std::string CpuModel() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Reproduces the lectures' studies with real compilation.\nUsage: graphjit-study "
      "[--only=policies,symbolic,breaks,overhead,flops,powerlaws] [--steps N] [--prompt N] "
      "[--dtype f32|f64] [--model SPEC] [--weights DIR|FILE.safetensors] [--json FILE]");
  std::vector<std::string> normalized = tools::UnderscoreFlagNames(argc, argv);
  std::vector<char*> raw;
  for (std::string& a : normalized) raw.push_back(a.data());
  std::vector<char*> args = absl::ParseCommandLine(static_cast<int>(raw.size()), raw.data());
  auto fail = [](const absl::Status& s) {
    std::fprintf(stderr, "graphjit-study: %s\n", std::string(s.message()).c_str());
    return 1;
  };
  if (args.size() != 1) {
    return fail(absl::InvalidArgumentError(absl::StrCat("unexpected argument '", args[1], "'")));
  }
  const std::vector<std::string> all = {"policies", "symbolic", "breaks",
                                        "overhead", "flops",    "powerlaws"};
  std::vector<std::string> only = absl::GetFlag(FLAGS_only);
  if (only.empty()) only = all;
  for (const std::string& s : only) {
    if (std::find(all.begin(), all.end(), s) == all.end()) {
      return fail(absl::InvalidArgumentError(absl::StrCat(
          "--only: unknown section '", s, "' (sections: ", absl::StrJoin(all, ", "), ")")));
    }
  }
  auto wants = [&](const char* s) { return std::find(only.begin(), only.end(), s) != only.end(); };
  if (absl::GetFlag(FLAGS_steps) < 1 || absl::GetFlag(FLAGS_prompt) < 0) {
    return fail(absl::InvalidArgumentError("--steps must be >= 1 and --prompt >= 0"));
  }
  const std::string dtype = absl::GetFlag(FLAGS_dtype);
  if (dtype != "f32" && dtype != "f64") {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--dtype: expected f32 or f64, got '", dtype, "'")));
  }
  std::string spec = absl::GetFlag(FLAGS_model);
  if (spec.find("dtype=") == std::string::npos) {
    spec += absl::StrCat(spec.find(':') == std::string::npos ? ":" : ",", "dtype=", dtype);
  }
  absl::StatusOr<std::unique_ptr<models::Model>> model = models::CreateModel(spec);
  if (!model.ok()) return fail(model.status());
  if ((*model)->Spec().rfind("decode", 0) != 0) {
    return fail(absl::InvalidArgumentError(
        absl::StrCat("--model: the studies run a decode layer, got '", spec, "'")));
  }
  if (const std::string path = absl::GetFlag(FLAGS_weights); !path.empty()) {
    if (absl::Status s = tools::ApplyWeightsFlag(path, **model); !s.ok()) return fail(s);
  }

  compiler::JitTarget target = compiler::DescribeJitTarget();
  // With --weights the spec's seed= no longer says where the weights came from.
  const std::string weights = absl::GetFlag(FLAGS_weights);
  const std::string model_text =
      weights.empty() ? (*model)->Spec() : absl::StrCat((*model)->Spec(), " weights=", weights);
  std::printf("graphjit-study: %s on %s (%u cores), LLVM %s, target %s\n\n", model_text.c_str(),
              CpuModel().c_str(), std::thread::hardware_concurrency(), target.llvm_version.c_str(),
              target.cpu_name.c_str());
  tools::JsonWriter json;
  json.BeginObject();
  json.Key("machine")
      .BeginObject()
      .Member("cpu", CpuModel())
      .Member("cores", static_cast<int64_t>(std::thread::hardware_concurrency()))
      .Member("llvm", target.llvm_version)
      .Member("llvm_cpu", target.cpu_name)
      .Member("model", (*model)->Spec())
      .Member("weights", weights.empty() ? "seeded" : weights)
      .EndObject();
  auto start = Clock::now();
  absl::Status status;
  compiler::KernelStore cold_kernels;  // the cold source's memory tier
  const CodeSource source = MakeCodeSource(absl::GetFlag(FLAGS_warm_cache), &cold_kernels);
  if (status.ok() && wants("policies")) status = StudyPolicies(**model, source, json);
  if (status.ok() && wants("symbolic")) status = StudySymbolic(**model, source, json);
  if (status.ok() && wants("breaks")) status = StudyBreaks(source, json);
  if (status.ok() && wants("overhead")) status = StudyOverhead(**model, source, json);
  if (status.ok() && wants("flops")) status = StudyFlops(json);
  if (status.ok() && wants("powerlaws")) status = StudyPowerLaws(source, json);
  if (!status.ok()) return fail(status);
  json.Member("total_seconds", ir::SecondsSince(start)).EndObject();
  std::printf("(whole run: %s)\n", tools::FormatSeconds(ir::SecondsSince(start)).c_str());
  if (!absl::GetFlag(FLAGS_json).empty()) {
    std::ofstream out(absl::GetFlag(FLAGS_json));
    out << json.str() << "\n";
    if (!out)
      return fail(absl::InvalidArgumentError(
          absl::StrCat("--json: cannot write ", absl::GetFlag(FLAGS_json))));
  }
  return 0;
}

}  // namespace
}  // namespace graphjit

int main(int argc, char** argv) { return graphjit::Main(argc, argv); }
