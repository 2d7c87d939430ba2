// graphjit.eager(fn): a Python function on graphjit Values run op by op, each op computed
// at once by the runtime's kernels as an eager framework would (demo 4's first row): no
// trace, no graph, no compile. The same functions graphjit.jit compiles run unchanged.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <vector>

#include "frontend/eager_context.h"
#include "frontend/value.h"
#include "python/arrays.h"
#include "python/bindings.h"
#include "python/py_function.h"

namespace graphjit::python {
namespace {

using frontend::Value;

class EagerFunction {
 public:
  // Parameters named in `weights` read them (ctx.Param); the others are the inputs.
  EagerFunction(py::function fn, const py::object& weights)
      : fn_(std::move(fn)), signature_(SignatureOf(fn_, weights)) {}

  py::object Call(const py::args& args, const py::kwargs& kwargs) {
    const runtime::TensorMap inputs = signature_.Inputs(args, kwargs);
    frontend::EagerContext ctx(inputs, signature_.weights);
    py::list values;
    for (const std::string& n : signature_.params) {
      values.append(py::cast(signature_.IsWeight(n) ? ctx.Param(n) : ctx.Input(n)));
    }
    bool single = false;
    const std::vector<Value> outputs = ReturnedValues(fn_(*values), &single);
    return ReturnedArrays(ValueOrRaise(ctx.Results(outputs)), single);
  }

 private:
  py::function fn_;
  PyFunctionSignature signature_;
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
