// What the differential fuzz target's generator (graph_generator.h) builds: every op of
// ir/ops.def, each with zero-size and symbolic operands somewhere among a few thousand
// random inputs; and the committed corpus (replayed by fuzz.replay_differential) reaches
// every op, so CI compares interpreter and compiled code on each.
#include "tests/fuzz/graph_generator.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "tests/fuzz/differential_tolerance.h"

namespace graphjit::fuzz {
namespace {

// What one op was seen with over many generated graphs.
struct OpSeen {
  int count = 0;
  bool zero_size = false;  // an operand (a source: its result) with no elements
  bool symbolic = false;   // an operand (a source: its result) with a dim over S
  bool s_zero = false;     // symbolic, with S bound to 0
  std::string bytes;       // the shortest input that generated it
};

// The types a node works on: its operands', or its own for a source.
std::vector<ValueType> WorkTypes(const ir::Graph& g, const ir::Node& n) {
  std::vector<ValueType> types;
  for (ValueId v : n.operands) types.push_back(g.type(v));
  if (types.empty()) types.push_back(n.type);
  return types;
}

void Record(const std::string& bytes, std::map<OpCode, OpSeen>* seen) {
  ByteReader in(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  Generator gen(&in);
  std::optional<ir::Graph> g = gen.Build();
  if (!g) return;
  const int64_t s = gen.bindings().at("S");
  for (const ir::Node& n : g->nodes()) {
    OpSeen& o = (*seen)[n.op];
    ++o.count;
    if (o.bytes.empty() || bytes.size() < o.bytes.size()) o.bytes = bytes;
    for (const ValueType& t : WorkTypes(*g, n)) {
      absl::StatusOr<int64_t> numel = ir::NumElements(t.shape).Evaluate(gen.bindings());
      if (numel.ok() && *numel == 0) o.zero_size = true;
      for (const SymExpr& d : t.shape) {
        if (!d.IsConstant()) {
          o.symbolic = true;
          if (s == 0) o.s_zero = true;
        }
      }
    }
  }
}

// Random inputs of the lengths the corpus has (the generator reads a few bytes a step).
std::map<OpCode, OpSeen> RandomInputs(int count) {
  std::mt19937_64 rng(16);
  std::map<OpCode, OpSeen> seen;
  for (int i = 0; i < count; ++i) {
    std::string bytes(16 + rng() % 240, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    Record(bytes, &seen);
  }
  return seen;
}

std::vector<OpCode> AllOps() {
  std::vector<OpCode> ops;
  for (int i = 0; i < ir::kNumOps; ++i) ops.push_back(static_cast<OpCode>(i));
  return ops;
}

TEST(GraphGenerator, GeneratesEveryOpOfOpsDef) {
  const std::map<OpCode, OpSeen> seen = RandomInputs(6000);
  for (OpCode op : AllOps()) {
    auto it = seen.find(op);
    EXPECT_TRUE(it != seen.end() && it->second.count >= 5)
        << "ir/ops.def has '" << ir::OpName(op) << "', which the generator (almost) never "
        << "builds: add it to tests/fuzz/graph_generator.h";
  }
}

TEST(GraphGenerator, EveryOpSeesZeroSizeAndSymbolicOperands) {
  const std::map<OpCode, OpSeen> seen = RandomInputs(6000);
  for (OpCode op : AllOps()) {
    auto it = seen.find(op);
    if (it == seen.end()) continue;  // GeneratesEveryOpOfOpsDef reports it
    SCOPED_TRACE(ir::OpName(op));
    EXPECT_TRUE(it->second.zero_size) << "never with a zero-size operand";
    // A constant's shape is constant by definition.
    if (op == OpCode::kConstant) continue;
    EXPECT_TRUE(it->second.symbolic) << "never with a symbolic dim";
    EXPECT_TRUE(it->second.s_zero) << "never with a symbolic dim and S = 0";
  }
}

// Not a test: rewrites the corpus's cover_*.bin files (run it with
// --gtest_also_run_disabled_tests after a generator change re-rolled what old inputs
// build). A greedy cover over random inputs of every op with a zero-size, a symbolic and
// an S = 0 operand, the cases CommittedCorpusReachesEveryOpAndEdge asks for.
TEST(GraphGenerator, DISABLED_WriteCover) {
  std::mt19937_64 rng(23);
  std::vector<std::pair<std::string, std::set<std::string>>> inputs;
  auto features = [](const std::string& bytes) {
    std::map<OpCode, OpSeen> seen;
    Record(bytes, &seen);
    std::set<std::string> f;
    for (const auto& [op, o] : seen) {
      const std::string name(ir::OpName(op));
      f.insert(name);
      if (o.zero_size) f.insert(name + " zero");
      if (o.symbolic) f.insert(name + " symbolic");
      if (o.s_zero) f.insert(name + " s0");
    }
    return f;
  };
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(16 + rng() % 240, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    inputs.push_back({bytes, features(bytes)});
  }
  std::set<std::string> covered;
  const std::string dir = GRAPHJIT_FUZZ_CORPUS_DIR "/differential";
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("cover_", 0) == 0) std::filesystem::remove(e.path());
  }
  for (int n = 0;; ++n) {
    size_t best = 0, best_gain = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      size_t gain = 0;
      for (const std::string& f : inputs[i].second) gain += !covered.contains(f);
      if (gain > best_gain) best = i, best_gain = gain;
    }
    if (best_gain == 0) break;
    covered.insert(inputs[best].second.begin(), inputs[best].second.end());
    std::ofstream(absl::StrCat(dir, "/cover_", n < 10 ? "0" : "", n, ".bin"), std::ios::binary)
        << inputs[best].first;
  }
}

// The replay test only compares what the corpus generates: each op needs seeds, with a
// zero-size, a symbolic and an S = 0 operand. On failure the message gives a generated
// input for each op that lacks one (the cover_*.bin files were picked that way).
TEST(GraphGenerator, CommittedCorpusReachesEveryOpAndEdge) {
  std::map<OpCode, OpSeen> corpus;
  int files = 0;
  for (const std::filesystem::directory_entry& e :
       std::filesystem::directory_iterator(GRAPHJIT_FUZZ_CORPUS_DIR "/differential")) {
    std::ifstream in(e.path(), std::ios::binary);
    Record(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
           &corpus);
    ++files;
  }
  ASSERT_GT(files, 0);
  const std::map<OpCode, OpSeen> random = RandomInputs(6000);
  std::vector<std::string> missing;
  for (OpCode op : AllOps()) {
    const OpSeen& o = corpus[op];
    std::vector<std::string> lacks;
    if (o.count == 0) lacks.push_back("the op");
    if (!o.zero_size) lacks.push_back("zero size");
    if (op != OpCode::kConstant && !o.symbolic) lacks.push_back("a symbolic dim");
    if (op != OpCode::kConstant && !o.s_zero) lacks.push_back("S = 0");
    if (lacks.empty()) continue;
    auto it = random.find(op);
    missing.push_back(
        absl::StrCat(ir::OpName(op), ": ", absl::StrJoin(lacks, ", "), " (an input with the op: ",
                     it == random.end() ? "none" : absl::BytesToHexString(it->second.bytes), ")"));
  }
  EXPECT_TRUE(missing.empty()) << "tests/fuzz/corpus/differential lacks: "
                               << absl::StrJoin(missing, "; ");
}

// The harness's skip of outputs computed from a cancelled sum: only through an op that
// amplifies rounding (log, a divisor), never through sums and products, and not at all
// when the sum does not cancel.
TEST(CancelledOutputs, SkipsOnlyAmplifiedCancelledSums) {
  absl::StatusOr<ir::Graph> g = ir::ParseGraph(R"(graph g {
  %0 = input {name="x"} : f64[4]
  %1 = reduce_mean(%0) {axis=-1, keepdim=true} : f64[1]
  %2 = log(%1) : f64[1]
  %3 = gelu_tanh(%2) : f64[1]
  %4 = constant {value=[2.0]} : f64[]
  %5 = mul(%1, %4) : f64[1]
  %6 = div(%0, %1) : f64[4]
  %7 = div(%1, %4) : f64[1]
  %8 = add(%0, %0) : f64[4]
  %9 = log(%8) : f64[4]
  return %3, %1, %5, %6, %7, %9
})");
  ASSERT_TRUE(g.ok()) << g.status();
  auto x = [](std::vector<double> v) {
    return runtime::TensorMap{{"x", *runtime::Tensor::FromDoubles(DType::kF64, {4}, v)}};
  };
  // The mean of +-1e300 and small values is their rounding: gelu(log(mean)) and x / mean
  // are skipped; the mean, 2 * mean, mean / 2 and log(x + x) (no sum) are compared.
  EXPECT_EQ(CancelledOutputs(*g, x({1e300, -1e300, 0.9, 2.7}), {}, {}),
            (std::vector<bool>{true, false, false, true, false, false}));
  // Must not fire: a mean that does not cancel.
  EXPECT_EQ(CancelledOutputs(*g, x({1.0, -2.0, 3.5, 4.0}), {}, {}), std::vector<bool>(6, false));
}

}  // namespace
}  // namespace graphjit::fuzz
