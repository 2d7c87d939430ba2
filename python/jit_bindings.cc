// graphjit.jit and graphjit.ops: a Python function written on graphjit Values, traced on
// its first call of each input signature (and, as the policy says, shape) and compiled
// under guards like compiler::Jit's C++ functions; numpy arrays in and out.
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/entries/policy.h"
#include "compiler/jit.h"
#include "compiler/orc/code_tier.h"
#include "frontend/ops.h"
#include "frontend/value.h"
#include "ir/clock.h"
#include "ir/sym_expr.h"
#include "python/arrays.h"
#include "python/bindings.h"
#include "python/py_function.h"
#include "runtime/interpreter.h"

namespace graphjit::python {
namespace {

using frontend::Value;
using runtime::Tensor;

// A Python exception raised by the traced function, kept (with the GIL) until the call
// that traced it can raise it again; one per calling thread (traces run on the caller's).
thread_local std::optional<py::error_already_set>* pending_error = nullptr;

// `v`, or Python's error: an op whose operands' shapes or dtypes do not fit leaves an
// invalid Value and the context's status says why.
Value Checked(Value v, const Value& like) {
  if (!v.valid()) {
    absl::Status s = like.context()->status();
    Raise(s.ok() ? absl::InvalidArgumentError("invalid operands") : s);
  }
  return v;
}

// A Python number or Value as a Value beside `like`.
Value Operand(const Value& like, const py::handle& x) {
  if (py::isinstance<Value>(x)) return x.cast<Value>();
  if (py::isinstance<py::float_>(x) || py::isinstance<py::int_>(x) ||
      py::isinstance<py::bool_>(x)) {
    return frontend::Scalar(like, x.cast<double>());
  }
  throw py::type_error(absl::StrCat("expected a graphjit Value or a number, got ",
                                    std::string(py::str(py::type::of(x)))));
}

py::tuple ShapeOf(const Value& v) {
  py::tuple t(v.rank());
  for (int i = 0; i < v.rank(); ++i) {
    const ir::SymExpr& d = v.shape()[i];
    if (std::optional<int64_t> c = d.AsConstant()) {
      t[i] = py::int_(*c);
    } else {
      t[i] = py::str(d.ToString());
    }
  }
  return t;
}

// Dims as Python gives them: ints, or dim expressions of the function's symbols ("S",
// "S-1"), as Value.shape returns them.
ir::Shape ToShape(const py::sequence& dims) {
  ir::Shape shape;
  for (const auto& d : dims) {
    if (py::isinstance<py::int_>(d)) {
      shape.push_back(ir::SymExpr(d.cast<int64_t>()));
    } else if (py::isinstance<py::str>(d)) {
      shape.push_back(ValueOrRaise(ir::ParseSymExpr(d.cast<std::string>())));
    } else {
      throw py::type_error(absl::StrCat("a dim is an int or a dim expression (str), not ",
                                        std::string(py::str(py::type::of(d)))));
    }
  }
  return shape;
}

// x[a:b, ..., c:d]: slices along the leading axes (step 1), ints and Ellipsis not.
Value Index(const Value& x, const py::object& key) {
  py::tuple keys = py::isinstance<py::tuple>(key) ? key.cast<py::tuple>() : py::make_tuple(key);
  if (static_cast<int>(keys.size()) > x.rank()) {
    throw py::index_error(absl::StrCat(keys.size(), " indices for a value of rank ", x.rank()));
  }
  Value v = x;
  for (int axis = 0; axis < static_cast<int>(keys.size()); ++axis) {
    if (!py::isinstance<py::slice>(keys[axis])) {
      throw py::type_error("graphjit Values are indexed by slices (x[1:3, :]), not " +
                           std::string(py::str(py::type::of(keys[axis]))));
    }
    py::object s = keys[axis];
    if (!s.attr("step").is_none() && s.attr("step").cast<int64_t>() != 1) {
      throw py::value_error("slices of graphjit Values take step 1");
    }
    const ir::SymExpr dim = v.shape()[axis];
    auto bound = [&](const py::object& b, ir::SymExpr dflt) {
      if (b.is_none()) return dflt;
      const int64_t i = b.cast<int64_t>();
      return i < 0 ? dim + ir::SymExpr(i) : ir::SymExpr(i);
    };
    v = Checked(frontend::Slice(v, axis, bound(s.attr("start"), ir::SymExpr(0)),
                                bound(s.attr("stop"), dim)),
                x);
  }
  return v;
}

// Runs `body` with the GIL released; an exception the traced function raised meanwhile
// (kept by the trace, which holds the GIL) is raised here, in place of body's result.
template <typename Body>
auto WithoutGil(Body body) -> decltype(body()) {
  std::optional<py::error_already_set> error;
  pending_error = &error;
  decltype(body()) result;
  {
    py::gil_scoped_release release;
    result = body();
  }
  pending_error = nullptr;
  if (error.has_value()) throw *error;
  return result;
}

// A Python function under compiler::Jit: inputs by its parameters' names.
class TracedFunction {
 public:
  TracedFunction(py::function fn, std::string policy, std::string tier, py::object dynamic,
                 py::object weights)
      : fn_(std::move(fn)), signature_(SignatureOf(fn_, weights)) {
    options_.policy = ValueOrRaise(compiler::entries::ParsePolicy(policy));
    options_.compile.codegen.tier = ValueOrRaise(compiler::ParseCodeTier(tier));
    if (!dynamic.is_none()) {
      // {"x": {1: "S"}}: dim 1 of input x is the dynamic dim S.
      for (const auto& [input, axes] : dynamic.cast<py::dict>()) {
        for (const auto& [axis, symbol] : axes.cast<py::dict>()) {
          options_.dynamic_dims.push_back(
              {std::string(py::str(input)), axis.cast<int>(), std::string(py::str(symbol))});
        }
      }
    }
    // The function with its inputs, traced with the GIL held. The compiler keeps copies
    // of the trace function where it likes; the last one lets go of the Python function
    // with the GIL held, wherever that happens. Parameters bound to weights read them
    // (ctx.Param: constants the passes may fold).
    std::shared_ptr<py::function> held(new py::function(fn_), [](py::function* f) {
      py::gil_scoped_acquire gil;
      delete f;
    });
    compiler::TraceFn trace = [held, signature = signature_,
                               single = single_](frontend::Context& ctx) {
      py::gil_scoped_acquire gil;
      const py::function& fn = *held;
      std::vector<Value> outputs;
      try {
        py::list args;
        for (const std::string& n : signature.params) {
          args.append(py::cast(signature.IsWeight(n) ? ctx.Param(n) : ctx.Input(n)));
        }
        bool one = false;
        outputs = ReturnedValues(fn(*args), &one);
        single->store(one);
      } catch (py::error_already_set& e) {
        if (pending_error != nullptr && !pending_error->has_value()) *pending_error = e;
        outputs.clear();
      } catch (const std::exception& e) {
        if (pending_error != nullptr && !pending_error->has_value()) {
          PyErr_SetString(PyExc_RuntimeError, e.what());
          *pending_error = py::error_already_set();
        }
        outputs.clear();
      }
      return outputs;
    };
    fn_jit_ = ValueOrRaise(
        compiler::Jit(signature_.name, std::move(trace), signature_.weights, options_));
  }

  py::object Call(const py::args& args, const py::kwargs& kwargs) {
    const runtime::TensorMap inputs = signature_.Inputs(args, kwargs);
    return Results(ValueOrRaise(
        WithoutGil([&]() -> absl::StatusOr<std::vector<Tensor>> { return fn_jit_->Run(inputs); })));
  }

  // The entry's optimized graph run by the interpreter (node by node, no compiled code):
  // demo 4's middle row. The entry is compiled first on a miss, like a call.
  py::object Interpret(const py::args& args, const py::kwargs& kwargs) {
    const runtime::TensorMap inputs = signature_.Inputs(args, kwargs);
    return Results(ValueOrRaise(WithoutGil([&]() -> absl::StatusOr<std::vector<Tensor>> {
      absl::StatusOr<std::shared_ptr<const compiler::entries::CacheEntry>> entry =
          fn_jit_->Acquire(inputs);
      if (!entry.ok()) return entry.status();
      const compiler::CompiledGraph& cg = (*entry)->compiled();
      return runtime::Interpret(cg.graph(), inputs, cg.params());
    })));
  }

  // Seconds per call of the same compiled call made from C++ (no Python between calls):
  // the median of 5 rounds of `repeat` calls, after one call that compiles on a miss.
  // Beside a Python-side timing of f(...) it shows the binding's own cost per call.
  double TimeNative(const py::args& args, int64_t repeat, const py::kwargs& kwargs) {
    if (repeat < 1) throw py::value_error("time_native: repeat must be >= 1");
    const runtime::TensorMap inputs = signature_.Inputs(args, kwargs);
    std::vector<double> rounds;
    absl::Status status = WithoutGil([&]() -> absl::Status {
      absl::Status s = fn_jit_->Run(inputs).status();
      for (int r = 0; r < 5 && s.ok(); ++r) {
        const ir::Clock::time_point start = ir::Clock::now();
        for (int64_t i = 0; i < repeat && s.ok(); ++i) s = fn_jit_->Run(inputs).status();
        rounds.push_back(ir::SecondsSince(start) / static_cast<double>(repeat));
      }
      return s;
    });
    if (!status.ok()) Raise(status);
    std::sort(rounds.begin(), rounds.end());
    return rounds[rounds.size() / 2];
  }

  py::dict Stats() const { return StatsOf(*fn_jit_); }

  std::string Explain(const py::args& args) {
    runtime::TensorMap inputs;
    const std::vector<std::string>& names = signature_.inputs;
    for (size_t i = 0; i < args.size() && i < names.size(); ++i) {
      inputs[names[i]] = ToTensorOfItsDtype("input", names[i], args[i]);
    }
    return fn_jit_->ExplainMiss(inputs);
  }

 private:
  py::object Results(std::vector<Tensor> out) const {
    return ReturnedArrays(std::move(out), single_->load());
  }

  py::function fn_;
  PyFunctionSignature signature_;
  compiler::JitOptions options_;
  std::unique_ptr<compiler::JitFunction> fn_jit_;
  // Whether the function returned one Value (one array back) rather than a sequence.
  std::shared_ptr<std::atomic<bool>> single_ = std::make_shared<std::atomic<bool>>(true);
};

template <Value (*F)(const Value&)>
void Unary(py::module_& ops, const char* name) {
  ops.def(
      name, [](const Value& x) { return Checked(F(x), x); }, py::arg("x"), py::keep_alive<0, 1>());
}

}  // namespace

void DefineJit(py::module_& m) {
  py::class_<Value>(m, "Value", "A value of a function graphjit traces.")
      .def_property_readonly("shape", &ShapeOf, "Dims: ints, or names of dynamic dims.")
      .def_property_readonly("dtype",
                             [](const Value& v) { return std::string(ir::DTypeName(v.dtype())); })
      .def_property_readonly("ndim", &Value::rank)
      .def(
          "__add__", [](const Value& a, py::object b) { return Checked(a + Operand(a, b), a); },
          py::keep_alive<0, 1>())
      .def(
          "__radd__", [](const Value& a, py::object b) { return Checked(Operand(a, b) + a, a); },
          py::keep_alive<0, 1>())
      .def(
          "__sub__", [](const Value& a, py::object b) { return Checked(a - Operand(a, b), a); },
          py::keep_alive<0, 1>())
      .def(
          "__rsub__", [](const Value& a, py::object b) { return Checked(Operand(a, b) - a, a); },
          py::keep_alive<0, 1>())
      .def(
          "__mul__", [](const Value& a, py::object b) { return Checked(a * Operand(a, b), a); },
          py::keep_alive<0, 1>())
      .def(
          "__rmul__", [](const Value& a, py::object b) { return Checked(Operand(a, b) * a, a); },
          py::keep_alive<0, 1>())
      .def(
          "__truediv__", [](const Value& a, py::object b) { return Checked(a / Operand(a, b), a); },
          py::keep_alive<0, 1>())
      .def(
          "__rtruediv__",
          [](const Value& a, py::object b) { return Checked(Operand(a, b) / a, a); },
          py::keep_alive<0, 1>())
      .def(
          "__pow__",
          [](const Value& a, py::object b) { return Checked(frontend::Pow(a, Operand(a, b)), a); },
          py::keep_alive<0, 1>())
      .def(
          "__matmul__",
          [](const Value& a, const Value& b) { return Checked(frontend::Matmul(a, b), a); },
          py::keep_alive<0, 1>())
      .def(
          "__neg__", [](const Value& a) { return Checked(-a, a); }, py::keep_alive<0, 1>())
      .def("__getitem__", &Index, py::keep_alive<0, 1>())
      .def("__repr__", [](const Value& v) {
        return absl::StrCat("graphjit.Value(", ir::DTypeName(v.dtype()),
                            ", shape=", std::string(py::str(ShapeOf(v))), ")");
      });

  for (const auto& [name, op] :
       std::vector<std::pair<const char*, ir::OpCode>>{{"__lt__", ir::OpCode::kLt},
                                                       {"__le__", ir::OpCode::kLe},
                                                       {"__gt__", ir::OpCode::kGt},
                                                       {"__ge__", ir::OpCode::kGe}}) {
    m.attr("Value").cast<py::class_<Value>>().def(
        name,
        [op = op](const Value& a, py::object b) {
          return Checked(frontend::Compare(op, a, Operand(a, b)), a);
        },
        py::keep_alive<0, 1>());
  }

  py::module_ ops = m.def_submodule("ops", "graphjit's ops on traced Values");
  Unary<frontend::Exp>(ops, "exp");
  Unary<frontend::Log>(ops, "log");
  Unary<frontend::Sqrt>(ops, "sqrt");
  Unary<frontend::Rsqrt>(ops, "rsqrt");
  Unary<frontend::Tanh>(ops, "tanh");
  Unary<frontend::Sigmoid>(ops, "sigmoid");
  Unary<frontend::Silu>(ops, "silu");
  Unary<frontend::GeluTanh>(ops, "gelu_tanh");
  Unary<frontend::Erf>(ops, "erf");
  Unary<frontend::Sin>(ops, "sin");
  Unary<frontend::Cos>(ops, "cos");
  ops.def(
      "abs", [](const Value& x) { return Checked(frontend::Unary(ir::OpCode::kAbs, x), x); },
      py::arg("x"), py::keep_alive<0, 1>());
  ops.def(
      "relu",
      [](const Value& x) { return Checked(frontend::Maximum(x, frontend::Scalar(x, 0)), x); },
      py::arg("x"), py::keep_alive<0, 1>());
  ops.def(
      "rope",
      [](const Value& x, const Value& cos, const Value& sin) {
        return Checked(frontend::Rope(x, cos, sin), x);
      },
      py::arg("x"), py::arg("cos"), py::arg("sin"), py::keep_alive<0, 1>(),
      "Rotary embedding over the last axis: x * cos + rotate_half(x) * sin.");
  ops.def(
      "causal_mask", [](const Value& s) { return Checked(frontend::CausalMask(s), s); },
      py::arg("scores"), py::keep_alive<0, 1>(),
      "-inf above the diagonal of the last two axes (scores of later positions).");
  ops.def(
      "layer_norm",
      [](const Value& x, const Value& w, const Value& b, double eps) {
        return Checked(frontend::LayerNorm(x, w, b, eps), x);
      },
      py::arg("x"), py::arg("weight"), py::arg("bias"), py::arg("eps") = 1e-5,
      py::keep_alive<0, 1>());
  ops.def(
      "kv_write",
      [](const Value& cache, const Value& rows, py::object pos) {
        if (cache.rank() < 2 || rows.rank() < 2) {
          throw py::value_error("kv_write: the cache and the rows need rank >= 2");
        }
        ir::SymExpr at;
        if (pos.is_none()) {
          at = cache.shape()[cache.rank() - 2] - rows.shape()[rows.rank() - 2];
        } else if (py::isinstance<py::int_>(pos)) {
          at = ir::SymExpr(pos.cast<int64_t>());
        } else {
          at = ValueOrRaise(ir::ParseSymExpr(std::string(py::str(pos))));
        }
        return Checked(frontend::KvWrite(cache, rows, at), cache);
      },
      py::arg("cache"), py::arg("rows"), py::arg("pos") = py::none(), py::keep_alive<0, 1>(),
      "The cache with `rows` written at row `pos` of its second-to-last axis: an int, a dim "
      "expression of the cache's symbols (\"S-1\"), or None for its last rows.");
  ops.def(
      "expand",
      [](const Value& x, const py::sequence& shape) {
        return Checked(frontend::Expand(x, ToShape(shape)), x);
      },
      py::arg("x"), py::arg("shape"), py::keep_alive<0, 1>());
  ops.def(
      "gather",
      [](const Value& table, const Value& indices) {
        return Checked(frontend::Gather(table, indices), table);
      },
      py::arg("table"), py::arg("indices"), py::keep_alive<0, 1>(),
      "Rows of `table` (along its first axis) at integer `indices`.");
  ops.def(
      "cumsum", [](const Value& x, int64_t axis) { return Checked(frontend::CumSum(x, axis), x); },
      py::arg("x"), py::arg("axis") = -1, py::keep_alive<0, 1>());
  ops.def(
      "cast",
      [](const Value& x, const std::string& dtype) {
        std::optional<ir::DType> d = ir::DTypeFromName(dtype);
        if (!d) {
          throw py::value_error(
              absl::StrCat("cast to '", dtype, "' (expected f32, f64, i64, i32 or bool)"));
        }
        return Checked(frontend::Cast(x, *d), x);
      },
      py::arg("x"), py::arg("dtype"), py::keep_alive<0, 1>());
  ops.def(
      "matmul", [](const Value& a, const Value& b) { return Checked(frontend::Matmul(a, b), a); },
      py::keep_alive<0, 1>());
  ops.def(
      "maximum",
      [](const Value& a, py::object b) { return Checked(frontend::Maximum(a, Operand(a, b)), a); },
      py::keep_alive<0, 1>());
  ops.def(
      "minimum",
      [](const Value& a, py::object b) { return Checked(frontend::Minimum(a, Operand(a, b)), a); },
      py::keep_alive<0, 1>());
  ops.def(
      "where",
      [](const Value& c, py::object a, py::object b) {
        // A number takes the dtype of the other arm (a Value).
        if (!py::isinstance<Value>(a) && !py::isinstance<Value>(b)) {
          throw py::type_error("where: one of the arms must be a graphjit Value");
        }
        const Value like = py::isinstance<Value>(a) ? a.cast<Value>() : b.cast<Value>();
        return Checked(frontend::Where(c, Operand(like, a), Operand(like, b)), c);
      },
      py::keep_alive<0, 1>());
  ops.def(
      "softmax",
      [](const Value& x, int64_t axis) { return Checked(frontend::Softmax(x, axis), x); },
      py::arg("x"), py::arg("axis") = -1, py::keep_alive<0, 1>());
  ops.def(
      "rms_norm",
      [](const Value& x, const Value& w, double eps) {
        return Checked(frontend::RmsNorm(x, w, eps), x);
      },
      py::arg("x"), py::arg("weight"), py::arg("eps") = 1e-6, py::keep_alive<0, 1>());
  ops.def(
      "transpose",
      [](const Value& x, std::vector<int64_t> perm) {
        return Checked(frontend::Transpose(x, std::move(perm)), x);
      },
      py::keep_alive<0, 1>());
  ops.def(
      "reshape",
      [](const Value& x, const py::sequence& shape) {
        return Checked(frontend::Reshape(x, ToShape(shape)), x);
      },
      py::keep_alive<0, 1>());
  ops.def(
      "concat",
      [](const std::vector<Value>& xs, int64_t axis) {
        if (xs.empty()) throw py::value_error("concat of no values");
        return Checked(frontend::Concat(xs, axis), xs[0]);
      },
      py::arg("xs"), py::arg("axis") = 0, py::keep_alive<0, 1>());
  for (const auto& [name, reduce] :
       std::vector<std::pair<const char*, Value (*)(const Value&, int64_t, bool)>>{
           {"sum", &frontend::ReduceSum},
           {"mean", &frontend::ReduceMean},
           {"max", &frontend::ReduceMax},
           {"argmax", &frontend::ArgMax},
           {"argmin", &frontend::ArgMin}}) {
    ops.def(
        name,
        [reduce](const Value& x, int64_t axis, bool keepdim) {
          return Checked(reduce(x, axis, keepdim), x);
        },
        py::arg("x"), py::arg("axis") = -1, py::arg("keepdim") = false, py::keep_alive<0, 1>());
  }

  py::class_<TracedFunction>(m, "JitFunction")
      .def("__call__", &TracedFunction::Call)
      .def("stats", &TracedFunction::Stats, "The compile cache's counters.")
      .def("explain", &TracedFunction::Explain,
           "Why these inputs would miss the compile cache (\"\" on a hit).")
      .def("interpret", &TracedFunction::Interpret,
           "The call through graphjit's interpreter: the entry's optimized graph, node by "
           "node (compiled first on a miss).")
      .def("time_native", &TracedFunction::TimeNative, py::arg("repeat") = 1000,
           "Seconds per call of the same compiled call made from C++ (median of 5 rounds "
           "of `repeat` calls): the call without the Python binding's cost.");
  m.def(
      "make_jit",
      [](py::function fn, std::string policy, std::string tier, py::object dynamic,
         py::object weights) {
        return std::make_unique<TracedFunction>(std::move(fn), std::move(policy), std::move(tier),
                                                std::move(dynamic), std::move(weights));
      },
      py::arg("fn"), py::arg("policy") = "auto", py::arg("tier") = "o2",
      py::arg("dynamic") = py::none(), py::arg("weights") = py::none());
}

}  // namespace graphjit::python
