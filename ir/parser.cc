// The textual IR parser: a hand-written recursive descent over the bytes of the text,
// reading attribute values by the kinds in each op's schema (ir/ops.def).
#include "ir/parser.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "ir/regions.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"

namespace graphjit::ir {
namespace {

// Shape rules multiply all dims of a shape (reshape, constant), and a product of sums such
// as (S+T)*(U+V)*... has exponentially many terms in the rank. These bounds keep every
// accepted shape cheap to reason about; no real tensor comes near them.
constexpr size_t kMaxRank = 64;
constexpr int64_t kMaxShapeTerms = 4096;

bool IsWordChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Characters of a number token (ints, floats with exponents, inf/nan); the value is
// checked by SimpleAtoi/SimpleAtod afterwards.
bool IsNumberChar(char c) { return IsWordChar(c) || c == '.' || c == '+' || c == '-'; }

// Upper bound on the number of terms of the product of the dims: a dim's canonical text
// has one '+' or '-' per term after the first (plus possibly a leading '-').
int64_t ShapeTermBound(const Shape& shape) {
  int64_t bound = 1;
  for (const SymExpr& d : shape) {
    const std::string& text = d.ToString();
    int64_t terms =
        1 + std::count_if(text.begin(), text.end(), [](char c) { return c == '+' || c == '-'; });
    bound = std::min(bound * terms, kMaxShapeTerms + 1);
  }
  return bound;
}

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<Graph> Parse() {
    SkipTrivia();
    size_t graph_pos = pos_;
    GJ_ASSIGN_OR_RETURN(Graph graph, ParseGraphText());
    SkipTrivia();
    if (!AtEnd()) return Expected("end of input after the graph");

    // Every rule the verifier checks was checked above with a location; this is a
    // backstop, so report it at the graph.
    if (absl::Status s = VerifyGraph(graph); !s.ok()) {
      return ErrorAt(graph_pos, absl::StrCat("graph fails verification: ", s.message()));
    }
    return graph;
  }

 private:
  struct Definition {
    ValueId id;
    size_t pos;
  };

  // A parser for a region's graph at `pos` of the same text, `depth` regions deep (its
  // values are its own; errors keep the text's line numbers).
  Parser(absl::string_view text, size_t pos, int depth) : text_(text), pos_(pos), depth_(depth) {}

  // `graph NAME { nodes return values }`.
  absl::StatusOr<Graph> ParseGraphText() {
    SkipTrivia();
    if (Word() != "graph") return Expected("'graph'");
    pos_ += 5;
    SkipTrivia();
    size_t name_end = pos_;
    while (name_end < text_.size() &&
           (IsWordChar(text_[name_end]) || text_[name_end] == '.' || text_[name_end] == '-')) {
      ++name_end;
    }
    if (name_end == pos_) return Expected("a graph name");
    Graph graph(std::string(text_.substr(pos_, name_end - pos_)));
    pos_ = name_end;
    GJ_RETURN_IF_ERROR(ExpectChar('{', "'{' after the graph name"));

    while (true) {
      SkipTrivia();
      if (Peek() == '%') {
        GJ_RETURN_IF_ERROR(ParseNode(&graph));
      } else if (Word() == "return") {
        pos_ += 6;
        break;
      } else {
        return Expected("a node ('%name = op ...') or 'return'");
      }
    }
    do {
      GJ_ASSIGN_OR_RETURN(ValueId id, ParseUse());
      graph.AddOutput(id);
    } while (TryConsume(','));
    GJ_RETURN_IF_ERROR(ExpectChar('}', "',' or '}' after a returned value"));
    return graph;
  }

  // The `region graph NAME { ... }` blocks after a node's type.
  absl::StatusOr<std::vector<std::shared_ptr<const Graph>>> ParseRegions() {
    std::vector<std::shared_ptr<const Graph>> regions;
    while (true) {
      SkipTrivia();
      if (Word() != "region") return regions;
      if (depth_ + 1 >= kMaxRegionDepth) {
        return ErrorAt(pos_, absl::StrCat("regions nest deeper than ", kMaxRegionDepth));
      }
      pos_ += 6;
      Parser sub(text_, pos_, depth_ + 1);
      GJ_ASSIGN_OR_RETURN(Graph region, sub.ParseGraphText());
      pos_ = sub.pos_;
      regions.push_back(std::make_shared<const Graph>(std::move(region)));
    }
  }

  // `%name = op(%a, %b) {attr=value, ...} : type`.
  absl::Status ParseNode(Graph* graph) {
    size_t def_pos = pos_;
    GJ_ASSIGN_OR_RETURN(std::string name, ParseValueName());
    if (auto it = values_.find(name); it != values_.end()) {
      return ErrorAt(def_pos, absl::StrCat("value ", name, " is already defined at ",
                                           Location(it->second.pos)));
    }
    GJ_RETURN_IF_ERROR(ExpectChar('=', absl::StrCat("'=' after ", name)));
    SkipTrivia();
    size_t op_pos = pos_;
    absl::string_view word = Word();
    if (word.empty()) return Expected("an op name");
    std::optional<OpCode> op = OpFromName(word);
    if (!op) return ErrorAt(op_pos, absl::StrCat("unknown op '", word, "'"));
    pos_ += word.size();
    const OpInfo& info = GetOpInfo(*op);

    std::vector<ValueId> operands;
    bool has_operands = TryConsume('(');
    if (has_operands && !TryConsume(')')) {
      do {
        GJ_ASSIGN_OR_RETURN(ValueId v, ParseUse());
        operands.push_back(v);
      } while (TryConsume(','));
      GJ_RETURN_IF_ERROR(ExpectChar(')', "',' or ')' after an operand"));
    }
    Attrs attrs;
    bool has_attrs = TryConsume('{');
    if (has_attrs && !TryConsume('}')) {
      do {
        GJ_RETURN_IF_ERROR(ParseAttr(info, &attrs));
      } while (TryConsume(','));
      GJ_RETURN_IF_ERROR(ExpectChar('}', "',' or '}' after an attribute"));
    }
    GJ_RETURN_IF_ERROR(ExpectChar(':', has_attrs      ? "':' and the result type"
                                       : has_operands ? "'{' or ':'"
                                                      : "'(', '{' or ':'"));
    SkipTrivia();
    size_t type_pos = pos_;
    GJ_ASSIGN_OR_RETURN(ValueType declared, ParseType());

    // The printer leaves out a source op's dtype and shape: they are its result type.
    if (IsSourceOp(*op)) {
      if (!attrs.Has("dtype")) attrs.Set("dtype", declared.dtype);
      if (!attrs.Has("shape")) attrs.Set("shape", declared.shape);
    }
    std::vector<ValueType> operand_types;
    for (ValueId v : operands) operand_types.push_back(graph->type(v));
    absl::StatusOr<ValueType> inferred = InferType(*op, operand_types, attrs);
    if (!inferred.ok()) return ErrorAt(op_pos, inferred.status().message());
    GJ_ASSIGN_OR_RETURN(std::vector<std::shared_ptr<const Graph>> regions, ParseRegions());
    if (absl::Status s = CheckRegionSignatures(*op, operand_types, attrs, regions); !s.ok()) {
      return ErrorAt(op_pos, s.message());
    }
    if (!(*inferred == declared)) {
      return ErrorAt(type_pos, absl::StrCat("declared type ", TypeToString(declared), " of ", name,
                                            " differs from the type ", info.spelling, " infers, ",
                                            TypeToString(*inferred)));
    }
    if (*op == OpCode::kInput || *op == OpCode::kParam) {
      auto& names = *op == OpCode::kInput ? input_names_ : param_names_;
      const std::string& source_name = attrs.Get<std::string>("name");
      auto [it, inserted] = names.emplace(source_name, def_pos);
      if (!inserted) {
        return ErrorAt(def_pos, absl::StrCat("duplicate ", info.spelling, " name \"",
                                             absl::CHexEscape(source_name), "\" (first defined at ",
                                             Location(it->second), ")"));
      }
    }
    ValueId id = graph->Append(*op, std::move(operands), std::move(attrs), std::move(declared),
                               std::move(regions));
    values_.emplace(std::move(name), Definition{id, def_pos});
    return absl::OkStatus();
  }

  // `name=value`, the value read as the kind the op's schema gives for `name`.
  absl::Status ParseAttr(const OpInfo& info, Attrs* attrs) {
    SkipTrivia();
    size_t name_pos = pos_;
    absl::string_view name = Word();
    if (name.empty()) return Expected("an attribute name");
    auto spec = std::find_if(info.attrs.begin(), info.attrs.end(),
                             [&](const AttrSpec& s) { return s.name == name; });
    if (spec == info.attrs.end()) {
      std::vector<std::string> known;
      for (const AttrSpec& s : info.attrs) known.push_back(s.name);
      return ErrorAt(
          name_pos,
          absl::StrCat("op '", info.spelling, "' has no attribute '", name, "' (expected ",
                       known.empty() ? "none" : absl::StrJoin(known, ", "), ")"));
    }
    if (attrs->Has(name)) {
      return ErrorAt(name_pos, absl::StrCat("attribute '", name, "' is given twice"));
    }
    pos_ += name.size();
    GJ_RETURN_IF_ERROR(ExpectChar('=', absl::StrCat("'=' after attribute '", name, "'")));
    GJ_ASSIGN_OR_RETURN(AttrValue value, ParseAttrValue(spec->kind));
    attrs->Set(spec->name, std::move(value));
    return absl::OkStatus();
  }

  absl::StatusOr<AttrValue> ParseAttrValue(AttrKind kind) {
    switch (kind) {
      case AttrKind::kInt:
        return ParseInt();
      case AttrKind::kInts:
        return ParseList<int64_t>("an integer", [this] { return ParseInt(); });
      case AttrKind::kFloat:
        return ParseFloat();
      case AttrKind::kFloats:
        return ParseList<double>("a number", [this] { return ParseFloat(); });
      case AttrKind::kDim:
        return ParseDim();
      case AttrKind::kDims:
        return ParseDims();
      case AttrKind::kDType:
        return ParseDType();
      case AttrKind::kBool: {
        SkipTrivia();
        absl::string_view word = Word();
        if (word != "true" && word != "false") return Expected("true or false");
        pos_ += word.size();
        return AttrValue(word == "true");
      }
      case AttrKind::kString:
        return ParseString();
    }
    return Expected("an attribute value");
  }

  // `[e, e, ...]`, possibly empty.
  template <typename T, typename ParseElement>
  absl::StatusOr<std::vector<T>> ParseList(absl::string_view element, ParseElement parse) {
    GJ_RETURN_IF_ERROR(ExpectChar('[', "'['"));
    std::vector<T> items;
    if (TryConsume(']')) return items;
    do {
      GJ_ASSIGN_OR_RETURN(T item, parse());
      items.push_back(std::move(item));
    } while (TryConsume(','));
    GJ_RETURN_IF_ERROR(ExpectChar(']', absl::StrCat("',' or ']' after ", element)));
    return items;
  }

  absl::StatusOr<int64_t> ParseInt() {
    SkipTrivia();
    absl::string_view token = NumberToken();
    int64_t value = 0;
    if (token.empty() || !absl::SimpleAtoi(token, &value)) {
      absl::string_view digits = absl::StripPrefix(token, "-");
      if (!digits.empty() && std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) {
        return ErrorAt(pos_, absl::StrCat("integer ", token, " is out of range"));
      }
      return Expected("an integer");
    }
    pos_ += token.size();
    return value;
  }

  // A decimal float, `inf`, `-inf` or `nan` (as FloatText in ir/attrs.cc writes them).
  absl::StatusOr<double> ParseFloat() {
    SkipTrivia();
    absl::string_view token = NumberToken();
    double value = 0;
    if (token.empty() || !absl::SimpleAtod(token, &value)) return Expected("a number");
    // `inf` spelled out is fine; digits that overflow to infinity are a mistake.
    if (std::isinf(value) && std::any_of(token.begin(), token.end(), absl::ascii_isdigit)) {
      return ErrorAt(pos_, absl::StrCat("number ", token, " is out of the range of f64"));
    }
    pos_ += token.size();
    return value;
  }

  absl::StatusOr<SymExpr> ParseDim() {
    SkipTrivia();
    size_t start = pos_;
    size_t end = pos_;
    absl::StatusOr<SymExpr> dim = ParseSymExprAt(text_, &end);
    if (!dim.ok()) {
      // ParseSymExprAt reports `offset N: what ..., found ...`; keep the message but
      // point at the line and column of that offset.
      absl::string_view message = dim.status().message();
      size_t offset = start;
      if (absl::ConsumePrefix(&message, "offset ")) {
        size_t colon = message.find(": ");
        if (colon == absl::string_view::npos ||
            !absl::SimpleAtoi(message.substr(0, colon), &offset) || offset > text_.size()) {
          offset = start;
        } else {
          message.remove_prefix(colon + 2);
        }
      }
      return ErrorAt(offset, message);
    }
    pos_ = end;
    return dim;
  }

  // `[d, d, ...]`: a shape, or a dims attribute.
  absl::StatusOr<Shape> ParseDims() {
    SkipTrivia();
    size_t start = pos_;
    GJ_ASSIGN_OR_RETURN(Shape shape, ParseList<SymExpr>("a dim", [this] { return ParseDim(); }));
    if (shape.size() > kMaxRank) {
      return ErrorAt(start, absl::StrCat("shape has ", shape.size(), " dims, more than the ",
                                         kMaxRank, " the parser accepts"));
    }
    if (ShapeTermBound(shape) > kMaxShapeTerms) {
      std::string limit = absl::StrCat(kMaxShapeTerms, " terms");
      return ErrorAt(start, absl::StrCat("shape ", ShapeToString(shape), " is too complex: its ",
                                         "element count would expand to more than ", limit));
    }
    return shape;
  }

  absl::StatusOr<DType> ParseDType() {
    SkipTrivia();
    absl::string_view word = Word();
    std::optional<DType> dtype = DTypeFromName(word);
    if (!dtype) return Expected("a dtype (f32, f64, i64 or bool)");
    pos_ += word.size();
    return *dtype;
  }

  // `f64[2, S]`.
  absl::StatusOr<ValueType> ParseType() {
    GJ_ASSIGN_OR_RETURN(DType dtype, ParseDType());
    GJ_ASSIGN_OR_RETURN(Shape shape, ParseDims());
    return ValueType{dtype, std::move(shape)};
  }

  // `"..."` with `\"` and `\\` escapes (the only two the printer writes); other bytes,
  // newlines included, stand for themselves.
  absl::StatusOr<std::string> ParseString() {
    GJ_RETURN_IF_ERROR(ExpectChar('"', "a string"));
    size_t open = pos_ - 1;
    std::string out;
    while (true) {
      if (AtEnd()) return ErrorAt(open, "unterminated string, found end of input");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c == '\\') {
        if (AtEnd()) return ErrorAt(open, "unterminated string, found end of input");
        c = text_[pos_];
        if (c != '"' && c != '\\') {
          return ErrorAt(pos_ - 1, absl::StrCat("expected \\\" or \\\\ in a string, found '\\",
                                                absl::CHexEscape(absl::string_view(&c, 1)), "'"));
        }
        ++pos_;
      }
      out.push_back(c);
    }
  }

  // `%` followed by digits or an identifier; returns the name with its `%`.
  absl::StatusOr<std::string> ParseValueName() {
    SkipTrivia();
    if (Peek() != '%') return Expected("a value name ('%name')");
    size_t start = pos_++;
    absl::string_view word = Word();
    if (word.empty()) return Expected("digits or an identifier after '%'");
    if (absl::ascii_isdigit(static_cast<unsigned char>(word[0])) &&
        !std::all_of(word.begin(), word.end(), absl::ascii_isdigit)) {
      return ErrorAt(
          start, absl::StrCat("value name %", word, " is neither all digits nor an identifier"));
    }
    pos_ += word.size();
    return absl::StrCat("%", word);
  }

  // A use of an already defined value.
  absl::StatusOr<ValueId> ParseUse() {
    SkipTrivia();
    size_t use_pos = pos_;
    GJ_ASSIGN_OR_RETURN(std::string name, ParseValueName());
    auto it = values_.find(name);
    if (it == values_.end()) {
      return ErrorAt(use_pos, absl::StrCat("undefined value ", name,
                                           " (a value must be defined before it is used)"));
    }
    return it->second.id;
  }

  // --- Characters and errors.

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  // Whitespace and `#` comments.
  void SkipTrivia() {
    while (!AtEnd()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '#') {
        while (!AtEnd() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  // The run of identifier characters at the current position (not consumed).
  absl::string_view Word() const { return RunAt(pos_, IsWordChar); }
  absl::string_view NumberToken() const { return RunAt(pos_, IsNumberChar); }
  absl::string_view RunAt(size_t pos, bool (*in_run)(char)) const {
    size_t end = pos;
    while (end < text_.size() && in_run(text_[end])) ++end;
    return text_.substr(pos, end - pos);
  }

  bool TryConsume(char c) {
    SkipTrivia();
    if (AtEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  absl::Status ExpectChar(char c, absl::string_view what) {
    if (TryConsume(c)) return absl::OkStatus();
    return Expected(what);
  }

  // `expected WHAT, found X` at the current position.
  absl::Status Expected(absl::string_view what) const {
    return ErrorAt(pos_, absl::StrCat("expected ", what, ", found ", Found()));
  }

  // The token at the current position, quoted, for error messages.
  std::string Found() const {
    if (AtEnd()) return "end of input";
    absl::string_view token = RunAt(pos_, IsNumberChar);
    if (text_[pos_] == '%') token = text_.substr(pos_, 1 + RunAt(pos_ + 1, IsWordChar).size());
    if (token.empty()) token = text_.substr(pos_, 1);
    if (token.size() > 24) return absl::StrCat("'", absl::CHexEscape(token.substr(0, 24)), "...'");
    return absl::StrCat("'", absl::CHexEscape(token), "'");
  }

  // `line:col` (1-based) of a byte offset.
  std::string Location(size_t pos) const {
    pos = std::min(pos, text_.size());
    absl::string_view before = text_.substr(0, pos);
    size_t line = 1 + std::count(before.begin(), before.end(), '\n');
    size_t last_newline = before.rfind('\n');
    size_t col = last_newline == absl::string_view::npos ? pos + 1 : pos - last_newline;
    return absl::StrCat(line, ":", col);
  }

  absl::Status ErrorAt(size_t pos, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(Location(pos), ": ", message));
  }

  absl::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;
  absl::flat_hash_map<std::string, Definition> values_;
  absl::flat_hash_map<std::string, size_t> input_names_, param_names_;
};

}  // namespace

absl::StatusOr<Graph> ParseGraph(absl::string_view text) { return Parser(text).Parse(); }

absl::StatusOr<Graph> ParseGraphFile(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": is a directory, not an IR file"));
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open IR file"));
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read IR file"));
  absl::StatusOr<Graph> graph = ParseGraph(text);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(), absl::StrCat(path, ":", graph.status().message()));
  }
  return graph;
}

}  // namespace graphjit::ir

#undef ASSIGN_OR_RETURN_IMPL
#undef ASSIGN_OR_RETURN
#undef RETURN_IF_ERROR
#undef GJ_PARSER_CONCAT
#undef GJ_PARSER_CONCAT_INNER
