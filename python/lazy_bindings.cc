// graphjit.lazy(): the lecture's lazy context from Python. Ops on its Values are recorded,
// not run; asking for an array (numpy(), item()) cuts the pending graph there, compiles it
// (or finds its code in the store) and runs it, and recording goes on in a new graph.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>

#include "compiler/lazy/lazy_context.h"
#include "python/arrays.h"
#include "python/bindings.h"

namespace graphjit::python {
namespace {

using compiler::LazyContext;
using frontend::Value;

LazyContext& Of(const Value& v, LazyContext& self) {
  if (v.context() != &self) {
    throw py::value_error("the value belongs to another context (a trace or lazy context)");
  }
  return self;
}

}  // namespace

void DefineLazy(py::module_& m) {
  py::class_<LazyContext>(m, "LazyContext",
                          "Records ops on its Values; numpy() and item() run what is pending.")
      .def(py::init([] { return std::make_unique<LazyContext>(); }))
      .def(
          "tensor",
          [](LazyContext& self, const py::handle& array) {
            return self.Tensor(ToTensorOfItsDtype("tensor()", "", array));
          },
          py::arg("array"), py::keep_alive<0, 1>(),
          "A numpy array as a Value of this context (ready, not pending).")
      .def(
          "numpy",
          [](LazyContext& self, const Value& v) {
            absl::StatusOr<runtime::Tensor> t;
            {
              py::gil_scoped_release release;
              t = Of(v, self).Materialize(v);
            }
            return ToNumpy(ValueOrRaise(std::move(t)));
          },
          py::arg("value"), "The value as an array: a graph break.")
      .def(
          "item",
          [](LazyContext& self, const Value& v) {
            absl::StatusOr<double> x;
            {
              py::gil_scoped_release release;
              x = Of(v, self).Item(v);
            }
            return ValueOrRaise(std::move(x));
          },
          py::arg("value"), "A one-element value as a float: a graph break.")
      .def_property_readonly(
          "graphs",
          [](const LazyContext& self) {
            py::list breaks;
            for (const compiler::GraphBreak& g : self.graphs()) {
              py::dict d;
              d["ops"] = g.ops;
              d["outputs"] = g.outputs;
              d["compiled"] = g.compiled;
              breaks.append(d);
            }
            return breaks;
          },
          "One dict per graph break: ops, outputs, compiled (else its code was reused).")
      .def_property_readonly("compiles", &LazyContext::compiles)
      .def_property_readonly("pending_ops", &LazyContext::pending_ops)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](py::object, py::args) { return false; });
}

}  // namespace graphjit::python
