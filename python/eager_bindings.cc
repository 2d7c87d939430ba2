// graphjit.eager(fn): a Python function on graphjit Values run op by op, each op computed
// at once by the runtime's kernels as an eager framework would (demo 4's first row): no
// trace, no graph, no compile. The same functions graphjit.jit compiles run unchanged.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/eager_context.h"
#include "frontend/value.h"
#include "python/arrays.h"
#include "python/bindings.h"

namespace graphjit::python {
namespace {

using frontend::Value;

class EagerFunction {
 public:
  // Parameters named in `weights` read them (ctx.Param); the others are the inputs.
  EagerFunction(py::function fn, py::object weights) : fn_(std::move(fn)) {
    if (!weights.is_none()) {
      for (const auto& [key, value] : weights.cast<py::dict>()) {
        const std::string name = py::str(key);
        params_[name] = Input(name, value);
      }
    }
    py::object params = py::module_::import("inspect").attr("signature")(fn_).attr("parameters");
    for (const auto& name : params) all_.push_back(py::str(name));
    for (const std::string& n : all_) {
      if (!params_.contains(n)) names_.push_back(n);
    }
    name_ = py::hasattr(fn_, "__name__") ? std::string(py::str(fn_.attr("__name__"))) : "fn";
  }

  py::object Call(const py::args& args, const py::kwargs& kwargs) {
    if (args.size() + kwargs.size() != names_.size()) {
      throw py::type_error(absl::StrCat(name_, "() takes ", names_.size(), " inputs, got ",
                                        args.size() + kwargs.size()));
    }
    runtime::TensorMap inputs;
    for (size_t i = 0; i < args.size(); ++i) inputs[names_[i]] = Input(names_[i], args[i]);
    for (const auto& [key, value] : kwargs) {
      const std::string name = py::str(key);
      inputs[name] = Input(name, value);
    }
    frontend::EagerContext ctx(inputs, params_);
    py::list values;
    for (const std::string& n : all_) {
      if (params_.contains(n)) {
        values.append(py::cast(ctx.Param(n)));
      } else if (inputs.contains(n)) {
        values.append(py::cast(ctx.Input(n)));
      } else {
        throw py::type_error(absl::StrCat(name_, "() misses input '", n, "'"));
      }
    }
    py::object result = fn_(*values);
    const bool single = py::isinstance<Value>(result);
    std::vector<Value> outputs;
    if (single) {
      outputs.push_back(result.cast<Value>());
    } else {
      for (const auto& r : result.cast<py::sequence>()) outputs.push_back(r.cast<Value>());
    }
    std::vector<runtime::Tensor> out = ValueOrRaise(ctx.Results(outputs));
    if (single) return ToNumpy(std::move(out[0]));
    py::tuple tuple(out.size());
    for (size_t i = 0; i < out.size(); ++i) tuple[i] = ToNumpy(std::move(out[i]));
    return tuple;
  }

 private:
  static runtime::Tensor Input(const std::string& name, const py::handle& value) {
    return ToTensorOfItsDtype("input", name, value);
  }

  py::function fn_;
  std::string name_;
  std::vector<std::string> all_;    // every parameter
  std::vector<std::string> names_;  // the inputs
  runtime::TensorMap params_;
};

}  // namespace

void DefineEager(py::module_& m) {
  py::class_<EagerFunction>(m, "EagerFunction").def("__call__", &EagerFunction::Call);
  m.def(
      "make_eager",
      [](py::function fn, py::object weights) {
        return std::make_unique<EagerFunction>(std::move(fn), std::move(weights));
      },
      py::arg("fn"), py::arg("weights") = py::none());
}

}  // namespace graphjit::python
