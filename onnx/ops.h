// The ONNX ops the importer knows, one handler each, registered by op family (one file
// per family: ops_elementwise, ops_activation, ops_shape, ops_layout, ops_index,
// ops_reduce, ops_nn, ops_conv, ops_resize, ops_loss, ops_einsum, ops_recurrent,
// ops_control, ops_signal, ops_data_dependent). A handler reads the node through the Context and
// defines its outputs; an op missing here is refused.
#ifndef GRAPHJIT_ONNX_OPS_H_
#define GRAPHJIT_ONNX_OPS_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "onnx/context.h"

namespace graphjit::onnx {

using OpHandler = absl::Status (*)(Context& ctx);
using OpTable = absl::flat_hash_map<std::string, OpHandler>;

void AddElementwiseOps(OpTable* table);
void AddActivationOps(OpTable* table);
void AddShapeOps(OpTable* table);
void AddLayoutOps(OpTable* table);
void AddIndexOps(OpTable* table);
void AddReduceOps(OpTable* table);
void AddNnOps(OpTable* table);
void AddConvOps(OpTable* table);
void AddResizeOps(OpTable* table);
void AddLossOps(OpTable* table);
void AddEinsumOps(OpTable* table);
void AddRecurrentOps(OpTable* table);
void AddControlOps(OpTable* table);
void AddSignalOps(OpTable* table);
void AddDataDependentOps(OpTable* table);

// Every op above, built once.
const OpTable& Ops();

}  // namespace graphjit::onnx

#endif  // GRAPHJIT_ONNX_OPS_H_
