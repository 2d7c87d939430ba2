#include "python/arrays.h"

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"

namespace graphjit::python {

using runtime::Tensor;

void RegisterErrors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const FileNotFound& e) {
      PyErr_SetString(PyExc_FileNotFoundError, e.what());
    } catch (const NotImplemented& e) {
      PyErr_SetString(PyExc_NotImplementedError, e.what());
    }
  });
}

[[noreturn]] void Raise(const absl::Status& status, bool about_a_file) {
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
  // By kind and size, not by comparing against py::dtype::of<T>() (which makes a numpy
  // descriptor per comparison): this runs for every input of every call.
  const char kind = dtype.kind();
  const py::ssize_t size = dtype.itemsize();
  if (kind == 'f' && size == 4) return ir::DType::kF32;
  if (kind == 'f' && size == 8) return ir::DType::kF64;
  if (kind == 'i' && size == 8) return ir::DType::kI64;
  if (kind == 'i' && size == 4) return ir::DType::kI32;
  if (kind == 'b' && size == 1) return ir::DType::kBool;
  return std::nullopt;
}

std::atomic<int64_t> input_copies{0};

// `value` as a numpy array without a copy where numpy can share it: a numpy array, an
// object with __array__ (a torch CPU tensor: numpy shares its memory), else a DLPack
// producer (numpy.from_dlpack; numpy marks those read-only, so they are converted).
py::array AsNumpy(const py::handle& value) {
  if (!py::isinstance<py::array>(value) && !py::hasattr(value, "__array__") &&
      py::hasattr(value, "__dlpack__")) {
    return py::array::ensure(py::module_::import("numpy").attr("from_dlpack")(value));
  }
  return py::array::ensure(value);
}

namespace {

// `array` (of dtype `have`, if graphjit has it) as a tensor of `want`: shared when it can
// be, else converted.
Tensor FromArray(const py::array& array, std::optional<ir::DType> have, ir::DType want) {
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  const bool contiguous = (array.flags() & py::array::c_style) != 0;
  const bool aligned =
      reinterpret_cast<uintptr_t>(array.data()) % static_cast<uintptr_t>(array.itemsize()) == 0;
  if (have == want && contiguous && aligned && array.writeable()) {
    // The array's own reference keeps it alive; dropped with the GIL held, wherever the
    // last holder of the tensor lets go.
    std::shared_ptr<void> owner(array.inc_ref().ptr(), [](void* p) {
      py::gil_scoped_acquire gil;
      Py_DECREF(static_cast<PyObject*>(p));
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

// "input 'x'", or `kind` alone when there is no name.
std::string What(absl::string_view kind, absl::string_view name) {
  return name.empty() ? std::string(kind) : absl::StrCat(kind, " '", name, "'");
}

}  // namespace

Tensor ToTensor(const std::string& name, const py::handle& value, ir::DType want) {
  py::array array = AsNumpy(value);
  if (!array) throw py::value_error(absl::StrCat("input '", name, "': expected a numpy array"));
  return FromArray(array, GraphjitDtype(array.dtype()), want);
}

Tensor ToTensorOfItsDtype(absl::string_view kind, absl::string_view name, const py::handle& value) {
  py::array a = AsNumpy(value);
  if (!a) throw py::value_error(absl::StrCat(What(kind, name), ": expected a numpy array"));
  std::optional<ir::DType> dtype = GraphjitDtype(a.dtype());
  if (!dtype) {
    throw py::value_error(absl::StrCat(What(kind, name), ": dtype ",
                                       std::string(py::str(a.dtype())),
                                       " (expected float32, float64, int64, int32 or bool)"));
  }
  return FromArray(a, dtype, *dtype);
}

py::array ToNumpy(Tensor t) {
  std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
  const py::dtype dtype = NumpyDtype(t.dtype());
  void* data = t.raw_data();
  auto* keep = new Tensor(std::move(t));
  py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(dtype, shape, {}, data, owner);
}

py::dict StatsOf(const compiler::JitFunction& fn) {
  const compiler::entries::CacheStats s = fn.stats();
  py::dict d;
  d["calls"] = s.calls;
  d["hits"] = s.hits;
  d["misses"] = s.compiles + s.shared;
  d["compiles"] = s.compiles;
  d["shared"] = s.shared;
  d["failed_compiles"] = s.failed_compiles;
  d["rejected"] = s.rejected;
  d["evictions"] = s.evictions;
  d["kernels_compiled"] = s.kernels_compiled;
  d["kernels_reused"] = s.kernels_reused;
  d["kernels_loaded"] = s.kernels_loaded;
  d["compile_seconds"] = s.compile_seconds;
  d["trace_seconds"] = s.trace_seconds;
  d["entries"] = fn.size();
  return d;
}

}  // namespace graphjit::python
