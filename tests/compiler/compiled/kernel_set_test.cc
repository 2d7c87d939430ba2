// Kernels are content-addressed: equal kernels compile once - across the layers of one
// graph and across graphs (the S-independent kernels of exact decode entries) - their
// code lives while some graph uses it, and the canonical form tells apart what differs.
#include "compiler/compiled/kernel_set.h"

#include <algorithm>

#include "compiler/compiled/compiled_graph.h"
#include "compiler/lower/kernel_unit.h"
#include "compiler/store/content_store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ir/parser.h"
#include "models/model.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {
namespace {

std::unique_ptr<CompiledGraph> CompileModel(const std::string& spec, ir::Bindings fixed = {}) {
  auto model = *models::CreateModel(spec);
  models::TraceOptions options;
  options.fixed_dims = std::move(fixed);
  absl::StatusOr<ir::Graph> graph = models::TraceModel(*model, options);
  EXPECT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::unique_ptr<CompiledGraph>> cg =
      CompiledGraph::Compile(*graph, model->params());
  EXPECT_TRUE(cg.ok()) << cg.status();
  return *std::move(cg);
}

TEST(KernelSet, TheLayersOfAModelShareTheirKernels) {
  auto one = CompileModel("tinygpt:L=1,d=32,T=8,V=11,B=1,seed=5");
  auto four = CompileModel("tinygpt:L=4,d=32,T=8,V=11,B=1,seed=5");
  const KernelSetStats& s1 = one->kernels().stats();
  const KernelSetStats& s4 = four->kernels().stats();
  EXPECT_GT(s4.kernels, 3 * s1.kernels / 2);  // more layers, more kernels...
  EXPECT_LT(s4.distinct, s4.kernels);         // ...but many equal ones
  // The four layers are one layer's kernels on other buffers: depth adds few new ones.
  EXPECT_LE(s4.distinct, s1.distinct + 8) << s1.distinct << " vs " << s4.distinct;
  EXPECT_EQ(s4.compiled + s4.reused + s4.loaded, s4.distinct);
}

// Each compiled module is reported with its kernels, times and IR instruction counts;
// modules shared from the store are not (they cost nothing here).
TEST(KernelSet, CompiledModulesReportTheirKernelsAndIrSize) {
  auto first = CompileModel("decode:d=32,H=4,G=2,dh=8,f=64,seed=41", {{"S", 9}});
  const KernelSetStats& s = first->kernels().stats();
  ASSERT_EQ(static_cast<int>(s.compiled_modules.size()), s.modules);
  int kernels = 0;
  int64_t instructions = 0;
  for (const KernelSetStats::Module& m : s.compiled_modules) {
    kernels += static_cast<int>(m.kernels.size());
    EXPECT_GT(m.timings.ir_instructions, 0);
    EXPECT_GT(m.timings.optimized_instructions, 0);
    EXPECT_GT(m.timings.optimize + m.timings.codegen, 0);
    instructions += m.timings.ir_instructions;
    for (const std::string& name : m.kernels) EXPECT_EQ(name[0], 'k') << name;
  }
  EXPECT_EQ(kernels, s.compiled);
  EXPECT_EQ(instructions, s.timings.ir_instructions);  // the sum is the set's own count
  auto again = CompileModel("decode:d=32,H=4,G=2,dh=8,f=64,seed=41", {{"S", 9}});
  EXPECT_TRUE(again->kernels().stats().compiled_modules.empty());  // all shared
}

TEST(KernelSet, ExactEntriesShareTheKernelsThatDoNotDependOnS) {
  auto s5 = CompileModel("decode:d=32,H=4,G=2,dh=8,f=64", {{"S", 5}});
  auto s6 = CompileModel("decode:d=32,H=4,G=2,dh=8,f=64", {{"S", 6}});
  // Copies: s5 is destroyed below.
  const KernelSetStats a = s5->kernels().stats();
  const KernelSetStats b = s6->kernels().stats();
  EXPECT_EQ(a.reused, 0);
  EXPECT_GT(b.reused, a.distinct / 2);  // projections, norms, MLP: the same code
  EXPECT_GT(b.compiled, 0);             // attention over S = 6 is new
  // Shared means the same machine code, found by the same content keys.
  std::vector<ContentKey> ka = s5->kernels().keys(), kb = s6->kernels().keys();
  int same = 0;
  for (const ContentKey& k : kb) same += std::count(ka.begin(), ka.end(), k) > 0 ? 1 : 0;
  EXPECT_GE(same, b.reused);

  // Code lives while a graph uses it: dropping S=5 keeps what S=6 shares.
  const int64_t live_before = KernelStore::Default().stats().live;
  s5.reset();
  const int64_t live_after = KernelStore::Default().stats().live;
  EXPECT_EQ(live_before - live_after, a.distinct - b.reused);
  // ...and S=6 still runs right on the shared code.
  auto model = *models::CreateModel("decode:d=32,H=4,G=2,dh=8,f=64");
  auto in = *model->ExampleInputs({{"S", 6}}, 1);
  auto want = runtime::Interpret(s6->graph(), in, s6->params(), {{"P", 5}});
  auto got = s6->Run(in, {{"P", 5}});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-12);
  s6.reset();
  EXPECT_EQ(KernelStore::Default().stats().live, live_after - b.distinct);
}

TEST(KernelSet, TheCanonicalFormKeepsWhatMattersAndDropsNames) {
  auto program_of = [](const std::string& text) {
    absl::StatusOr<ir::Graph> g = ir::ParseGraph(text);
    EXPECT_TRUE(g.ok()) << g.status();
    absl::StatusOr<std::unique_ptr<CompiledGraph>> cg = CompiledGraph::Compile(*g, {});
    EXPECT_TRUE(cg.ok()) << cg.status();
    return *std::move(cg);
  };
  // Same computation, other names: one kernel text. Another constant (by one ulp of
  // printing precision) or another dtype: another text.
  auto a = program_of(
      "graph a {\n  %0 = input {name=\"x\"} : f64[8]\n  %1 = constant {value=[0.1234567]} : "
      "f64[]\n  %2 = mul(%0, %1) : f64[8]\n  return %2\n}\n");
  auto b = program_of(
      "graph b {\n  %0 = input {name=\"y\"} : f64[8]\n  %1 = constant {value=[0.1234567]} : "
      "f64[]\n  %2 = mul(%0, %1) : f64[8]\n  return %2\n}\n");
  auto c = program_of(
      "graph c {\n  %0 = input {name=\"x\"} : f64[8]\n  %1 = constant {value=[0.1234568]} : "
      "f64[]\n  %2 = mul(%0, %1) : f64[8]\n  return %2\n}\n");
  auto d = program_of(
      "graph d {\n  %0 = input {name=\"x\"} : f32[8]\n  %1 = constant {value=[0.1234567]} : "
      "f32[]\n  %2 = mul(%0, %1) : f32[8]\n  return %2\n}\n");
  ASSERT_EQ(a->program().kernels.size(), 1u);
  const std::string ta = MakeKernelUnit(a->program(), 0).text;
  EXPECT_EQ(ta, MakeKernelUnit(b->program(), 0).text);
  EXPECT_NE(ta, MakeKernelUnit(c->program(), 0).text);
  EXPECT_NE(ta, MakeKernelUnit(d->program(), 0).text);
  EXPECT_EQ(a->kernels().keys(), b->kernels().keys());
  EXPECT_NE(a->kernels().keys(), c->kernels().keys());
}

TEST(KernelSet, ParallelCompileGivesTheSameKeysAsOneThread) {
  auto model = *models::CreateModel("decode:d=32,H=4,G=2,dh=8,f=64,seed=11");
  ir::Graph g = *models::TraceModel(*model);
  CompileEnv env1 = CompileEnv::FromEnvironment(), env2 = env1;
  env1.compile_threads = 1;
  env2.compile_threads = 2;
  CompileGraphOptions one, two;
  one.env = &env1;
  two.env = &env2;
  auto a = *CompiledGraph::Compile(g, model->params(), one);
  EXPECT_EQ(a->kernels().stats().threads, 1);
  a.reset();  // so the second compiles everything again, on two threads
  auto b = *CompiledGraph::Compile(g, model->params(), two);
  EXPECT_EQ(b->kernels().stats().threads, 2);
  EXPECT_EQ(b->kernels().stats().compiled, b->kernels().stats().distinct);
  auto in = *model->ExampleInputs({{"S", 9}}, 3);
  auto want = runtime::Interpret(b->graph(), in, b->params(), {{"P", 8}});
  auto got = b->Run(in, {{"P", 8}});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_LT(runtime::MaxAbsDiff((*want)[0], (*got)[0]), 1e-12);
}

}  // namespace
}  // namespace graphjit::compiler
