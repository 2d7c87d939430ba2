// The graph-level record of the disk cache: what compiling one graph produced above its
// kernels - the graph after the passes, the weights the passes made (folded norm weights,
// folded BatchNorm scales) and the lowered program - so a new process with a warm disk
// cache skips the passes and lowering: it reads one file and then finds the kernels'
// code by the content keys of that program, as any compile does (compiler/compiled/
// kernel_set.h).
//
// Kept in the disk cache as a record of compiler/store/code_record.h (versions, CPU,
// key and checksum checked there) under GraphRecordKey. Its content comes from the
// passes and lowering of the build that wrote it, so the key holds that build's id: a
// rebuilt or other program never reads it, and derives and writes its own.
#ifndef GRAPHJIT_COMPILER_COMPILED_GRAPH_RECORD_H_
#define GRAPHJIT_COMPILER_COMPILED_GRAPH_RECORD_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/compiled/compiled_graph.h"
#include "compiler/compiled/kernel_set.h"
#include "compiler/lower/lower.h"
#include "compiler/store/content_key.h"
#include "ir/graph.h"
#include "runtime/interpreter.h"

namespace graphjit::compiler {

struct GraphRecord {
  ir::Graph graph;  // after the passes
  LoweredGraph lowered;
  std::vector<KernelBinding> bindings;  // per kernel of the program (KernelSet::bindings)
  // The params the passes made live in a weight pack of their own (a separate cache
  // file, keyed by its bytes, so the records of every entry compiled with the same
  // weights - the exact policy's lengths, the recognizer's widths - share one copy).
  ContentKey pack_key;  // zero when no params were made
  struct PackedParam {
    std::string name;
    ir::DType dtype = ir::DType::kF32;
    std::vector<int64_t> shape;
    int64_t offset = 0;  // into the pack, 64-byte aligned
    int64_t nbytes = 0;
  };
  std::vector<PackedParam> packed;
  runtime::TensorMap made_params;  // by name, once UnpackParams has read the pack
};

// The record's key: "graph-record", BuildId() and GraphContentKey(traced, params,
// options). Nullopt when this build has no build id (records are then not used).
std::optional<ContentKey> GraphRecordKey(const ir::Graph& traced, const runtime::TensorMap& params,
                                         const CompileGraphOptions& options);

// The params of `after` (a compile's) that `before` (the caller's) does not hold under
// that name with the same data: the ones the passes made.
runtime::TensorMap MadeParams(const runtime::TensorMap& before, const runtime::TensorMap& after);

struct EncodedGraphRecord {
  std::string record;  // stored under GraphRecordKey
  std::string pack;    // stored under pack_key (empty when no params were made)
  ContentKey pack_key;
};
EncodedGraphRecord EncodeGraphRecord(const ir::Graph& graph, const runtime::TensorMap& made_params,
                                     const LoweredGraph& lowered,
                                     const std::vector<KernelBinding>& bindings);
// The record `payload` encodes, its made params not yet read (UnpackParams). DataLoss
// naming the part that is damaged (the graph, a param, the program, args that do not
// match the graph's nodes, bindings that do not match its kernels).
absl::StatusOr<GraphRecord> DecodeGraphRecord(absl::string_view payload);
// Fills record->made_params from the weight pack's bytes: in place when `owner` keeps
// them alive (a mapped file, DiskCache::LoadShared) and they are aligned, else copied.
// DataLoss naming the param whose bytes the pack does not hold.
absl::Status UnpackParams(absl::string_view pack, const std::shared_ptr<void>& owner,
                          GraphRecord* record);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_GRAPH_RECORD_H_
