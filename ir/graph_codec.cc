#include "ir/graph_codec.h"

#include <memory>
#include <utility>
#include <variant>
#include <vector>

#include "ir/regions.h"
#include "ir/verifier.h"

namespace graphjit::ir {
namespace {

constexpr int kNumAttrKinds = static_cast<int>(AttrKind::kString) + 1;

void WriteValue(const AttrValue& value, ByteWriter& w) {
  w.U8(static_cast<uint8_t>(KindOf(value)));
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          w.I64(v);
        } else if constexpr (std::is_same_v<T, double>) {
          w.F64(v);
        } else if constexpr (std::is_same_v<T, SymExpr>) {
          w.Sym(v);
        } else if constexpr (std::is_same_v<T, DType>) {
          w.U8(static_cast<uint8_t>(v));
        } else if constexpr (std::is_same_v<T, bool>) {
          w.U8(v ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::string>) {
          w.Str(v);
        } else {  // the vectors
          w.I64(static_cast<int64_t>(v.size()));
          for (const auto& x : v) {
            if constexpr (std::is_same_v<T, std::vector<SymExpr>>) {
              w.Sym(x);
            } else if constexpr (std::is_same_v<T, std::vector<double>>) {
              w.F64(x);
            } else {
              w.I64(x);
            }
          }
        }
      },
      value);
}

AttrValue ReadValue(ByteReader& r) {
  switch (r.EnumValue<AttrKind>("attribute kind", kNumAttrKinds)) {
    case AttrKind::kInt:
      return r.I64("attribute");
    case AttrKind::kInts: {
      std::vector<int64_t> v(r.Count("attribute", 8));
      for (int64_t& x : v) x = r.I64("attribute");
      return v;
    }
    case AttrKind::kFloat:
      return r.F64("attribute");
    case AttrKind::kFloats: {
      std::vector<double> v(r.Count("attribute", 8));
      for (double& x : v) x = r.F64("attribute");
      return v;
    }
    case AttrKind::kDim:
      return r.Sym("attribute");
    case AttrKind::kDims: {
      std::vector<SymExpr> v(r.Count("attribute", 9));
      for (SymExpr& x : v) x = r.Sym("attribute");
      return v;
    }
    case AttrKind::kDType:
      return r.EnumValue<DType>("attribute dtype", kNumDTypes);
    case AttrKind::kBool:
      return r.U8("attribute") != 0;
    case AttrKind::kString:
      return r.Str("attribute");
  }
  return int64_t{0};
}

}  // namespace

void WriteGraph(const Graph& graph, ByteWriter& w) {
  w.Str(graph.name());
  w.I64(graph.num_nodes());
  for (const Node& n : graph.nodes()) {
    w.U8(static_cast<uint8_t>(n.op));
    w.I64(static_cast<int64_t>(n.operands.size()));
    for (ValueId v : n.operands) w.I64(v);
    w.I64(static_cast<int64_t>(n.attrs.items().size()));
    for (const auto& [name, value] : n.attrs.items()) {
      w.Str(name);
      WriteValue(value, w);
    }
    w.U8(static_cast<uint8_t>(n.type.dtype));
    w.I64(n.type.rank());
    for (const SymExpr& d : n.type.shape) w.Sym(d);
    // Only control-flow ops hold regions: every other graph's bytes (and keys) are as
    // they were before regions existed.
    if (NumRegions(n.op) > 0) {
      w.I64(static_cast<int64_t>(n.regions.size()));
      for (const auto& region : n.regions) WriteGraph(*region, w);
    }
  }
  w.I64(static_cast<int64_t>(graph.outputs().size()));
  for (ValueId v : graph.outputs()) w.I64(v);
}

namespace {

absl::StatusOr<Graph> ReadAtDepth(ByteReader& r, int depth) {
  Graph graph(r.Str("graph name"));
  // A node is at least its op, three counts and a dtype.
  const int64_t num_nodes = r.Count("nodes", 26);
  for (int64_t i = 0; i < num_nodes && r.ok(); ++i) {
    const auto op = r.EnumValue<OpCode>("op", kNumOps);
    std::vector<ValueId> operands(r.Count("operands", 8));
    // Operands refer to earlier nodes (Append CHECKs it: checked here first).
    for (ValueId& v : operands) v = static_cast<ValueId>(r.Ranged("operand", 0, i - 1));
    Attrs attrs;
    const int64_t num_attrs = r.Count("attributes", 9);
    for (int64_t a = 0; a < num_attrs && r.ok(); ++a) {
      std::string name = r.Str("attribute name");
      AttrValue value = ReadValue(r);
      attrs.Set(name, std::move(value));
    }
    ValueType type;
    type.dtype = r.EnumValue<DType>("dtype", kNumDTypes);
    const int64_t rank = r.Count("rank", 9);
    for (int64_t d = 0; d < rank && r.ok(); ++d) type.shape.push_back(r.Sym("dim"));
    std::vector<std::shared_ptr<const Graph>> regions;
    if (NumRegions(op) > 0 && r.ok()) {
      if (depth + 1 >= kMaxRegionDepth) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph record: regions nest deeper than ", kMaxRegionDepth));
      }
      const int64_t num_regions = r.Count("regions", 26);
      for (int64_t k = 0; k < num_regions && r.ok(); ++k) {
        absl::StatusOr<Graph> region = ReadAtDepth(r, depth + 1);
        if (!region.ok()) return region.status();
        regions.push_back(std::make_shared<const Graph>(*std::move(region)));
      }
    }
    if (!r.ok()) break;
    graph.Append(op, std::move(operands), std::move(attrs), std::move(type), std::move(regions));
  }
  const int64_t num_outputs = r.Count("outputs", 8);
  for (int64_t i = 0; i < num_outputs && r.ok(); ++i) {
    const auto id = static_cast<ValueId>(r.Ranged("output", 0, graph.num_nodes() - 1));
    if (r.ok()) graph.AddOutput(id);
  }
  if (!r.ok()) return r.status();
  if (depth == 0) {
    if (absl::Status s = VerifyGraph(graph); !s.ok()) return s;  // regions included
  }
  return graph;
}

}  // namespace

absl::StatusOr<Graph> ReadGraph(ByteReader& r) { return ReadAtDepth(r, 0); }

}  // namespace graphjit::ir
