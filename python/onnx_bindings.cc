// graphjit.onnx: an imported ONNX model under Jit, called with numpy arrays.
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/entries/policy.h"
#include "compiler/jit.h"
#include "compiler/orc/code_tier.h"
#include "compiler/passes/pipeline.h"
#include "ir/printer.h"
#include "models/onnx_function.h"
#include "models/onnx_model.h"
#include "onnx/import.h"
#include "onnx/specialize.h"
#include "python/arrays.h"
#include "python/bindings.h"

namespace graphjit::python {
namespace {

using runtime::Tensor;

// An imported model under Jit, or (`guarded`) a model file that needs some inputs' values
// when it is built, specialized on each call's under a guard (models/onnx_function.h).
class Model {
 public:
  explicit Model(std::unique_ptr<models::OnnxFunction> guarded) : guarded_(std::move(guarded)) {
    model_.input_names = guarded_->input_names();
  }
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
    auto need = [&](const std::string& name) {
      if (!inputs.contains(name)) {
        throw py::key_error(absl::StrCat("missing input '", name,
                                         "' (the model's inputs: ", Join(model_.input_names), ")"));
      }
      return inputs[py::str(name)];
    };
    if (guarded_ != nullptr) {
      // Every input by its own dtype: the guard and the import decide what they must be.
      for (const std::string& name : model_.input_names) {
        tensors[name] = ToTensorOfItsDtype("input", name, need(name));
      }
    } else {
      for (const auto& [name, dtype] : input_dtypes_)
        tensors[name] = ToTensor(name, need(name), dtype);
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
      outputs = guarded_ != nullptr ? guarded_->Run(tensors) : fn_->Run(tensors);
    }
    std::vector<Tensor> out = ValueOrRaise(std::move(outputs));
    py::tuple result(out.size());
    for (size_t i = 0; i < out.size(); ++i) result[i] = ToNumpy(std::move(out[i]));
    return result;
  }

  py::dict Stats() const {
    if (guarded_ == nullptr) return StatsOf(*fn_);
    py::dict d;
    d["specializations"] = guarded_->specializations();
    d["interpreted_calls"] = guarded_->interpreted_calls();
    d["specialized_inputs"] = guarded_->specialized_inputs();
    return d;
  }

  // The IR at `stage` (as graphjit-dump prints it) with the model's dynamic dims fixed to
  // `dims` (none: symbolic, where the stage allows).
  std::string Dump(const std::string& stage, const py::kwargs& dims) const {
    RefuseGuarded("dump");
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
    compiler::PassContext ctx = compiler::PassContextFor(model_.params, {});
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
    RefuseGuarded("explain");
    runtime::TensorMap tensors;
    for (const auto& [name, dtype] : input_dtypes_) {
      if (inputs.contains(name)) tensors[name] = ToTensor(name, inputs[py::str(name)], dtype);
    }
    return fn_->ExplainMiss(tensors);
  }

 private:
  void RefuseGuarded(const char* what) const {
    if (guarded_ == nullptr) return;
    throw py::type_error(absl::StrCat(
        what, ": this model is specialized per call on the values of ",
        "inputs it needs when it is built; load it with example_inputs= for one specialization"));
  }

  static std::string Join(const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) absl::StrAppend(&s, s.empty() ? "" : ", ", n);
    return s;
  }

  onnx::ImportedModel model_;
  std::unique_ptr<compiler::JitFunction> fn_;
  std::unique_ptr<models::OnnxFunction> guarded_;
  std::vector<std::pair<std::string, ir::DType>> input_dtypes_;
};

std::unique_ptr<Model> LoadOnnx(const py::object& source, const std::string& policy,
                                const std::string& tier, std::optional<int> threads,
                                const py::object& known_inputs, const py::object& example_inputs) {
  // Inputs fixed at import (onnx/import.h): the model is specialized on their values.
  onnx::ImportOptions import_options;
  if (!known_inputs.is_none()) {
    for (const auto& [key, value] : known_inputs.cast<py::dict>()) {
      const std::string name = py::str(key);
      import_options.known_inputs[name] = ToTensorOfItsDtype("known input", name, value);
    }
  }
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
  if (!example_inputs.is_none()) {
    // Specialized on a call (onnx/specialize.h): the values of the inputs the importer
    // needs, then the shapes if the symbolic import still fails.
    if (py::isinstance<py::bytes>(source)) {
      throw py::value_error("example_inputs needs the model's path, not its bytes");
    }
    runtime::TensorMap call;
    for (const auto& [key, value] : example_inputs.cast<py::dict>()) {
      const std::string name = py::str(key);
      call[name] = ToTensorOfItsDtype("example input", name, value);
    }
    const std::string path = py::str(py::module_::import("os").attr("fspath")(source));
    from_file = true;
    py::gil_scoped_release release;
    absl::StatusOr<onnx::SpecializedImport> imported =
        onnx::ImportSpecialized(path, call, import_options);
    model = imported.ok() ? absl::StatusOr<onnx::ImportedModel>(std::move(imported->model))
                          : imported.status();
  } else if (py::isinstance<py::bytes>(source)) {
    const std::string bytes = source.cast<std::string>();
    py::gil_scoped_release release;
    model = onnx::ImportFromBytes(bytes, "the model's bytes", import_options);
  } else {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(source));
    from_file = true;
    py::gil_scoped_release release;
    model = onnx::Import(path, import_options);
    if (import_options.known_inputs.empty() && !onnx::InputNeededAtImport(model.status()).empty()) {
      // It needs an input's values when it is built: specialized on each call's, under a
      // guard (a new value compiles another specialization).
      std::unique_ptr<models::OnnxFunction> guarded =
          ValueOrRaise(models::OnnxFunction::Open(path, std::move(options)), true);
      return std::make_unique<Model>(std::move(guarded));
    }
  }
  onnx::ImportedModel imported = ValueOrRaise(std::move(model), from_file);
  std::unique_ptr<compiler::JitFunction> fn =
      ValueOrRaise(models::JitOnnxModel(imported, std::move(options)));
  return std::make_unique<Model>(std::move(imported), std::move(fn));
}

}  // namespace

void DefineOnnx(py::module_& m) {
  py::class_<Model>(m, "Model")
      .def_property_readonly("input_names", &Model::input_names)
      .def_property_readonly("output_names", &Model::output_names)
      .def("run", &Model::Run, py::arg("inputs"),
           "Runs the model on a dict of input arrays; a tuple of output arrays.")
      .def(
          "__call__",
          [](Model& model, const py::args& args, const py::kwargs& kwargs) {
            // Positional arrays are the inputs in the model's order, then keywords.
            const std::vector<std::string> names = model.input_names();
            if (args.size() > names.size()) {
              throw py::type_error(absl::StrCat("the model takes ", names.size(), " inputs (",
                                                absl::StrJoin(names, ", "), "), got ", args.size(),
                                                " positional"));
            }
            py::dict inputs;
            for (size_t i = 0; i < args.size(); ++i) inputs[py::str(names[i])] = args[i];
            for (const auto& [key, value] : kwargs) {
              if (inputs.contains(key)) {
                throw py::type_error(
                    absl::StrCat("input '", std::string(py::str(key)), "' given twice"));
              }
              inputs[key] = value;
            }
            return model.Run(inputs);
          },
          "model(array, ...) or model(x=array, ...): the same as model.run({...}).")
      .def("stats", &Model::Stats, "The compile cache's counters.")
      .def("dump", &Model::Dump, py::arg("stage") = "optimized",
           "The IR at a stage of graphjit-dump (traced, optimized, kernels, llvm, llvm-opt, "
           "asm), dynamic dims fixed by keyword (model.dump(\"kernels\", N=1)).")
      .def("explain", &Model::Explain, py::arg("inputs"),
           "Why these inputs would miss the compile cache (\"\" on a hit).");
  m.def("load_onnx", &LoadOnnx, py::arg("source"), py::arg("policy") = "auto",
        py::arg("tier") = "o2", py::arg("threads") = py::none(),
        py::arg("known_inputs") = py::none(), py::arg("example_inputs") = py::none());
}

}  // namespace graphjit::python
