#include "onnx/import.h"

#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/sym_expr.h"
#include "onnx/context.h"
#include "onnx/ops.h"
#include "onnx/proto_convert.h"

namespace graphjit::onnx {
namespace {

// Opsets whose ops the handlers implement (newer ones are not written yet). Before
// opset 7 broadcasting was not numpy's and several ops had other attributes, so a model
// of opset 1-6 imports only ops whose meaning did not change (elementwise functions of
// one tensor, activations with the same attributes, global pools, instance norm and
// the reductions); any other op of such a model is refused.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 17;
constexpr int64_t kNumpyBroadcastOpset = 7;

bool SameBeforeOpset7(const std::string& op) {
  static const absl::flat_hash_set<std::string>* const kOps =
      new absl::flat_hash_set<std::string>{"Abs",           "Neg",
                                           "Exp",           "Log",
                                           "Sqrt",          "Tanh",
                                           "Sigmoid",       "Relu",
                                           "Not",           "Selu",
                                           "Elu",           "HardSigmoid",
                                           "Softplus",      "Softsign",
                                           "LeakyRelu",     "Floor",
                                           "Ceil",          "Reciprocal",
                                           "Identity",      "GlobalAveragePool",
                                           "GlobalMaxPool", "InstanceNormalization",
                                           "ReduceLogSum",  "ReduceSum",
                                           "ReduceMean",    "ReduceMax",
                                           "ReduceMin",     "Transpose"};
  return kOps->contains(op);
}

// The graph's name as the IR prints and parses it (letters, digits, '_', '.', '-'; others
// become '_'): an ONNX graph name may hold anything, and a dumped graph must parse back.
std::string GraphName(absl::string_view text) {
  if (text.empty()) return "main";
  std::string out;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    out.push_back(ok ? c : '_');
  }
  return out;
}

absl::StatusOr<int64_t> DefaultOpset(const pb::ModelProto& model) {
  std::string domains;
  for (const pb::OperatorSetIdProto& id : model.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx") return id.version();
    absl::StrAppend(&domains, " ", id.domain());
  }
  return absl::UnimplementedError(
      absl::StrCat("the model imports no opset of the default ONNX domain, only:", domains));
}

class Importer {
 public:
  Importer(const pb::ModelProto& model, int64_t opset, const ImportOptions& options)
      : model_(model),
        options_(options),
        builder_(GraphName(options.graph_name.empty() ? model.graph().name() : options.graph_name)),
        ctx_(&builder_, &out_.params, opset) {
    out_.opset = opset;
    ctx_.SetSubgraphImporter([this](const pb::GraphProto& g) { return ImportSubgraph(g); });
  }

  absl::StatusOr<ImportedModel> Run() && {
    const pb::GraphProto& g = model_.graph();
    absl::flat_hash_set<std::string> initializers;
    for (const pb::TensorProto& init : g.initializer()) {
      GJ_RETURN_IF_ERROR(DefineConstant(init.name(), init));
      initializers.insert(init.name());
    }
    for (const pb::ValueInfoProto& input : g.input()) {
      if (initializers.contains(input.name())) continue;  // IR < 4 lists weights as inputs
      if (auto it = options_.known_inputs.find(input.name()); it != options_.known_inputs.end()) {
        Value v;
        v.elem_type = ElemOfDType(it->second.dtype());
        v.shape = ir::ConstShape(it->second.shape());
        v.constant = it->second;
        if (it->second.dtype() == ir::DType::kI32) {  // held as i64, as INT32 initializers
          GJ_ASSIGN_OR_RETURN(v.constant, it->second.Cast(ir::DType::kI64));
        }
        ctx_.Define(input.name(), std::move(v));
        continue;
      }
      GJ_RETURN_IF_ERROR(DefineInput(input));
    }
    for (const pb::NodeProto& node : g.node()) {
      GJ_RETURN_IF_ERROR(ImportNode(node));
    }
    ctx_.BeginNode(nullptr);
    for (const pb::ValueInfoProto& output : g.output()) {
      const Value* v = ctx_.Find(output.name());
      if (v == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph output '", output.name(), "' is not computed by any node"));
      }
      const std::optional<ir::DType> dtype = BoundaryDType(v->elem_type);
      if (!dtype) {
        return absl::UnimplementedError(absl::StrCat(
            "graph output '", output.name(), "' has element type ", ElemTypeName(v->elem_type)));
      }
      GJ_ASSIGN_OR_RETURN(ir::ValueId id, ctx_.Materialize(output.name()));
      // INT32 values are computed in i64 (DTypeOfElem) and handed out in 32 bits.
      if (builder_.type(id).dtype != *dtype) {
        id = builder_.Add(ir::OpCode::kCast, {id}, {{"dtype", *dtype}});
        GJ_RETURN_IF_ERROR(builder_.status());
      }
      builder_.Output(id);
      out_.output_names.push_back(output.name());
    }
    GJ_ASSIGN_OR_RETURN(out_.graph, std::move(builder_).Build());
    return std::move(out_);
  }

 private:
  absl::Status DefineConstant(const std::string& name, const pb::TensorProto& proto) {
    Value v;
    GJ_ASSIGN_OR_RETURN(
        runtime::Tensor t,
        TensorFromProto(proto, absl::StrCat("initializer '", name, "'"), &v.elem_type));
    v.shape = ir::ConstShape(t.shape());
    v.constant = std::move(t);
    ctx_.Define(name, std::move(v));
    return absl::OkStatus();
  }

  absl::Status DefineInput(const pb::ValueInfoProto& input) {
    const std::string& name = input.name();
    if (!input.type().has_tensor_type()) {
      return absl::UnimplementedError(
          absl::StrCat("input '", name,
                       "' is not a tensor (sequences, maps and optionals are "
                       "not supported)"));
    }
    const pb::TypeProto::Tensor& tt = input.type().tensor_type();
    std::optional<ir::DType> dtype = BoundaryDType(tt.elem_type());
    if (!dtype) {
      return absl::UnimplementedError(absl::StrCat("input '", name, "' has element type ",
                                                   ElemTypeName(tt.elem_type()), " (graphjit has ",
                                                   kGraphElemTypes, ")"));
    }
    if (!tt.has_shape()) {
      return absl::UnimplementedError(absl::StrCat("input '", name, "' has no shape (rank)"));
    }
    ir::Shape shape;
    const auto given = options_.input_shapes.find(name);
    if (given != options_.input_shapes.end() &&
        static_cast<int>(given->second.size()) != tt.shape().dim_size()) {
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "' has rank ",
                                                     tt.shape().dim_size(), ", its given shape ",
                                                     given->second.size()));
    }
    for (int axis = 0; axis < tt.shape().dim_size(); ++axis) {
      const pb::TensorShapeProto::Dimension& d = tt.shape().dim(axis);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          return absl::InvalidArgumentError(
              absl::StrCat("input '", name, "' has dim ", d.dim_value(), " at axis ", axis));
        }
        if (given != options_.input_shapes.end() && given->second[axis] != d.dim_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("input '", name, "' has dim ", d.dim_value(), " at axis ", axis,
                           ", its given shape ", given->second[axis]));
        }
        shape.push_back(d.dim_value());
        continue;
      }
      std::string symbol = d.has_dim_param() && !d.dim_param().empty()
                               ? ir::ToSymbolName(d.dim_param())
                               : ir::ToSymbolName(absl::StrCat(name, "_", axis));
      if (given != options_.input_shapes.end()) {
        // The symbol takes the given value; a symbol shared by inputs must agree.
        const int64_t value = given->second[axis];
        auto [it, fresh] = fixed_symbols_.try_emplace(symbol, value);
        if (value < 0 || (!fresh && it->second != value)) {
          return absl::InvalidArgumentError(
              absl::StrCat("input '", name, "': dim ", symbol, " at axis ", axis, " given as ",
                           value, fresh ? "" : absl::StrCat(", elsewhere as ", it->second)));
        }
        shape.push_back(value);
        continue;
      }
      if (symbols_seen_.insert(symbol).second) out_.symbols.push_back(symbol);
      shape.push_back(ir::SymExpr::Symbol(symbol));
    }
    Value v;
    v.elem_type = tt.elem_type();
    v.shape = shape;
    v.graph_input = true;
    v.id = builder_.Input(name, *dtype, shape);
    if (*dtype == ir::DType::kI32) {  // computed in i64, as every INT32 value
      v.id = builder_.Add(ir::OpCode::kCast, {v.id}, {{"dtype", ir::DType::kI64}});
    }
    if (options_.dim_factor > 0) FactorDims(&v);
    GJ_RETURN_IF_ERROR(builder_.status());
    ctx_.Define(name, std::move(v));
    out_.input_names.push_back(name);
    return absl::OkStatus();
  }

  // ImportOptions::dim_factor: each symbolic dim S of input `v` past axis 0 becomes
  // factor * S_by<factor>, defined by a factor_dim (the first input with S) or checked by
  // an assert_dim (another input with S).
  void FactorDims(Value* v) {
    const int64_t f = options_.dim_factor;
    for (size_t axis = 1; axis < v->shape.size(); ++axis) {
      std::string symbol;
      if (!v->shape[axis].IsSymbol(&symbol)) continue;
      const std::string q = ir::ToSymbolName(absl::StrCat(symbol, "_by", f));
      const ir::SymExpr multiple = ir::SymExpr::Symbol(q) * f;
      if (factored_.insert(q).second) {
        v->id = builder_.Add(ir::OpCode::kFactorDim, {v->id},
                             {{"axis", static_cast<int64_t>(axis)}, {"factor", f}, {"symbol", q}});
      } else {
        v->id = builder_.Add(ir::OpCode::kAssertDim, {v->id},
                             {{"axis", static_cast<int64_t>(axis)}, {"dim", multiple}});
      }
      v->shape[axis] = multiple;
    }
  }

  absl::Status ImportNode(const pb::NodeProto& node) {
    ctx_.BeginNode(&node);
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      return ctx_.Unimplemented(absl::StrCat("op domain '", node.domain(), "' is not supported"));
    }
    if (ctx_.opset() < kNumpyBroadcastOpset && !SameBeforeOpset7(node.op_type())) {
      return ctx_.Unimplemented(absl::StrCat("op ", node.op_type(), " at opset ", ctx_.opset(),
                                             " (its meaning changed at opset 7 or before; "
                                             "graphjit imports it from opset 7)"));
    }
    auto it = Ops().find(node.op_type());
    if (it == Ops().end()) {
      return ctx_.Unimplemented(absl::StrCat("op ", node.op_type(), " is not supported"));
    }
    GJ_RETURN_IF_ERROR(it->second(ctx_));
    GJ_RETURN_IF_ERROR(ctx_.BuilderStatus());
    for (int i = 0; i < node.output_size(); ++i) {
      if (!node.output(i).empty() && ctx_.Find(node.output(i)) == nullptr) {
        // The model asks for an output the op does not have (handlers define every one
        // it has).
        return ctx_.Invalid(absl::StrCat("output ", i, " ('", node.output(i),
                                         "') is not an output of ", node.op_type()));
      }
    }
    return absl::OkStatus();
  }

  // A subgraph (If's branch, Loop's and Scan's body) imported in place of its node.
  // Deeper nesting is refused: a crafted file cannot exhaust the stack.
  absl::Status ImportSubgraph(const pb::GraphProto& g) {
    if (depth_ >= kMaxSubgraphDepth) {
      return ctx_.Invalid(absl::StrCat("nests subgraphs more than ", kMaxSubgraphDepth, " deep"));
    }
    ++depth_;
    absl::Status status = absl::OkStatus();
    for (const pb::TensorProto& init : g.initializer()) {
      status.Update(DefineConstant(init.name(), init));
    }
    for (int i = 0; status.ok() && i < g.node_size(); ++i) status = ImportNode(g.node(i));
    --depth_;
    return status;
  }

  static constexpr int kMaxSubgraphDepth = 32;

  const pb::ModelProto& model_;
  const ImportOptions& options_;
  ImportedModel out_;
  ir::GraphBuilder builder_;
  Context ctx_;
  absl::flat_hash_set<std::string> symbols_seen_;
  absl::flat_hash_set<std::string> factored_;                // the symbols FactorDims defined
  absl::flat_hash_map<std::string, int64_t> fixed_symbols_;  // options_.input_shapes'
  int depth_ = 0;                                            // of the subgraph being imported
};

}  // namespace

absl::StatusOr<ImportedModel> ImportFromBytes(absl::string_view bytes, absl::string_view what,
                                              const ImportOptions& options) {
  pb::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not a valid ONNX model (a serialized ModelProto)"));
  }
  absl::StatusOr<int64_t> opset = DefaultOpset(model);
  absl::StatusOr<ImportedModel> out;
  if (!opset.ok()) {
    out = opset.status();
  } else if (*opset < kMinOpset || *opset > kMaxOpset) {
    out = absl::UnimplementedError(absl::StrCat("opset ", *opset, " (graphjit imports opsets ",
                                                kMinOpset, " to ", kMaxOpset, ")"));
  } else {
    out = Importer(model, *opset, options).Run();
  }
  if (!out.ok()) {
    return absl::Status(out.status().code(), absl::StrCat(what, ": ", out.status().message()));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ModelInputNames(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  pb::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a valid ONNX model (a serialized ModelProto)"));
  }
  absl::flat_hash_set<std::string> initializers;
  for (const pb::TensorProto& t : model.graph().initializer()) initializers.insert(t.name());
  std::vector<std::string> names;
  for (const pb::ValueInfoProto& input : model.graph().input()) {
    if (!initializers.contains(input.name())) names.push_back(input.name());
  }
  return names;
}

absl::StatusOr<ImportedModel> Import(const std::string& path, const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ImportFromBytes(buffer.str(), path, options);
}

}  // namespace graphjit::onnx
