// What graphjit.jit and graphjit.eager share about the Python function they run: its
// parameters split into inputs and weights, a call's arrays bound to the inputs by name,
// and the Values it returns (one, or a sequence) and the arrays handed back for them.
#ifndef GRAPHJIT_PYTHON_PY_FUNCTION_H_
#define GRAPHJIT_PYTHON_PY_FUNCTION_H_

#include <string>
#include <vector>

#include "frontend/value.h"
#include "python/arrays.h"
#include "runtime/interpreter.h"

namespace graphjit::python {

struct PyFunctionSignature {
  std::string name;                 // __name__, else "fn"
  std::vector<std::string> params;  // every parameter, in order
  std::vector<std::string> inputs;  // the parameters given at each call
  runtime::TensorMap weights;       // the parameters bound once (ctx.Param)

  bool IsWeight(const std::string& param) const { return weights.contains(param); }
  // A call's arrays by input name: positional, then keywords. TypeError for a wrong count,
  // an unknown or a repeated name.
  runtime::TensorMap Inputs(const py::args& args, const py::kwargs& kwargs) const;
};

// `fn`'s signature; `weights` (None or {"w": array}) names parameters bound to arrays
// once. ValueError for a weight that is no parameter.
PyFunctionSignature SignatureOf(const py::function& fn, const py::object& weights);

// What the function returned: one Value (`*single`) or a sequence of them.
std::vector<frontend::Value> ReturnedValues(const py::object& result, bool* single);

// One array for a function that returned one Value, else a tuple.
py::object ReturnedArrays(std::vector<runtime::Tensor> out, bool single);

}  // namespace graphjit::python

#endif  // GRAPHJIT_PYTHON_PY_FUNCTION_H_
