// What the Python module's bindings share: graphjit's errors as Python exceptions, and
// numpy arrays as graphjit tensors and back without copies where the layout allows.
#ifndef GRAPHJIT_PYTHON_ARRAYS_H_
#define GRAPHJIT_PYTHON_ARRAYS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/jit.h"
#include "ir/dtype.h"
#include "runtime/tensor.h"

namespace graphjit::python {

namespace py = pybind11;

// Errors Python has an exception for and C++ has none: thrown as these, translated with
// the GIL held (RegisterErrors), so they may be thrown where it is released.
struct FileNotFound : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NotImplemented : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void RegisterErrors();

// graphjit's errors as Python's: InvalidArgument -> ValueError, NotFound -> KeyError
// (FileNotFoundError for a file), Unimplemented -> NotImplementedError, others
// RuntimeError; the message is graphjit's.
[[noreturn]] void Raise(const absl::Status& status, bool about_a_file = false);

template <typename T>
T ValueOrRaise(absl::StatusOr<T> v, bool about_a_file = false) {
  if (!v.ok()) Raise(v.status(), about_a_file);
  return *std::move(v);
}

py::dtype NumpyDtype(ir::DType dtype);
std::optional<ir::DType> GraphjitDtype(const py::dtype& dtype);

// Inputs converted rather than shared (graphjit._graphjit.input_copies(), for tests).
extern std::atomic<int64_t> input_copies;

// An input as a Tensor of dtype `want` (`name` in errors). A C-contiguous, writable array
// of that dtype, aligned to its elements (as numpy's own are), is shared, not copied: the
// tensor keeps a reference to it. Anything else (another dtype or layout, a misaligned
// view, a list) is converted once by numpy into a fresh buffer.
runtime::Tensor ToTensor(const std::string& name, const py::handle& value, ir::DType want);
// The same for an input of whatever dtype the array has (a traced function's or a lazy
// context's, which declare none); `kind` and `name` name it in errors ("input 'x'", or
// "tensor()" with no name). Torch CPU tensors (numpy shares their memory) are shared too.
runtime::Tensor ToTensorOfItsDtype(absl::string_view kind, absl::string_view name,
                                   const py::handle& value);
// An output as a numpy array that owns graphjit's buffer (no copy).
py::array ToNumpy(runtime::Tensor t);

// The compile cache's counters of a model or function as a dict: calls, hits, misses
// (compiles + shared), compiles, shared, failed_compiles, rejected, evictions, the
// kernels compiled / reused / loaded, compile and trace seconds, live entries.
py::dict StatsOf(const compiler::JitFunction& fn);

}  // namespace graphjit::python

#endif  // GRAPHJIT_PYTHON_ARRAYS_H_
