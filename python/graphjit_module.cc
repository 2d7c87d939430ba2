// graphjit's Python extension (`graphjit._graphjit`, wrapped by python/graphjit/): ONNX
// models compiled under guards, numpy arrays in and out without copies where the layout
// allows. It sits above everything else, like the tools.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/entries/policy.h"
#include "compiler/jit.h"
#include "compiler/orc/code_tier.h"
#include "compiler/passes/pipeline.h"
#include "ir/printer.h"
#include "models/onnx_model.h"
#include "onnx/import.h"
#include "runtime/tensor.h"

namespace py = pybind11;

namespace graphjit::python {
namespace {

using runtime::Tensor;

// Errors Python has an exception for and C++ has none: thrown as these, translated with
// the GIL held (so they may be thrown where it is released).
struct FileNotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NotImplemented : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// graphjit's errors as Python's: InvalidArgument -> ValueError, NotFound -> KeyError
// (FileNotFoundError for a file), Unimplemented -> NotImplementedError, others
// RuntimeError; the message is graphjit's.
[[noreturn]] void Raise(const absl::Status& status, bool about_a_file = false) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      throw py::value_error(message);
    case absl::StatusCode::kNotFound:
      if (about_a_file) throw FileNotFound(message);
      throw py::key_error(message);
    case absl::StatusCode::kUnimplemented:
      throw NotImplemented(message);
    default:
      throw std::runtime_error(message);
  }
}

template <typename T>
T ValueOrRaise(absl::StatusOr<T> v, bool about_a_file = false) {
  if (!v.ok()) Raise(v.status(), about_a_file);
  return *std::move(v);
}

// The numpy dtype of a graphjit dtype and back.
py::dtype NumpyDtype(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kF32:
      return py::dtype::of<float>();
    case ir::DType::kF64:
      return py::dtype::of<double>();
    case ir::DType::kI64:
      return py::dtype::of<int64_t>();
    case ir::DType::kI32:
      return py::dtype::of<int32_t>();
    case ir::DType::kBool:
      return py::dtype::of<bool>();
  }
  throw std::runtime_error("a graphjit dtype without a numpy one");
}

std::optional<ir::DType> GraphjitDtype(const py::dtype& dtype) {
  if (dtype.is(py::dtype::of<float>())) return ir::DType::kF32;
  if (dtype.is(py::dtype::of<double>())) return ir::DType::kF64;
  if (dtype.is(py::dtype::of<int64_t>())) return ir::DType::kI64;
  if (dtype.is(py::dtype::of<int32_t>())) return ir::DType::kI32;
  if (dtype.is(py::dtype::of<bool>())) return ir::DType::kBool;
  return std::nullopt;
}

// Inputs converted rather than shared (graphjit._graphjit.input_copies(), for tests).
std::atomic<int64_t> input_copies{0};

// An input as a Tensor. A C-contiguous array of a graphjit dtype whose data is 64-byte
// aligned (what graphjit's buffers are) is shared, not copied: the tensor keeps a
// reference to the array. Anything else (another layout, alignment or a Python list) is
// converted once into a fresh buffer.
Tensor ToTensor(const std::string& name, const py::handle& value, ir::DType want) {
  py::array array = py::array::ensure(value);
  if (!array) throw py::value_error(absl::StrCat("input '", name, "': expected a numpy array"));
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  std::optional<ir::DType> dtype = GraphjitDtype(array.dtype());
  const bool contiguous = (array.flags() & py::array::c_style) != 0;
  const bool aligned = reinterpret_cast<uintptr_t>(array.data()) % 64 == 0;
  if (dtype == want && contiguous && aligned && array.writeable()) {
    auto* keep = new py::object(array);
    std::shared_ptr<void> owner(keep, [](void* p) {
      py::gil_scoped_acquire gil;
      delete static_cast<py::object*>(p);
    });
    return ValueOrRaise(Tensor::FromShared(want, shape, std::move(owner),
                                           const_cast<void*>(array.data()), array.nbytes()));
  }
  // Converted: numpy casts (f64 -> f32 and the like; it raises for what it cannot).
  input_copies.fetch_add(1, std::memory_order_relaxed);
  py::array converted =
      py::array::ensure(array.attr("astype")(NumpyDtype(want)), py::array::c_style);
  Tensor t = ValueOrRaise(Tensor::Empty(want, shape));
  std::memcpy(t.raw_data(), converted.data(), converted.nbytes());
  return t;
}

// An output as a numpy array that owns graphjit's buffer (no copy).
py::array ToNumpy(Tensor t) {
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  const py::dtype dtype = NumpyDtype(t.dtype());
  void* data = t.raw_data();
  auto* keep = new Tensor(std::move(t));
  py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype, shape, {}, data, owner);
}

// An imported model under Jit.
class Model {
 public:
  Model(onnx::ImportedModel model, std::unique_ptr<compiler::JitFunction> fn)
      : model_(std::move(model)), fn_(std::move(fn)) {
    for (ir::ValueId id = 0; id < model_.graph.num_nodes(); ++id) {
      const ir::Node& n = model_.graph.node(id);
      if (n.op != ir::OpCode::kInput) continue;
      input_dtypes_.emplace_back(n.attrs.Get<std::string>("name"), n.type.dtype);
    }
  }

  std::vector<std::string> input_names() const { return model_.input_names; }
  std::vector<std::string> output_names() const { return model_.output_names; }

  py::tuple Run(const py::dict& inputs) {
    runtime::TensorMap tensors;
    for (const auto& [name, dtype] : input_dtypes_) {
      if (!inputs.contains(name)) {
        throw py::key_error(absl::StrCat("missing input '", name,
                                         "' (the model's inputs: ", Join(model_.input_names), ")"));
      }
      tensors[name] = ToTensor(name, inputs[py::str(name)], dtype);
    }
    for (const auto& [key, value] : inputs) {
      const std::string name = py::str(key);
      if (tensors.count(name) == 0) {
        throw py::key_error(absl::StrCat("unknown input '", name,
                                         "' (the model's inputs: ", Join(model_.input_names), ")"));
      }
    }
    absl::StatusOr<std::vector<Tensor>> outputs;
    {
      py::gil_scoped_release release;
      outputs = fn_->Run(tensors);
    }
    std::vector<Tensor> out = ValueOrRaise(std::move(outputs));
    py::tuple result(out.size());
    for (size_t i = 0; i < out.size(); ++i) result[i] = ToNumpy(std::move(out[i]));
    return result;
  }

  py::dict Stats() const {
    const compiler::entries::CacheStats s = fn_->stats();
    py::dict d;
    d["calls"] = s.calls;
    d["hits"] = s.hits;
    d["misses"] = s.compiles;
    d["compiles"] = s.compiles;
    d["failed_compiles"] = s.failed_compiles;
    d["rejected"] = s.rejected;
    d["evictions"] = s.evictions;
    d["kernels_compiled"] = s.kernels_compiled;
    d["kernels_reused"] = s.kernels_reused;
    d["kernels_loaded"] = s.kernels_loaded;
    d["compile_seconds"] = s.compile_seconds;
    d["trace_seconds"] = s.trace_seconds;
    d["entries"] = fn_->size();
    return d;
  }

  // The IR at `stage` (as graphjit-dump prints it) with the model's dynamic dims fixed to
  // `dims` (none: symbolic, where the stage allows).
  std::string Dump(const std::string& stage, const py::kwargs& dims) const {
    static const std::vector<std::string> kStages = {"traced", "optimized", "kernels",
                                                     "llvm",   "llvm-opt",  "asm"};
    if (std::find(kStages.begin(), kStages.end(), stage) == kStages.end()) {
      throw py::value_error(absl::StrCat("unknown stage '", stage,
                                         "' (stages: traced, optimized, kernels, llvm, "
                                         "llvm-opt, asm)"));
    }
    ir::Bindings bindings;
    for (const auto& [name, value] : dims)
      bindings[std::string(py::str(name))] = value.cast<int64_t>();
    py::gil_scoped_release release;
    ir::Graph graph = ValueOrRaise(models::SpecializeOnnxGraph(model_, bindings));
    if (stage == "traced") return ir::PrintGraph(graph);
    compiler::PassContext ctx{model_.params};
    if (absl::Status s = compiler::Pipeline::Default().Run(&graph, &ctx); !s.ok()) Raise(s);
    if (stage == "optimized") return ir::PrintGraph(graph);
    compiler::CompileGraphOptions options;
    options.optimize = false;  // the pipeline above already ran
    options.codegen.tier = fn_->options().compile.codegen.tier;
    options.codegen.keep_ir = stage == "llvm" || stage == "llvm-opt";
    options.codegen.emit_asm = stage == "asm";
    std::unique_ptr<compiler::CompiledGraph> compiled =
        ValueOrRaise(compiler::CompiledGraph::Compile(graph, ctx.params, options));
    if (stage == "kernels") return compiler::ProgramToString(compiled->program());
    if (stage == "llvm") return compiled->kernels().llvm_ir();
    if (stage == "llvm-opt") return compiled->kernels().optimized_ir();
    return compiled->kernels().assembly();
  }

  std::string Explain(const py::dict& inputs) const {
    runtime::TensorMap tensors;
    for (const auto& [name, dtype] : input_dtypes_) {
      if (inputs.contains(name)) tensors[name] = ToTensor(name, inputs[py::str(name)], dtype);
    }
    return fn_->ExplainMiss(tensors);
  }

 private:
  static std::string Join(const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) absl::StrAppend(&s, s.empty() ? "" : ", ", n);
    return s;
  }

  onnx::ImportedModel model_;
  std::unique_ptr<compiler::JitFunction> fn_;
  std::vector<std::pair<std::string, ir::DType>> input_dtypes_;
};

std::unique_ptr<Model> LoadOnnx(const py::object& source, const std::string& policy,
                                const std::string& tier, std::optional<int> threads) {
  compiler::JitOptions options;
  options.policy = ValueOrRaise(compiler::entries::ParsePolicy(policy));
  options.compile.codegen.tier = ValueOrRaise(compiler::ParseCodeTier(tier));
  if (threads.has_value()) {
    if (*threads < 1 || *threads > 1024) {
      throw py::value_error(absl::StrCat("threads=", *threads, ": expected 1..1024 or None"));
    }
    options.compile.threads = *threads;
  }
  absl::StatusOr<onnx::ImportedModel> model;
  bool from_file = false;
  if (py::isinstance<py::bytes>(source)) {
    const std::string bytes = source.cast<std::string>();
    py::gil_scoped_release release;
    model = onnx::ImportFromBytes(bytes, "the model's bytes");
  } else {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(source));
    from_file = true;
    py::gil_scoped_release release;
    model = onnx::Import(path);
  }
  onnx::ImportedModel imported = ValueOrRaise(std::move(model), from_file);
  std::unique_ptr<compiler::JitFunction> fn =
      ValueOrRaise(models::JitOnnxModel(imported, std::move(options)));
  return std::make_unique<Model>(std::move(imported), std::move(fn));
}

}  // namespace
}  // namespace graphjit::python

PYBIND11_MODULE(_graphjit, m) {
  using graphjit::python::Model;
  m.doc() = "graphjit: a JIT compiler for tensor graphs (the C++ core; see graphjit)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const graphjit::python::FileNotFound& e) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } catch (const graphjit::python::NotImplemented& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
  py::class_<Model>(m, "Model")
      .def_property_readonly("input_names", &Model::input_names)
      .def_property_readonly("output_names", &Model::output_names)
      .def("run", &Model::Run, py::arg("inputs"),
           "Runs the model on a dict of input arrays; a tuple of output arrays.")
      .def(
          "__call__", [](Model& model, const py::kwargs& inputs) { return model.Run(inputs); },
          "model(x=array, ...): the same as model.run({...}).")
      .def("stats", &Model::Stats, "The compile cache's counters.")
      .def("dump", &Model::Dump, py::arg("stage") = "optimized",
           "The IR at a stage of graphjit-dump (traced, optimized, kernels, llvm, llvm-opt, "
           "asm), dynamic dims fixed by keyword (model.dump(\"kernels\", N=1)).")
      .def("explain", &Model::Explain, py::arg("inputs"),
           "Why these inputs would miss the compile cache (\"\" on a hit).");
  m.def(
      "input_copies", [] { return graphjit::python::input_copies.load(); },
      "How many inputs were converted into a fresh buffer rather than shared (all calls).");
  m.def("load_onnx", &graphjit::python::LoadOnnx, py::arg("source"), py::arg("policy") = "auto",
        py::arg("tier") = "o2", py::arg("threads") = py::none());
}
