#include "python/py_function.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace graphjit::python {

PyFunctionSignature SignatureOf(const py::function& fn, const py::object& weights) {
  PyFunctionSignature s;
  if (!weights.is_none()) {
    for (const auto& [key, value] : weights.cast<py::dict>()) {
      const std::string name = py::str(key);
      s.weights[name] = ToTensorOfItsDtype("weight", name, value);
    }
  }
  py::object params = py::module_::import("inspect").attr("signature")(fn).attr("parameters");
  for (const auto& name : params) s.params.push_back(py::str(name));
  for (const auto& [name, tensor] : s.weights) {
    if (std::find(s.params.begin(), s.params.end(), name) == s.params.end()) {
      throw py::value_error(absl::StrCat("weight '", name, "' is no parameter of the function"));
    }
  }
  for (const std::string& name : s.params) {
    if (!s.IsWeight(name)) s.inputs.push_back(name);
  }
  s.name = py::hasattr(fn, "__name__") ? std::string(py::str(fn.attr("__name__"))) : "fn";
  return s;
}

runtime::TensorMap PyFunctionSignature::Inputs(const py::args& args,
                                               const py::kwargs& kwargs) const {
  if (args.size() + kwargs.size() != inputs.size()) {
    throw py::type_error(absl::StrCat(name, "() takes ", inputs.size(), " inputs, got ",
                                      args.size() + kwargs.size()));
  }
  // Inputs keep the array's own dtype (the function declares none).
  runtime::TensorMap out;
  for (size_t i = 0; i < args.size(); ++i) {
    out[inputs[i]] = ToTensorOfItsDtype("input", inputs[i], args[i]);
  }
  for (const auto& [key, value] : kwargs) {
    const std::string input = py::str(key);
    if (std::find(inputs.begin(), inputs.end(), input) == inputs.end() || out.contains(input)) {
      throw py::type_error(
          absl::StrCat(name, "() got an unexpected or repeated input '", input, "'"));
    }
    out[input] = ToTensorOfItsDtype("input", input, value);
  }
  return out;
}

std::vector<frontend::Value> ReturnedValues(const py::object& result, bool* single) {
  std::vector<frontend::Value> values;
  *single = py::isinstance<frontend::Value>(result);
  if (*single) {
    values.push_back(result.cast<frontend::Value>());
  } else {
    for (const auto& r : result.cast<py::sequence>()) values.push_back(r.cast<frontend::Value>());
  }
  return values;
}

py::object ReturnedArrays(std::vector<runtime::Tensor> out, bool single) {
  if (out.size() == 1 && single) return ToNumpy(std::move(out[0]));
  py::tuple result(out.size());
  for (size_t i = 0; i < out.size(); ++i) result[i] = ToNumpy(std::move(out[i]));
  return result;
}

}  // namespace graphjit::python
