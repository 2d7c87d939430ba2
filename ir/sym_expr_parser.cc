// The SymExpr parser: ParseSymExpr and ParseSymExprAt.
#include <cctype>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "ir/sym_expr.h"
#include "ir/sym_expr_internal.h"

namespace graphjit::ir {

// Parser: expr := term (('+'|'-') term)*; term := unary (('*'|'/'|'%') unary)*;
// unary := '-' unary | primary; primary := int | name | ('max'|'min') '(' expr ',' expr ')'
// | '(' expr ')'.
namespace {

// Bounds on parsed text, so hostile input fails cleanly instead of exhausting the stack or
// memory: the nesting depth (parentheses, max/min, unary minus, and chained '/' or '%',
// each of which nests an atom inside the next) and the size of every intermediate result
// (a product of sums multiplies out, so `(A+B+C)*(A+B+C)*...` grows exponentially in the
// length of the text). Real dims are nowhere near either.
constexpr int kMaxDepth = 200;
constexpr size_t kMaxProductTerms = 4096;
constexpr size_t kMaxTextSize = 4096;

class SymParser {
 public:
  SymParser(absl::string_view text, size_t pos) : text_(text), start_(pos), pos_(pos) {}

  absl::StatusOr<SymExpr> Expr(int depth = 0) {
    if (depth > kMaxDepth) return Error("expression nested too deeply");
    absl::StatusOr<SymExpr> lhs = Term(depth);
    if (!lhs.ok()) return lhs;
    SymExpr acc = *lhs;
    while (true) {
      SkipSpace();
      if (Peek() != '+' && Peek() != '-') return acc;
      char op = text_[pos_++];
      absl::StatusOr<SymExpr> rhs = Term(depth);
      if (!rhs.ok()) return rhs;
      acc = op == '+' ? acc + *rhs : acc - *rhs;
      GJ_RETURN_IF_ERROR(CheckSize(acc));
    }
  }

  size_t pos() const { return pos_; }

 private:
  absl::StatusOr<SymExpr> Term(int depth) {
    absl::StatusOr<SymExpr> lhs = Unary(depth);
    if (!lhs.ok()) return lhs;
    SymExpr acc = *lhs;
    while (true) {
      SkipSpace();
      char c = Peek();
      if (c != '*' && c != '/' && c != '%') return acc;
      ++pos_;
      absl::StatusOr<SymExpr> rhs = Unary(depth);
      if (!rhs.ok()) return rhs;
      if (c == '*') {
        if (SymExprBuilder::Terms(acc).size() * SymExprBuilder::Terms(*rhs).size() >
            kMaxProductTerms) {
          return Error("expression too large");
        }
        acc = acc * *rhs;
      } else {
        // (A divisor that wrapped to 0 is reported as the overflow it is.)
        if (rhs->IsConstant() && *rhs->AsConstant() == 0 && !rhs->Overflowed()) {
          return Error(c == '/' ? "division by zero" : "mod by zero");
        }
        if (++depth > kMaxDepth) return Error("expression nested too deeply");
        acc = c == '/' ? SymExpr::FloorDiv(acc, *rhs) : SymExpr::Mod(acc, *rhs);
      }
      GJ_RETURN_IF_ERROR(CheckSize(acc));
    }
  }

  absl::StatusOr<SymExpr> Unary(int depth) {
    SkipSpace();
    if (Peek() == '-') {
      ++pos_;
      if (depth > kMaxDepth) return Error("expression nested too deeply");
      absl::StatusOr<SymExpr> e = Unary(depth + 1);
      if (!e.ok()) return e;
      return -*e;
    }
    return Primary(depth);
  }

  absl::StatusOr<SymExpr> Primary(int depth) {
    SkipSpace();
    char c = Peek();
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(Peek()))) {
        int digit = text_[pos_] - '0';
        if (v > (INT64_MAX - digit) / 10) return Error("integer literal too large");
        v = v * 10 + digit;
        ++pos_;
      }
      return SymExpr(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (std::isalnum(static_cast<unsigned char>(Peek())) || Peek() == '_') ++pos_;
      std::string name(text_.substr(start, pos_ - start));
      SkipSpace();
      if ((name == "max" || name == "min") && Peek() == '(') {
        ++pos_;
        absl::StatusOr<SymExpr> a = Expr(depth + 1);
        if (!a.ok()) return a;
        GJ_RETURN_IF_ERROR(Expect(','));
        absl::StatusOr<SymExpr> b = Expr(depth + 1);
        if (!b.ok()) return b;
        GJ_RETURN_IF_ERROR(Expect(')'));
        SymExpr e = name == "max" ? SymExpr::Max(*a, *b) : SymExpr::Min(*a, *b);
        GJ_RETURN_IF_ERROR(CheckSize(e));
        return e;
      }
      return SymExpr::Symbol(name);
    }
    if (c == '(') {
      ++pos_;
      absl::StatusOr<SymExpr> e = Expr(depth + 1);
      if (!e.ok()) return e;
      GJ_RETURN_IF_ERROR(Expect(')'));
      return e;
    }
    return Error("expected an integer, a symbol name, max(, min( or '('");
  }

  absl::Status CheckSize(const SymExpr& e) const {
    if (e.ToString().size() <= kMaxTextSize) return absl::OkStatus();
    return Error("expression too large");
  }

 public:
  // A constant of the dim (a coefficient, or the constant term) left int64. The parse goes
  // on with wrapped values (they are defined, and marked) so that the error can quote the
  // whole dim, at its start.
  absl::Status OverflowError() const {
    absl::string_view text = absl::StripAsciiWhitespace(text_.substr(start_, pos_ - start_));
    std::string quoted =
        text.size() <= 60 ? std::string(text) : absl::StrCat(text.substr(0, 57), "...");
    return absl::InvalidArgumentError(
        absl::StrCat("offset ", start_, ": dim '", quoted,
                     "' overflows int64 (its constants must stay within +-2^63)"));
  }

 private:
  absl::Status Expect(char c) {
    SkipSpace();
    if (Peek() != c) return Error(absl::StrCat("expected '", std::string(1, c), "'"));
    ++pos_;
    return absl::OkStatus();
  }

  absl::Status Error(absl::string_view what) const {
    std::string found = pos_ < text_.size() ? absl::StrCat("'", text_.substr(pos_, 1), "'")
                                            : std::string("end of input");
    return absl::InvalidArgumentError(
        absl::StrCat("offset ", pos_, ": ", what, " in dim expression, found ", found));
  }

  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  absl::string_view text_;
  size_t start_;
  size_t pos_;
};

}  // namespace

absl::StatusOr<SymExpr> ParseSymExprAt(absl::string_view text, size_t* pos) {
  SymParser parser(text, *pos);
  absl::StatusOr<SymExpr> e = parser.Expr();
  if (e.ok() && e->Overflowed()) return parser.OverflowError();  // quotes up to pos()
  if (e.ok()) *pos = parser.pos();
  return e;
}

absl::StatusOr<SymExpr> ParseSymExpr(absl::string_view text) {
  size_t pos = 0;
  absl::StatusOr<SymExpr> e = ParseSymExprAt(text, &pos);
  if (!e.ok()) return e;
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
  if (pos != text.size()) {
    return absl::InvalidArgumentError(absl::StrCat("offset ", pos, ": unexpected '",
                                                   text.substr(pos, 1), "' after dim expression"));
  }
  return e;
}

}  // namespace graphjit::ir
