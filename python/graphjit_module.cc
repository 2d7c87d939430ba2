// graphjit's Python extension (`graphjit._graphjit`, wrapped by python/graphjit/): ONNX
// models and traced Python functions compiled under guards, numpy arrays in and out
// without copies where the layout allows. It sits above everything else, like the tools.
#include <pybind11/pybind11.h>

#include "python/arrays.h"
#include "python/bindings.h"

PYBIND11_MODULE(_graphjit, m) {
  namespace gp = graphjit::python;
  m.doc() = "graphjit: a JIT compiler for tensor graphs (the C++ core; see graphjit)";
  gp::RegisterErrors();
  m.def(
      "input_copies", [] { return gp::input_copies.load(); },
      "How many inputs were converted into a fresh buffer rather than shared (all calls).");
  gp::DefineOnnx(m);
  gp::DefineJit(m);
  gp::DefineLazy(m);
  gp::DefineEager(m);
}
