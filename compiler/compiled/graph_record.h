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
  ir::Graph graph;                 // after the passes
  runtime::TensorMap made_params;  // the params the passes made, by name
  LoweredGraph lowered;
  std::vector<KernelBinding> bindings;  // per kernel of the program (KernelSet::bindings)
};

// The record's key: "graph-record", BuildId() and GraphContentKey(traced, params,
// options). Nullopt when this build has no build id (records are then not used).
std::optional<ContentKey> GraphRecordKey(const ir::Graph& traced, const runtime::TensorMap& params,
                                         const CompileGraphOptions& options);

// The params of `after` (a compile's) that `before` (the caller's) does not hold under
// that name with the same data: the ones the passes made.
runtime::TensorMap MadeParams(const runtime::TensorMap& before, const runtime::TensorMap& after);

std::string EncodeGraphRecord(const ir::Graph& graph, const runtime::TensorMap& made_params,
                              const LoweredGraph& lowered,
                              const std::vector<KernelBinding>& bindings);
// The record `payload` encodes. With an `owner` keeping the payload's memory alive (a
// mapped file, DiskCache::LoadShared), the params use their bytes in place where they are
// aligned (EncodeGraphRecord aligns them from the payload's start); else they are copied.
// DataLoss naming the part that is damaged (the graph,
// a param, the program, or args that do not match the graph's nodes).
absl::StatusOr<GraphRecord> DecodeGraphRecord(absl::string_view payload,
                                              std::shared_ptr<void> owner = nullptr);

}  // namespace graphjit::compiler

#endif  // GRAPHJIT_COMPILER_COMPILED_GRAPH_RECORD_H_
