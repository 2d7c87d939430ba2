#include "compiler/compiled/graph_record.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/compiled/graph_key.h"
#include "compiler/lower/program_codec.h"
#include "ir/byte_io.h"
#include "ir/graph_codec.h"

namespace graphjit::compiler {
namespace {

constexpr absl::string_view kTag = "graphjit-graph-record-v1";

bool SameTensor(const runtime::Tensor& a, const runtime::Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         (a.raw_data() == b.raw_data() ||
          std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())) == 0);
}

// Param data starts at this multiple from the pack's start: a tensor's alignment.
constexpr size_t kDataAlignment = 64;

// The args of the program bind the graph's nodes: each names a node of its kind.
absl::Status CheckArgs(const ir::Graph& graph, const LoweredGraph& lowered) {
  auto bad = [](size_t i, absl::string_view why) {
    return absl::DataLossError(absl::StrCat("graph record: program arg ", i, " ", why));
  };
  if (static_cast<int>(lowered.args.size()) != lowered.program.num_args) {
    return absl::DataLossError(absl::StrCat("graph record: ", lowered.args.size(),
                                            " arg bindings for ", lowered.program.num_args,
                                            " program args"));
  }
  for (size_t i = 0; i < lowered.args.size(); ++i) {
    const ArgBinding& a = lowered.args[i];
    if (a.kind == ArgBinding::Kind::kOutput) {
      if (a.output_index < 0 || a.output_index >= static_cast<int>(graph.outputs().size())) {
        return bad(i,
                   absl::StrCat("binds output ", a.output_index, " of ", graph.outputs().size()));
      }
      continue;
    }
    if (a.value < 0 || a.value >= graph.num_nodes()) {
      return bad(i, absl::StrCat("binds node ", a.value, " of ", graph.num_nodes()));
    }
    const ir::OpCode want = a.kind == ArgBinding::Kind::kInput   ? ir::OpCode::kInput
                            : a.kind == ArgBinding::Kind::kParam ? ir::OpCode::kParam
                                                                 : ir::OpCode::kConstant;
    const ir::Node& node = graph.node(a.value);
    if (node.op != want || (want != ir::OpCode::kConstant && node.name() != a.name)) {
      return bad(i, absl::StrCat("'", a.name, "' does not match node %", a.value));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<ContentKey> GraphRecordKey(const ir::Graph& traced, const runtime::TensorMap& params,
                                         const CompileGraphOptions& options) {
  if (BuildId().empty()) return std::nullopt;
  const ContentKey graph_key = GraphContentKey(traced, params, options);
  ContentHasher h;
  h.Text(std::string(kTag));
  h.Text(BuildId());
  h.Bytes(&graph_key.hi, sizeof(graph_key.hi));
  h.Bytes(&graph_key.lo, sizeof(graph_key.lo));
  return h.Finish();
}

runtime::TensorMap MadeParams(const runtime::TensorMap& before, const runtime::TensorMap& after) {
  runtime::TensorMap made;
  for (const auto& [name, tensor] : after) {
    auto it = before.find(name);
    if (it == before.end() || !SameTensor(it->second, tensor)) made.emplace(name, tensor);
  }
  return made;
}

EncodedGraphRecord EncodeGraphRecord(const ir::Graph& graph, const runtime::TensorMap& made_params,
                                     const LoweredGraph& lowered,
                                     const std::vector<KernelBinding>& bindings) {
  EncodedGraphRecord out;
  ir::ByteWriter w, pack;
  w.Str(kTag);
  ir::WriteGraph(graph, w);
  // By name, so the bytes do not depend on the map's order; each tensor's bytes at an
  // aligned offset of the pack.
  std::vector<const std::pair<const std::string, runtime::Tensor>*> params;
  for (const auto& entry : made_params) params.push_back(&entry);
  std::sort(params.begin(), params.end(), [](auto* a, auto* b) { return a->first < b->first; });
  w.I64(static_cast<int64_t>(params.size()));
  for (const auto* entry : params) {
    const runtime::Tensor& t = entry->second;
    pack.Align(kDataAlignment);
    w.Str(entry->first);
    w.U8(static_cast<uint8_t>(t.dtype()));
    w.I64(t.rank());
    for (int64_t d : t.shape()) w.I64(d);
    w.I64(static_cast<int64_t>(pack.size()));
    w.I64(t.nbytes());
    pack.Raw(t.raw_data(), static_cast<size_t>(t.nbytes()));
  }
  out.pack = std::move(pack).Take();
  if (!params.empty()) {
    ContentHasher h;
    h.Text("graphjit-weight-pack-v1");
    h.Bytes(out.pack.data(), out.pack.size());
    out.pack_key = h.Finish();
  }
  w.I64(static_cast<int64_t>(out.pack_key.hi));
  w.I64(static_cast<int64_t>(out.pack_key.lo));
  w.Str(EncodeLoweredGraph(lowered));
  w.I64(static_cast<int64_t>(bindings.size()));
  for (const KernelBinding& b : bindings) {
    w.I64(static_cast<int64_t>(b.key.hi));
    w.I64(static_cast<int64_t>(b.key.lo));
    for (const std::vector<int>* list : {&b.buffers, &b.symbols}) {
      w.I64(static_cast<int64_t>(list->size()));
      for (int i : *list) w.I64(i);
    }
  }
  out.record = std::move(w).Take();
  return out;
}

absl::StatusOr<GraphRecord> DecodeGraphRecord(absl::string_view payload) {
  ir::ByteReader r(payload, "graph record");
  if (r.Str("tag") != kTag && r.ok()) r.Fail("not a ", kTag, " payload");
  GraphRecord record;
  absl::StatusOr<ir::Graph> graph = ir::ReadGraph(r);
  if (!graph.ok()) {
    return absl::DataLossError(
        absl::StrCat("graph record: the graph does not read back: ", graph.status().message()));
  }
  record.graph = *std::move(graph);
  const int64_t num_params = r.Count("params", 8);
  for (int64_t i = 0; i < num_params && r.ok(); ++i) {
    GraphRecord::PackedParam& p = record.packed.emplace_back();
    p.name = r.Str("param name");
    p.dtype = r.EnumValue<ir::DType>("param dtype", ir::kNumDTypes);
    const int64_t rank = r.Count("param rank", 8);
    for (int64_t d = 0; d < rank && r.ok(); ++d) {
      p.shape.push_back(r.Ranged("param dim", 0, INT64_MAX));
    }
    p.offset = r.Ranged("param offset", 0, INT64_MAX);
    p.nbytes = r.Ranged("param bytes", 0, INT64_MAX);
  }
  record.pack_key.hi = static_cast<uint64_t>(r.I64("weight pack key"));
  record.pack_key.lo = static_cast<uint64_t>(r.I64("weight pack key"));
  const std::string program = r.Str("program");
  if (!r.ok()) return r.status();
  absl::StatusOr<LoweredGraph> lowered = DecodeLoweredGraph(program);
  if (!lowered.ok()) return lowered.status();
  record.lowered = *std::move(lowered);
  const Program& p = record.lowered.program;
  const int64_t num_bindings = r.Ranged("kernel bindings", p.kernels.size(), p.kernels.size());
  for (int64_t k = 0; k < num_bindings && r.ok(); ++k) {
    KernelBinding& b = record.bindings.emplace_back();
    b.key.hi = static_cast<uint64_t>(r.I64("kernel key"));
    b.key.lo = static_cast<uint64_t>(r.I64("kernel key"));
    for (int64_t n = r.Count("kernel buffers", 8); n > 0 && r.ok(); --n) {
      b.buffers.push_back(static_cast<int>(
          r.Ranged("kernel buffer", 0, static_cast<int64_t>(p.buffers.size()) - 1)));
    }
    for (int64_t n = r.Count("kernel symbols", 8); n > 0 && r.ok(); --n) {
      b.symbols.push_back(static_cast<int>(
          r.Ranged("kernel symbol", 0, static_cast<int64_t>(p.symbols.size()) - 1)));
    }
  }
  r.ExpectEnd();
  if (!r.ok()) return r.status();
  if (absl::Status s = CheckArgs(record.graph, record.lowered); !s.ok()) return s;
  return record;
}

absl::Status UnpackParams(absl::string_view pack, const std::shared_ptr<void>& owner,
                          GraphRecord* record) {
  for (const GraphRecord::PackedParam& p : record->packed) {
    auto bad = [&](absl::string_view why) {
      return absl::DataLossError(absl::StrCat("weight pack: param '", p.name, "' ", why));
    };
    if (p.offset > static_cast<int64_t>(pack.size()) ||
        p.nbytes > static_cast<int64_t>(pack.size()) - p.offset) {
      return bad(absl::StrCat("at [", p.offset, ", +", p.nbytes, ") past the pack's ", pack.size(),
                              " bytes"));
    }
    char* data = const_cast<char*>(pack.data()) + p.offset;
    // In place when the pack is mapped and aligned (the tensor keeps the mapping).
    if (owner != nullptr) {
      absl::StatusOr<runtime::Tensor> shared =
          runtime::Tensor::FromShared(p.dtype, p.shape, owner, data, p.nbytes);
      if (shared.ok()) {
        record->made_params.insert_or_assign(p.name, *std::move(shared));
        continue;
      }
    }
    absl::StatusOr<runtime::Tensor> copy = runtime::Tensor::Empty(p.dtype, p.shape);
    if (!copy.ok() || copy->nbytes() != p.nbytes) {
      return bad(absl::StrCat("of ", p.nbytes, " bytes is no ", ir::DTypeName(p.dtype),
                              " tensor of its shape"));
    }
    std::memcpy(copy->raw_data(), data, static_cast<size_t>(p.nbytes));
    record->made_params.insert_or_assign(p.name, *std::move(copy));
  }
  return absl::OkStatus();
}

}  // namespace graphjit::compiler
