#include "onnx/ops.h"

namespace graphjit::onnx {

const OpTable& Ops() {
  static const OpTable* const table = [] {
    auto* t = new OpTable;
    AddElementwiseOps(t);
    AddActivationOps(t);
    AddShapeOps(t);
    AddLayoutOps(t);
    AddIndexOps(t);
    AddReduceOps(t);
    AddNnOps(t);
    AddConvOps(t);
    AddResizeOps(t);
    AddLossOps(t);
    AddEinsumOps(t);
    AddRecurrentOps(t);
    AddControlOps(t);
    AddSignalOps(t);
    AddDataDependentOps(t);
    return t;
  }();
  return *table;
}

}  // namespace graphjit::onnx
