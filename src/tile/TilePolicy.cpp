#include "tile/TilePolicy.h"

#include <cctype>
#include <limits>

namespace tessel::tile {

namespace {

class PolicyParser {
 public:
  PolicyParser(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}

  TilePolicy parse() {
    TilePolicy policy;
    skipBlank(true);
    while (pos_ < text_.size()) {
      policy.statements.push_back(statement());
      skipBlank(false);
      if (pos_ < text_.size() && !atSeparator())
        fail("expected ';' or a new line after the statement's tiles");
      skipBlank(true);
    }
    if (policy.statements.empty()) fail("empty tiling policy (expected e.g. 'S_1: 64@L2, 32@L1')");
    for (size_t i = 0; i < policy.statements.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (policy.statements[i].statement == policy.statements[j].statement)
          throw UserError(policy.statements[i].loc,
                          "statement " + policy.statements[i].statement + " is tiled twice in the policy");
    return policy;
  }

 private:
  SourceLoc here() const { return {origin_, line_, col_}; }
  [[noreturn]] void fail(const std::string& why) const { throw UserError(here(), why); }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  bool atSeparator() const { return peek() == ';' || peek() == '\n'; }

  // Spaces and comments; with `separators`, also ';' and new lines.
  void skipBlank(bool separators) {
    while (pos_ < text_.size()) {
      char c = peek();
      if (c == '#') {
        while (pos_ < text_.size() && peek() != '\n') advance();
      } else if (c == ' ' || c == '\t' || c == '\r' || (separators && (c == ';' || c == '\n'))) {
        advance();
      } else {
        return;
      }
    }
  }

  void expect(char c, const std::string& what) {
    skipBlank(false);
    if (peek() != c) fail("expected " + what);
    advance();
  }

  StatementTiling statement() {
    StatementTiling st;
    st.loc = here();
    if (peek() == '*') {
      advance();
      st.statement = "*";
    } else {
      if (peek() != 'S') fail("expected a statement name such as S_1 (or '*' for every statement)");
      advance();
      if (peek() == '_') advance();
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail(
            "expected the statement's number after 'S' (statements are named S_0, S_1, ... as "
            "'tessel compile --emit schedule' shows)");
      st.statement = "S" + std::to_string(number());
    }
    expect(':', "':' after the statement name");
    do {
      skipBlank(false);
      st.dims.push_back(dimension());
      skipBlank(false);
    } while (peek() == ',' && (advance(), true));
    return st;
  }

  DimTiling dimension() {
    DimTiling d;
    if (peek() == '*') {
      advance();
      return d;
    }
    while (true) {
      LevelTile t;
      t.loc = here();
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        fail("expected a tile size (a positive integer) or '*'");
      t.size = number();
      if (t.size <= 0) throw UserError(t.loc, "tile sizes must be positive");
      skipBlank(false);
      if (peek() != '@') fail("expected '@' and a buffer after the tile size (e.g. 32@L1)");
      advance();
      skipBlank(false);
      SourceLoc levelLoc = here();
      while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') {
        t.level += peek();
        advance();
      }
      if (t.level.empty()) throw UserError(levelLoc, "expected a buffer name after '@' (e.g. L1, L2)");
      d.levels.push_back(t);
      skipBlank(false);
      if (peek() != '/') break;
      advance();
      skipBlank(false);
    }
    return d;
  }

  int64_t number() {
    SourceLoc start = here();
    int64_t v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      int digit = peek() - '0';
      if (v > (std::numeric_limits<int32_t>::max() - digit) / 10) throw UserError(start, "number too large");
      v = v * 10 + digit;
      advance();
    }
    return v;
  }

  const std::string& text_;
  const std::string& origin_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
};

}  // namespace

const StatementTiling* TilePolicy::find(const std::string& statement) const {
  const StatementTiling* wildcard = nullptr;
  for (const auto& s : statements) {
    if (s.statement == statement) return &s;
    if (s.statement == "*") wildcard = &s;
  }
  return wildcard;
}

std::string TilePolicy::toString() const {
  std::string out;
  for (const auto& s : statements) {
    out += (s.statement == "*" ? "*" : "S_" + s.statement.substr(1)) + ":";
    for (size_t d = 0; d < s.dims.size(); ++d) {
      out += d ? ", " : " ";
      if (s.dims[d].levels.empty()) out += "*";
      for (size_t l = 0; l < s.dims[d].levels.size(); ++l)
        out += (l ? "/" : "") + std::to_string(s.dims[d].levels[l].size) + "@" + s.dims[d].levels[l].level;
    }
    out += "\n";
  }
  return out;
}

TilePolicy parseTilePolicy(const std::string& text, const std::string& origin) {
  return PolicyParser(text, origin).parse();
}

}  // namespace tessel::tile
