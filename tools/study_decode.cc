// graphjit-study's studies of the decode layer: 1 policies, 2 symbolic, 4 overhead.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/analysis/flops.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/compiled/graph_store.h"
#include "ir/clock.h"
#include "ir/status_macros.h"
#include "studies/decode_loop.h"
#include "studies/lazy_demo.h"
#include "studies/powerlaws.h"
#include "studies/six_nd.h"
#include "tools/study_common.h"
#include "tools/study_table.h"

namespace graphjit::study {

using ir::Clock;
using runtime::Tensor;
using runtime::TensorMap;
using tools::Table;

namespace {

// What exact's row says: entries built per KV length, and how their kernels were
// obtained. Only compiled kernels are called compiles: loads from a warm cache are not.
std::string ExactObservation(const compiler::entries::CacheStats& s, double run_seconds,
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

}  // namespace

// ---- 1. policies ----------------------------------------------------------------------

absl::Status StudyPolicies(const models::Model& model, const CodeSource& source,
                           const studies::DecodeLoopOptions& loop, bool tiered,
                           tools::JsonWriter& json) {
  namespace entries = compiler::entries;
  std::printf("== 1. Compile-cache policies: %lld decode steps, KV length %lld -> %lld ==\n\n",
              static_cast<long long>(loop.steps), static_cast<long long>(loop.prompt + 1),
              static_cast<long long>(loop.prompt + loop.steps));
  struct Row {
    std::string name;
    studies::DecodeLoopResult r;
    double run_seconds = 0, max_diff = 0;
  };
  std::vector<Row> rows;
  for (entries::ShapePolicy p : entries::AllPolicies()) {
    Progress(absl::StrCat("policies: ", entries::PolicyName(p), " ..."));
    // Cold: each policy starts from empty code stores, so its compiles are all its own.
    compiler::KernelStore kernels;
    const compiler::CompileEnv env = source.Fresh(&kernels);
    compiler::JitOptions options;
    options.policy = p;
    options.tiered = tiered;
    options.compile.env = &env;
    options.compile.codegen.tier = source.tier;
    options.reoptimize_after = source.reoptimize_after;
    if (!source.warm) options.store = std::make_shared<compiler::GraphStore>();
    GJ_ASSIGN_OR_RETURN(studies::DecodeLoopResult r, studies::RunDecodeLoop(model, options, loop));
    Row row{std::string(entries::PolicyName(p)), std::move(r)};
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
  std::vector<std::string> header = {
      "policy",      "entries built", "kernels compiled",
      "loaded",      "reused",        source.warm ? "build time" : "compile time",
      "per entry",   "padding",       "run time (no builds)",
      "worst stall", "interpreted",   "max |diff| vs exact"};
  // Reoptimizing: how many entries got O2 code, and what those background compiles took.
  if (source.reoptimize_after > 0)
    header.insert(header.end() - 1, {"o2 swaps", "o2 kept out", "o2 time"});
  Table t(header);
  json.Member("code_cache", source.warm ? "warm" : "cold");
  json.Member("code_tier", compiler::CodeTierName(source.tier));
  json.Key("policies").BeginArray();
  for (Row& row : rows) {
    for (size_t i = 0; i < row.r.outputs.size(); ++i) {
      row.max_diff =
          std::max(row.max_diff, runtime::MaxAbsDiff(row.r.outputs[i], exact.r.outputs[i]));
    }
    const entries::CacheStats& s = row.r.stats;
    std::vector<std::string> cells = {
        row.name,
        absl::StrCat(s.compiles),
        absl::StrCat(s.kernels_compiled),
        absl::StrCat(s.kernels_loaded),
        absl::StrCat(s.kernels_reused),
        tools::FormatSeconds(s.compile_seconds),
        tools::FormatSeconds(s.compile_seconds / std::max<int64_t>(1, s.compiles)),
        absl::StrFormat("%.1f%%", 100 * s.padding_overhead()),
        tools::FormatSeconds(row.run_seconds),
        tools::FormatSeconds(s.max_stall_seconds),
        absl::StrCat(s.interpreted),
        absl::StrFormat("%.1e", row.max_diff)};
    if (source.reoptimize_after > 0) {
      cells.insert(cells.end() - 1, {absl::StrCat(s.reoptimized), absl::StrCat(s.reoptimize_kept),
                                     tools::FormatSeconds(s.reoptimize_seconds)});
    }
    t.Add(cells);
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
        .Member("reoptimized", s.reoptimized)
        .Member("reoptimize_kept", s.reoptimize_kept)
        .Member("reoptimize_seconds", s.reoptimize_seconds)
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
                      compiler::CompiledGraph::Compile(g, model.params(), source.Options()));
  Table t({"S", "max |symbolic - exact|", "symbolic call", "exact call", "exact / symbolic"});
  json.Key("symbolic").BeginArray();
  std::vector<double> ratios;
  for (int64_t S : {2, 7, 64, 500}) {
    Progress(absl::StrCat("symbolic: S = ", S));
    models::TraceOptions options;
    options.fixed_dims = {{"S", S}};
    GJ_ASSIGN_OR_RETURN(ir::Graph ge, models::TraceModel(model, options));
    GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::CompiledGraph> exact,
                        compiler::CompiledGraph::Compile(ge, model.params(), source.Options()));
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
  GJ_ASSIGN_OR_RETURN(std::unique_ptr<compiler::CompiledGraph> cg,
                      compiler::CompiledGraph::Compile(traced, model.params(), source.Options()));
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

}  // namespace graphjit::study
