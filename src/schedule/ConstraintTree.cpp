#include "schedule/ConstraintTree.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace tessel::schedule {

namespace {

class TreeParser {
 public:
  TreeParser(const std::string& text, const std::string& origin, const poly::Scop& scop)
      : text_(text), origin_(origin), scop_(scop) {}

  ConstraintTree parse() {
    ConstraintTree tree;
    skipBlank();
    while (pos_ < text_.size()) {
      tree.roots.push_back(node(0));
      skipBlank();
    }
    if (tree.roots.empty())
      throw UserError({origin_, 1, 1},
                      "no constraints in the file (expected 'row { ... }', one per schedule row)");
    return tree;
  }

 private:
  SourceLoc here() const { return {origin_, line_, col_}; }
  [[noreturn]] void fail(const SourceLoc& at, const std::string& why) const { throw UserError(at, why); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  // Spaces, comments and, with `newlines`, line ends.
  void skipBlank(bool newlines = true) {
    while (pos_ < text_.size()) {
      char c = peek();
      if (c == '#') {
        while (pos_ < text_.size() && peek() != '\n') advance();
      } else if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
        advance();
      } else {
        return;
      }
    }
  }
  static bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  std::string identifier() {
    std::string out;
    while (pos_ < text_.size() && identChar(peek())) out += peek(), advance();
    return out;
  }
  bool atWord(const std::string& word) const {
    if (text_.compare(pos_, word.size(), word) != 0) return false;
    return !identChar(peek(word.size()));
  }
  bool atKeyword() const { return atWord("row") || atWord("coincident") || atWord("permutable"); }
  void expect(char c, const std::string& what) {
    skipBlank();
    if (peek() != c) fail(here(), std::string("expected '") + c + "' " + what);
    advance();
  }

  ConstraintNode node(int depth) {
    skipBlank();
    ConstraintNode n;
    n.loc = here();
    if (!atWord("row")) fail(here(), "expected 'row {' (a node of the constraint tree)");
    for (int i = 0; i < 3; ++i) advance();
    expect('{', "after 'row'");
    for (;;) {
      skipBlank();
      if (pos_ >= text_.size()) fail(n.loc, "this 'row {' is never closed with '}'");
      if (peek() == '}') {
        advance();
        return n;
      }
      if (peek() == ';') {
        advance();
        continue;
      }
      if (atWord("row")) {
        n.children.push_back(node(depth + 1));
      } else if (atWord("coincident")) {
        for (int i = 0; i < 10; ++i) advance();
        n.requireCoincident = true;
      } else if (atWord("permutable")) {
        for (int i = 0; i < 10; ++i) advance();
        n.requirePermutable = true;
      } else {
        n.constraints.push_back(constraint(depth));
      }
    }
  }

  // One side of a comparison: sum of [+-] [INT [*]] REF or INT.
  struct Side {
    std::vector<std::pair<CoefficientRef, int64_t>> terms;
    int64_t constant = 0;
  };
  Side side(int depth) {
    Side s;
    bool first = true;
    for (;;) {
      skipBlank(false);
      int sign = 1;
      if (peek() == '+' || peek() == '-') {
        sign = peek() == '-' ? -1 : 1;
        advance();
        skipBlank(false);
      } else if (!first) {
        return s;
      }
      first = false;
      SourceLoc termLoc = here();
      int64_t factor = 1;
      bool number = false;
      if (std::isdigit(static_cast<unsigned char>(peek()))) {
        factor = integer(termLoc);
        number = true;
        // "2C.k" and "2 * C.k" multiply; "1 C.k" is a constant and then a mistake.
        bool adjacent = identStart(peek());
        skipBlank(false);
        if (!adjacent && peek() != '*' && identStart(peek())) {
          s.constant += sign * factor;
          return s;
        }
        if (peek() == '*') {
          advance();
          skipBlank(false);
          number = false;
          if (!identStart(peek())) fail(here(), "expected a coefficient (STATEMENT.ITERATOR) after '*'");
        }
      }
      if (number && (!identStart(peek()) || atKeyword())) {
        s.constant += sign * factor;
        continue;
      }
      if (!identStart(peek()))
        fail(termLoc, "expected a coefficient (STATEMENT.ITERATOR or STATEMENT.1) or an integer");
      s.terms.push_back({reference(depth), sign * factor});
    }
  }

  int64_t integer(const SourceLoc& at) {
    int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (peek() - '0');
      if (v > 1'000'000) fail(at, "integer too large (constraints on schedule coefficients stay small)");
      advance();
    }
    return v;
  }

  CoefficientRef reference(int depth) {
    SourceLoc at = here();
    std::string name = identifier();
    if (peek() != '.') fail(here(), "expected '.' after '" + name + "' (STATEMENT.ITERATOR)");
    advance();
    bool init = false;
    if (atWord("init") && peek(4) == '.') {
      for (int i = 0; i < 5; ++i) advance();
      init = true;
    }
    CoefficientRef ref;
    ref.statement = statementNamed(name, init, at);
    ref.row = depth;
    const auto& st = scop_.statements[ref.statement];
    SourceLoc dimAt = here();
    if (peek() == '1' && !identChar(peek(1))) {
      advance();
      ref.dim = -1;
    } else {
      std::string dim = identifier();
      if (dim.empty()) fail(dimAt, "expected an iterator of " + st.name + " or '1' (its constant) after '.'");
      ref.dim = -1;
      for (size_t d = 0; d < st.dims.size(); ++d)
        if (st.dims[d] == dim) ref.dim = static_cast<int>(d);
      if (ref.dim < 0) {
        std::string dims;
        for (const auto& d : st.dims) dims += (dims.empty() ? "" : ", ") + d;
        fail(dimAt, "statement " + st.name + " has no iterator '" + dim +
                        "' (its iterators: " + (dims.empty() ? "none" : dims) + "; '1' is its constant)");
      }
    }
    if (peek() == '@') {
      advance();
      SourceLoc rowAt = here();
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail(rowAt, "expected a row number after '@'");
      int64_t row = integer(rowAt);
      if (row > depth)
        fail(rowAt, "row " + std::to_string(row) + " is below this node's row " + std::to_string(depth) +
                        " (a node constrains its own row and the rows above it)");
      ref.row = static_cast<int>(row);
    }
    return ref;
  }

  // A half-precision reduction into X is compiled as one into an f32 X_acc
  // (te/WidenAccumulators.h), then copied: the user's X is the reduction.
  static bool accumulatorOf(const std::string& output, const std::string& name) {
    std::string base = name + "_acc";
    if (output.compare(0, base.size(), base) != 0) return false;
    return std::all_of(output.begin() + static_cast<long>(base.size()), output.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  }

  int statementNamed(const std::string& name, bool init, const SourceLoc& at) const {
    int byTensor = -1;
    for (size_t s = 0; s < scop_.statements.size(); ++s) {
      const auto& st = scop_.statements[s];
      if (!init && st.name == name) return static_cast<int>(s);
      const std::string& output = scop_.program->stages[st.stage].output;
      bool isInit = st.kind == poly::StatementKind::Init;
      if (isInit != init) continue;
      if (accumulatorOf(output, name)) return static_cast<int>(s);
      if (output == name && byTensor < 0) byTensor = static_cast<int>(s);
    }
    if (byTensor >= 0) return byTensor;
    std::string known;
    for (const auto& st : scop_.statements) {
      std::string tensor = scop_.program->stages[st.stage].output;
      known += (known.empty() ? "" : ", ") +
               (st.kind == poly::StatementKind::Init ? tensor + ".init" : tensor) + " (" + st.name + ")";
    }
    fail(at, "no statement " + (init ? name + ".init" : name) + " in the program (its statements: " + known +
                 ")");
  }

  CoefficientConstraint constraint(int depth) {
    CoefficientConstraint c;
    c.loc = here();
    size_t start = pos_;
    Side left = side(depth);
    skipBlank(false);
    int relation = 0;  // 0: =, 1: >=, -1: <=
    if (peek() == '=') {
      advance();
      if (peek() == '=') advance();
    } else if (peek() == '>' && peek(1) == '=') {
      advance(), advance();
      relation = 1;
    } else if (peek() == '<' && peek(1) == '=') {
      advance(), advance();
      relation = -1;
    } else {
      fail(here(), "expected '=', '>=' or '<=' in the constraint");
    }
    Side right = side(depth);
    skipBlank(false);
    if (pos_ < text_.size() && peek() != ';' && peek() != '\n' && peek() != '}' && !atKeyword())
      fail(here(), "expected ';', a line's end, '}' or 'row' after the constraint");
    c.text = text_.substr(start, pos_ - start);
    while (!c.text.empty() && std::isspace(static_cast<unsigned char>(c.text.back()))) c.text.pop_back();
    // left - right (=, >=) or right - left (<=) compared with 0.
    int sign = relation < 0 ? -1 : 1;
    for (auto [ref, f] : left.terms) c.terms.push_back({ref, sign * f});
    for (auto [ref, f] : right.terms) c.terms.push_back({ref, -sign * f});
    c.constant = sign * (left.constant - right.constant);
    c.equality = relation == 0;
    if (c.terms.empty()) fail(c.loc, "the constraint names no schedule coefficient");
    return c;
  }

  const std::string& text_;
  std::string origin_;
  const poly::Scop& scop_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

void print(std::ostringstream& os, const ConstraintNode& node, const poly::Scop& scop, int depth) {
  std::string indent(2 * static_cast<size_t>(depth + 1), ' ');
  os << indent << "row {\n";
  for (const auto& c : node.constraints) {
    os << indent << "  ";
    bool first = true;
    for (const auto& [ref, f] : c.terms) {
      const auto& st = scop.statements[ref.statement];
      os << (first ? (f < 0 ? "-" : "") : (f < 0 ? " - " : " + "));
      if (f != 1 && f != -1) os << (f < 0 ? -f : f) << "*";
      os << st.name << "." << (ref.dim < 0 ? "1" : st.dims[ref.dim]);
      if (ref.row != depth) os << "@" << ref.row;
      first = false;
    }
    if (c.constant != 0)
      os << (c.constant < 0 ? " - " : " + ") << (c.constant < 0 ? -c.constant : c.constant);
    os << (c.equality ? " = 0" : " >= 0") << "\n";
  }
  if (node.requireCoincident) os << indent << "  coincident\n";
  if (node.requirePermutable) os << indent << "  permutable\n";
  for (const auto& child : node.children) print(os, child, scop, depth + 1);
  os << indent << "}\n";
}

}  // namespace

std::string ConstraintTree::toString(const poly::Scop& scop) const {
  std::ostringstream os;
  for (const auto& root : roots) print(os, root, scop, 0);
  return os.str();
}

ConstraintTree parseConstraintTree(const std::string& text, const std::string& origin,
                                   const poly::Scop& scop) {
  return TreeParser(text, origin, scop).parse();
}

}  // namespace tessel::schedule
