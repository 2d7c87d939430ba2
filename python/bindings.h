// The Python module's parts, each defining its classes and functions on the module.
#ifndef GRAPHJIT_PYTHON_BINDINGS_H_
#define GRAPHJIT_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace graphjit::python {

// graphjit.onnx: Model and load_onnx (python/onnx_bindings.cc).
void DefineOnnx(pybind11::module_& m);
// graphjit.jit and graphjit.ops: Value, traced functions (python/jit_bindings.cc).
void DefineJit(pybind11::module_& m);
// graphjit.lazy(): LazyContext (python/lazy_bindings.cc).
void DefineLazy(pybind11::module_& m);
// graphjit.eager(fn): functions run op by op (python/eager_bindings.cc).
void DefineEager(pybind11::module_& m);

}  // namespace graphjit::python

#endif  // GRAPHJIT_PYTHON_BINDINGS_H_
