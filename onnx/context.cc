#include "onnx/context.h"

#include <cmath>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"

namespace graphjit::onnx {
namespace {

using ir::DType;
using ir::OpCode;
using ir::SymExpr;
using ir::ValueId;

// Integer constants up to this many elements are read as known values (shapes, axes).
constexpr int64_t kMaxKnownElements = 4096;
// Integers a double (the constant op's value) holds exactly.
constexpr int64_t kMaxExactInDouble = int64_t{1} << 53;

// The dims of a constant shape (known values have one).
std::vector<int64_t> ConstDimsOf(const ir::Shape& shape) {
  std::vector<int64_t> dims;
  for (const SymExpr& d : shape) dims.push_back(d.AsConstant().value_or(0));
  return dims;
}

}  // namespace

const Value* Context::Find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

absl::StatusOr<ValueId> Context::Materialize(const std::string& name) {
  auto it = values_.find(name);
  GJ_CHECK(it != values_.end()) << "value '" << name << "' was never defined";
  Value& v = it->second;
  if (v.id != ir::kInvalidValue) return v.id;
  if (v.outer_node) {
    return Invalid(absl::StrCat("its body reads '", name,
                                "' of the enclosing graph, which the loop does not bind"));
  }
  if (v.constant) {
    // A loop body's constant is defined again each iteration: the same tensor under the
    // same name is one param; another tensor under a taken name gets a fresh name.
    std::string param = name;
    for (int n = 2;; ++n) {
      auto it = params_->find(param);
      if (it == params_->end()) break;
      const runtime::Tensor& old = it->second;
      auto id = param_ids_.find(param);
      if (old.dtype() == v.constant->dtype() && old.shape() == v.constant->shape() &&
          std::memcmp(old.raw_data(), v.constant->raw_data(), old.nbytes()) == 0) {
        // A region (RegionScope) makes its own param node for the outer graph's.
        if (id == param_ids_.end() && in_region_) {
          id = param_ids_.emplace(param, b_->Param(param, old.dtype(), v.shape)).first;
        }
        if (id != param_ids_.end()) {
          v.id = id->second;
          return v.id;
        }
      }
      param = absl::StrCat(name, "_", n);
    }
    v.id = b_->Param(param, v.constant->dtype(), v.shape);
    (*params_)[param] = *v.constant;
    param_ids_[param] = v.id;
    return v.id;
  }
  GJ_CHECK(v.ints.has_value()) << "value '" << name << "' has neither node nor contents";
  const ir::DType dtype = v.elem_type == pb::TensorProto::BOOL ? ir::DType::kBool : ir::DType::kI64;
  bool all_constant = true, fit_double = true;
  for (const SymExpr& e : *v.ints) {
    std::optional<int64_t> c = e.AsConstant();
    all_constant &= c.has_value();
    fit_double &= !c || std::abs(*c) <= kMaxExactInDouble;
  }
  if (all_constant && !fit_double) {
    // Beyond 2^53 (an INT64_MAX "to the end", say) a double would round: a param is exact.
    GJ_ASSIGN_OR_RETURN(runtime::Tensor t, runtime::Tensor::Zeros(dtype, ConstDimsOf(v.shape)));
    for (size_t i = 0; i < v.ints->size(); ++i) t.data<int64_t>()[i] = *(*v.ints)[i].AsConstant();
    v.id = b_->Param(name, dtype, v.shape);
    (*params_)[name] = std::move(t);
    return v.id;
  }
  if (!fit_double) {
    return Unimplemented(absl::StrCat("value '", name, "' mixes dims and constants beyond 2^53"));
  }
  if (all_constant) {
    std::vector<double> values;
    for (const SymExpr& e : *v.ints) values.push_back(static_cast<double>(*e.AsConstant()));
    v.id = Op(OpCode::kConstant, {}, {{"value", values}, {"dtype", dtype}, {"shape", v.shape}});
    return v.id;
  }
  // A symbolic element (a dim used as data, e.g. to divide by a length) becomes the sum
  // of that many ones: exact, and it stays symbolic in the dim.
  std::vector<ValueId> parts;
  for (const SymExpr& e : *v.ints) {
    if (std::optional<int64_t> c = e.AsConstant()) {
      parts.push_back(Op(OpCode::kConstant, {},
                         {{"value", std::vector<double>{static_cast<double>(*c)}},
                          {"dtype", ir::DType::kI64},
                          {"shape", ir::Shape{1}}}));
      continue;
    }
    parts.push_back(DimValue(e));
  }
  if (parts.empty()) {
    return Unimplemented(absl::StrCat("value '", name, "' is an empty symbolic vector"));
  }
  ValueId joined =
      parts.size() == 1 ? parts[0] : Op(OpCode::kConcat, parts, {{"axis", int64_t{0}}});
  v.id = Op(OpCode::kReshape, {joined}, {{"shape", v.shape}});
  GJ_RETURN_IF_ERROR(BuilderStatus());
  return v.id;
}

ValueId Context::DimValue(const SymExpr& dim) {
  // The sum of that many ones: exact, and it stays symbolic in the dim.
  ValueId ones = Op(OpCode::kFull, {},
                    {{"value", 1.0}, {"dtype", ir::DType::kI64}, {"shape", ir::Shape{dim}}});
  return Op(OpCode::kReduceSum, {ones}, {{"axis", int64_t{0}}, {"keepdim", true}});
}

std::string Context::DataInputBehind(const std::string& name) const {
  std::vector<std::string> todo = {name};
  absl::flat_hash_set<std::string> seen = {name};
  while (!todo.empty()) {
    const std::string v = todo.back();
    todo.pop_back();
    const Value* value = Find(v);
    if (value == nullptr || KnownInts(*value) || value->constant) continue;
    if (value->graph_input) return v;
    auto it = producers_.find(v);
    if (it == producers_.end()) continue;
    for (const std::string& in : it->second->input()) {
      if (!in.empty() && seen.insert(in).second) todo.push_back(in);
    }
  }
  return "";
}

Context::RegionScope::RegionScope(Context& ctx, ir::GraphBuilder* region)
    : ctx_(ctx),
      outer_(ctx.b_),
      values_(ctx.values_),
      param_ids_(std::move(ctx.param_ids_)),
      in_region_(ctx.in_region_) {
  ctx.b_ = region;
  ctx.param_ids_.clear();
  ctx.in_region_ = true;
  // Values known at import are made again in the region; nodes of the outer graph are
  // not the region's (a body reads them through the inputs its loop binds).
  for (auto& [name, v] : ctx.values_) {
    v.outer_node = !v.constant.has_value() && !v.ints.has_value();
    v.id = ir::kInvalidValue;
  }
}

Context::RegionScope::~RegionScope() {
  ctx_.b_ = outer_;
  ctx_.values_ = std::move(values_);
  ctx_.param_ids_ = std::move(param_ids_);
  ctx_.in_region_ = in_region_;
}

absl::Status Context::ImportSubgraph(const pb::GraphProto& graph) {
  GJ_CHECK(import_subgraph_ != nullptr) << "no subgraph importer";
  const pb::NodeProto* node = node_;
  absl::Status status = import_subgraph_(graph);
  node_ = node;
  return status;
}

std::string Context::NodeLabel() const {
  if (node_ == nullptr) return "graph";
  if (!node_->name().empty())
    return absl::StrCat("node '", node_->name(), "' (", node_->op_type(), ")");
  return absl::StrCat("node with output '", node_->output_size() ? node_->output(0) : "", "' (",
                      node_->op_type(), ")");
}

absl::Status Context::Unimplemented(absl::string_view why) const {
  return absl::UnimplementedError(absl::StrCat(NodeLabel(), ": ", why));
}

absl::Status Context::Invalid(absl::string_view why) const {
  return absl::InvalidArgumentError(absl::StrCat(NodeLabel(), ": ", why));
}

absl::StatusOr<const Value*> Context::In(int i) const {
  if (!HasInput(i)) return Invalid(absl::StrCat("input ", i, " is missing"));
  const Value* v = Find(node_->input(i));
  if (v == nullptr) {
    return Invalid(absl::StrCat("input '", node_->input(i), "' is not defined before the node"));
  }
  return v;
}

absl::Status Context::ExpectInputs(int min, int max) const {
  if (num_inputs() < min || num_inputs() > max) {
    return Invalid(absl::StrCat("has ", num_inputs(), " inputs, expected ",
                                min == max ? absl::StrCat(min) : absl::StrCat(min, " to ", max)));
  }
  return absl::OkStatus();
}

absl::StatusOr<ValueId> Context::InNode(int i) {
  GJ_ASSIGN_OR_RETURN(const Value* v, In(i));
  if (!DTypeOfElem(v->elem_type)) {
    return Unimplemented(absl::StrCat("input '", node_->input(i), "' has element type ",
                                      ElemTypeName(v->elem_type), " (graphjit computes on ",
                                      kGraphElemTypes, ")"));
  }
  return Materialize(node_->input(i));
}

absl::StatusOr<ValueId> Context::InIndexNode(int i) {
  GJ_ASSIGN_OR_RETURN(const Value* v, In(i));
  if (!IsIntegerElem(v->elem_type)) {
    return Invalid(absl::StrCat("indices '", node_->input(i), "' have element type ",
                                ElemTypeName(v->elem_type)));
  }
  // Other integer types are constants or folded values, held as i64 (exactly).
  return Materialize(node_->input(i));
}

std::optional<std::vector<SymExpr>> Context::KnownInts(const Value& v) {
  if (v.ints) return v.ints;
  if (!v.constant || v.constant->numel() > kMaxKnownElements) return std::nullopt;
  const runtime::Tensor& t = *v.constant;
  if (t.dtype() != ir::DType::kI64 && t.dtype() != ir::DType::kBool) return std::nullopt;
  std::vector<SymExpr> out;
  out.reserve(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    out.push_back(t.dtype() == ir::DType::kI64 ? SymExpr(t.data<int64_t>()[i])
                                               : SymExpr(t.data<bool>()[i] ? 1 : 0));
  }
  return out;
}

absl::StatusOr<std::vector<SymExpr>> Context::InInts(int i) const {
  GJ_ASSIGN_OR_RETURN(const Value* v, In(i));
  std::optional<std::vector<SymExpr>> known = KnownInts(*v);
  if (!known) {
    return Unimplemented(absl::StrCat("input '", node_->input(i),
                                      "' must be known at import (a constant or a shape "
                                      "computation), but it depends on tensor data"));
  }
  return *std::move(known);
}

absl::StatusOr<std::vector<double>> Context::InConstDoubles(int i) const {
  GJ_ASSIGN_OR_RETURN(const Value* v, In(i));
  if (!v->constant) {
    return Unimplemented(absl::StrCat("input '", node_->input(i),
                                      "' must be known at import (a constant), but it "
                                      "depends on tensor data"));
  }
  std::vector<double> out;
  for (int64_t e = 0; e < v->constant->numel(); ++e) out.push_back(v->constant->ValueAt(e));
  return out;
}

absl::StatusOr<std::vector<int64_t>> Context::InConstInts(int i) const {
  GJ_ASSIGN_OR_RETURN(std::vector<SymExpr> ints, InInts(i));
  std::vector<int64_t> out;
  for (const SymExpr& e : ints) {
    std::optional<int64_t> c = e.AsConstant();
    if (!c) {
      return Unimplemented(absl::StrCat(
          "input '", node_->input(i), "' must be constant, but it is [",
          absl::StrJoin(ints, ", ",
                        [](std::string* s, const SymExpr& x) { s->append(x.ToString()); }),
          "]"));
    }
    out.push_back(*c);
  }
  return out;
}

absl::Status Context::BuilderStatus() const {
  const absl::Status& s = b_->status();
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(NodeLabel(), ": ", s.message()));
}

int32_t Context::IntegerElemOfNode() const {
  // The first integer input: data comes before indices, and a narrower type (a UINT8
  // constant held as i64) keeps its name, so a graph output of it is still refused.
  for (int j = 0; j < num_inputs(); ++j) {
    const Value* v = HasInput(j) ? Find(node_->input(j)) : nullptr;
    if (v != nullptr && IsIntegerElem(v->elem_type)) return v->elem_type;
  }
  return pb::TensorProto::INT64;
}

absl::Status Context::SetOut(int i, ValueId id, std::optional<int32_t> elem_type) {
  GJ_RETURN_IF_ERROR(BuilderStatus());
  GJ_CHECK(id != ir::kInvalidValue) << NodeLabel() << ": output " << i << " has no node";
  if (!WantsOutput(i)) return absl::OkStatus();
  if (!elem_type) {
    elem_type = type(id).dtype == DType::kI64 ? IntegerElemOfNode() : ElemOfDType(type(id).dtype);
  }
  // Ops whose int32 results stay within their inputs' values: no wrap needed.
  static const auto* const kInRange = new absl::flat_hash_set<std::string>{
      "Identity", "Reshape", "Flatten",      "Squeeze",        "Unsqueeze", "Transpose", "Concat",
      "Split",    "Slice",   "Gather",       "GatherElements", "Expand",    "Tile",      "Where",
      "Max",      "Min",     "ReduceMax",    "ReduceMin",      "Relu",      "Sign",      "Mod",
      "Trilu",    "OneHot",  "DepthToSpace", "SpaceToDepth"};
  if (*elem_type == pb::TensorProto::INT32 && type(id).dtype == DType::kI64 &&
      !kInRange->contains(node_->op_type())) {
    id = Op(OpCode::kCast, {Op(OpCode::kCast, {id}, {{"dtype", DType::kI32}})},
            {{"dtype", DType::kI64}});
    GJ_RETURN_IF_ERROR(BuilderStatus());
  }
  Value v;
  v.elem_type = *elem_type;
  v.shape = type(id).shape;
  v.id = id;
  Define(node_->output(i), std::move(v));
  return absl::OkStatus();
}

void Context::SetOutInts(int i, int32_t elem_type, std::vector<int64_t> shape,
                         std::vector<SymExpr> ints) {
  Value v;
  v.elem_type = elem_type;
  v.shape = ir::ConstShape(shape);
  v.ints = std::move(ints);
  SetOutValue(i, std::move(v));
}

void Context::SetOutValue(int i, Value v) {
  v.graph_input = false;  // the node's output (of an Identity of an input, say)
  if (WantsOutput(i)) Define(node_->output(i), std::move(v));
}

const pb::AttributeProto* Context::Attr(absl::string_view name) const {
  for (const pb::AttributeProto& a : node_->attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t Context::AttrInt(absl::string_view name, int64_t default_value) const {
  const pb::AttributeProto* a = Attr(name);
  return a ? a->i() : default_value;
}

float Context::AttrFloat(absl::string_view name, float default_value) const {
  const pb::AttributeProto* a = Attr(name);
  return a ? a->f() : default_value;
}

std::optional<std::vector<int64_t>> Context::AttrInts(absl::string_view name) const {
  const pb::AttributeProto* a = Attr(name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string Context::AttrString(absl::string_view name, absl::string_view default_value) const {
  const pb::AttributeProto* a = Attr(name);
  return a ? a->s() : std::string(default_value);
}

const ir::ValueType& Context::type(ValueId id) const {
  static const ir::ValueType* const kNone = new ir::ValueType();
  return id == ir::kInvalidValue ? *kNone : b_->type(id);
}

ValueId Context::Op(OpCode op, absl::Span<const ValueId> operands, ir::Attrs attrs) {
  const bool broadcasts = ir::LoweringOf(op) == ir::OpLowering::kPointwise || op == OpCode::kWhere;
  if (counts_.empty() || !broadcasts || operands.size() < 2) {
    return b_->Add(op, operands, std::move(attrs));
  }
  auto count_at = [&](ValueId v, size_t from_end) -> std::optional<std::string> {
    const ir::Shape& shape = type(v).shape;
    std::string name;
    if (from_end >= shape.size() || !shape[shape.size() - 1 - from_end].IsSymbol(&name) ||
        !counts_.contains(name)) {
      return std::nullopt;
    }
    return name;
  };
  std::vector<ValueId> unified(operands.begin(), operands.end());
  size_t rank = 0;
  for (ValueId v : unified) rank = std::max(rank, type(v).shape.size());
  for (size_t from_end = 0; from_end < rank; ++from_end) {
    std::optional<std::string> first;
    for (ValueId& v : unified) {
      std::optional<std::string> count = count_at(v, from_end);
      if (!count) continue;
      if (!first) {
        first = count;
      } else if (*count != *first) {
        const int axis = static_cast<int>(type(v).shape.size() - 1 - from_end);
        v = b_->Add(OpCode::kAssertDim, {v},
                    {{"axis", int64_t{axis}}, {"dim", ir::SymExpr::Symbol(*first)}});
      }
    }
  }
  return b_->Add(op, unified, std::move(attrs));
}

ValueId Context::ScalarLike(double value, ValueId like) {
  return b_->Scalar(value, type(like).dtype);
}

}  // namespace graphjit::onnx
