// Fuzz target: differential testing of the compiler against the interpreter. The bytes
// drive a generator of small well-typed graphs (graph_generator.h: every op of ir/ops.def,
// f32/f64/i64/bool values, exact and symbolic dims, dims and symbols of size 0 and
// 1, inputs with inf/nan/huge values, params folded as constants); each graph is
// interpreted and compiled (CompiledGraph: passes, lowering, LLVM, ORC) and the outputs
// must agree: integers and bools exactly, floats within 1e-9 (f64) / 2e-3 (f32) relative
// to 1 + |value|, integers cast from floats and f64 values cast from f32 on the way like
// those floats. Compiled float sums may add in another order (codegen marks them
// `reassoc` so they vectorize), which no fixed tolerance survives when huge inputs cancel
// (1e300 - 1e300 + x): for graphs that sum, the tolerance grows with the magnitudes
// summed, estimated by interpreting the graph on the absolute values of its inputs and
// params (sin, tanh and sigmoid read as abs: their error is their argument's). An output
// computed from a cancelled sum (|sum| far below that magnitude) through log, sqrt, a
// comparison or a normalization is not compared at all: its value is the sum's rounding.
// Where the interpreter rejects the call (a gather index out of range), the
// compiled code still runs, and must not crash.
//
// The graph of a failing input is printed on stderr (textual IR) before the abort. With
// GRAPHJIT_FUZZ_PRINT set, every input's graph, bindings and input values are printed
// before it runs, so a crash inside compiled code (which no property check sees) can be
// read too, and a mismatch checked by hand.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/compiled/compiled_graph.h"
#include "runtime/interpreter.h"
#include "tests/fuzz/differential_tolerance.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/graph_generator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace gj = graphjit;
  using gj::fuzz::Fail;
  if (size > 4096) return 0;
  gj::fuzz::ByteReader in(data, size);
  gj::fuzz::Generator gen(&in);
  std::optional<gj::ir::Graph> graph = gen.Build();
  if (!graph) return 0;
  const gj::ir::Bindings& bindings = gen.bindings();
  // The generator keeps every op's result small, not the inputs it makes up for them: a
  // scatter_add's updates are its indices' shape times a table row (found: an unused
  // f32[S, S, S, S, S, S] at S = 7, more than MakeTensor makes). Skipped, as
  // fuzz_interpret skips them.
  if (!gj::fuzz::ShapesAreSmall(*graph, bindings, 1 << 16)) return 0;
  if (std::getenv("GRAPHJIT_FUZZ_PRINT") != nullptr) {
    std::fprintf(stderr, "S=%lld\n%s\n", static_cast<long long>(bindings.at("S")),
                 gj::ir::PrintGraph(*graph).c_str());
  }

  gj::runtime::TensorMap inputs;
  uint64_t seed = 1;
  for (gj::ir::ValueId id : graph->Inputs()) {
    const gj::ir::Node& n = graph->node(id);
    gj::fuzz::ValueKind kind = gj::fuzz::ValueKind::kNormal;
    int64_t bound = 1;
    for (const gj::fuzz::IndexInput& idx : gen.index_inputs()) {
      if (idx.name == n.name()) {
        kind = gj::fuzz::ValueKind::kIndex;
        bound = idx.bound.Evaluate(bindings).value_or(1);
      }
    }
    std::optional<gj::runtime::Tensor> t =
        gj::fuzz::MakeTensor(n.type, bindings, seed++ * 104729, kind, bound);
    if (!t) Fail("cannot make an input", &*graph);
    if (std::getenv("GRAPHJIT_FUZZ_PRINT") != nullptr) {
      std::string values;
      for (double v : t->ToDoubles()) absl::StrAppend(&values, " ", absl::StrFormat("%.17g", v));
      std::fprintf(stderr, "%s:%s\n", n.name().c_str(), values.c_str());
    }
    inputs[n.name()] = *t;
  }

  absl::StatusOr<std::vector<gj::runtime::Tensor>> want =
      gj::runtime::Interpret(*graph, inputs, gen.params(), bindings);
  absl::StatusOr<std::unique_ptr<gj::compiler::CompiledGraph>> compiled =
      gj::compiler::CompiledGraph::Compile(*graph, gen.params());
  if (!compiled.ok()) {
    // Constant folding evaluates with the interpreter's kernels, so it reports the same
    // errors (a gather index out of range among the params) the interpreter does.
    if (!want.ok()) return 0;
    Fail("compile failed: " + compiled.status().ToString(), &*graph);
  }
  absl::StatusOr<std::vector<gj::runtime::Tensor>> got = (*compiled)->Run(inputs, bindings);
  if (!want.ok()) return 0;  // the compiled code ran (and did not crash); nothing to compare
  if (!got.ok()) Fail("compiled run failed: " + got.status().ToString(), &*graph);
  if (got->size() != want->size()) Fail("output counts differ", &*graph);
  std::optional<std::vector<gj::runtime::Tensor>> magnitudes;
  std::vector<bool> cancelled(want->size(), false);
  if (gj::fuzz::Sums(*graph)) {
    absl::StatusOr<std::vector<gj::runtime::Tensor>> m =
        gj::runtime::Interpret(gj::fuzz::MagnitudeGraph(*graph), gj::fuzz::Absolute(inputs),
                               gj::fuzz::Absolute(gen.params()), bindings);
    if (m.ok() && m->size() == want->size()) magnitudes = *std::move(m);
    cancelled = gj::fuzz::CancelledOutputs(*graph, inputs, gen.params(), bindings);
  }
  for (size_t i = 0; i < want->size(); ++i) {
    if (cancelled[i]) continue;  // any value is right: see CancelledOutputs
    const gj::runtime::Tensor& w = (*want)[i];
    // An integer or f64 cast from a (narrower) float on the way inherits that float's
    // tolerance.
    const std::optional<double> cast_tol =
        gj::fuzz::CastFromFloatTolerance(*graph, graph->outputs()[i]);
    double tol = w.dtype() == gj::ir::DType::kF32 ? 2e-3 : 1e-9;
    if (cast_tol) tol = gj::ir::IsFloat(w.dtype()) ? std::max(tol, *cast_tol) : *cast_tol;
    const gj::runtime::Tensor* magnitude = magnitudes ? &(*magnitudes)[i] : nullptr;
    if (std::optional<std::string> diff =
            gj::fuzz::Compare(w, (*got)[i], tol, magnitude, /*integers_exact=*/!cast_tol)) {
      Fail(absl::StrCat("output ", i, " differs (S=", bindings.at("S"), "): ", *diff), &*graph);
    }
  }
  return 0;
}
