#include "front/Lexer.h"

#include <cctype>
#include <cstdio>
#include <utility>

namespace tessel::front {

namespace {

struct Spelling {
  const char* text;
  Tok kind;
};

// Longest spellings first so that e.g. "+=!" wins over "+=" and "+".
constexpr Spelling kOperators[] = {
    {"<=>", Tok::Equivalent}, {"+=!", Tok::PlusEqB}, {"*=!", Tok::TimesEqB}, {"->", Tok::Arrow},
    {"+=", Tok::PlusEq},      {"*=", Tok::TimesEq},  {"<=", Tok::Le},        {">=", Tok::Ge},
    {"==", Tok::EqEq},        {"!=", Tok::Ne},       {"&&", Tok::AndAnd},    {"||", Tok::OrOr},
    {"=", Tok::Assign},       {"<", Tok::Lt},        {">", Tok::Gt},         {"!", Tok::Bang},
    {"+", Tok::Plus},         {"-", Tok::Minus},     {"*", Tok::Star},       {"/", Tok::Slash},
    {"%", Tok::Percent},      {"?", Tok::Question},  {":", Tok::Colon},      {",", Tok::Comma},
    {"(", Tok::LParen},       {")", Tok::RParen},    {"{", Tok::LBrace},     {"}", Tok::RBrace},
    {"[", Tok::LBracket},     {"]", Tok::RBracket},
};

constexpr Spelling kKeywords[] = {
    {"def", Tok::Def},       {"where", Tok::Where}, {"in", Tok::In},
    {"exists", Tok::Exists}, {"min", Tok::Min},     {"max", Tok::Max},
};

bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

class Lexer {
 public:
  Lexer(const std::string& file, const std::string& text) : file_(file), text_(text) {}

  std::vector<Token> run() {
    std::vector<Token> out;
    for (;;) {
      skipSpaceAndComments();
      Token t;
      t.loc = {file_, line_, col()};
      if (pos_ >= text_.size()) {
        out.push_back(t);
        return out;
      }
      char c = text_[pos_];
      bool afterIdent = !out.empty() && out.back().kind == Tok::Ident && lastEnd_ == pos_;
      if (c == '.' && afterIdent) {
        // `T.1`: a dimension specifier, not the number ".1".
        t.kind = Tok::Dot;
        t.text = ".";
        advance(1);
      } else if (digit(c) || (c == '.' && pos_ + 1 < text_.size() && digit(text_[pos_ + 1]))) {
        lexNumber(t);
      } else if (identStart(c)) {
        lexWord(t);
      } else if (!lexOperator(t)) {
        std::string shown(1, c);
        if (!std::isprint(static_cast<unsigned char>(c))) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned char>(c));
          shown = hex;
        }
        std::string msg = "unexpected character '" + shown + "'";
        if (c == '&' || c == '|') msg += std::string(" (did you mean '") + c + c + "'?)";
        fail(t.loc, msg);
      }
      lastEnd_ = pos_;
      out.push_back(std::move(t));
    }
  }

 private:
  int col() const { return static_cast<int>(pos_ - lineStart_) + 1; }

  void advance(size_t n) {
    for (size_t i = 0; i < n && pos_ < text_.size(); ++i, ++pos_) {
      if (text_[pos_] == '\n') {
        ++line_;
        lineStart_ = pos_ + 1;
      }
    }
  }

  void skipSpaceAndComments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isspace(static_cast<unsigned char>(c))) {
        advance(1);
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') advance(1);
      } else {
        return;
      }
    }
  }

  // C-style literal: digits [. digits] [e[+-]digits] [f], or .digits...
  void lexNumber(Token& t) {
    size_t start = pos_;
    while (pos_ < text_.size() && digit(text_[pos_])) advance(1);
    if (pos_ < text_.size() && text_[pos_] == '.') {
      t.isFloat = true;
      advance(1);
      while (pos_ < text_.size() && digit(text_[pos_])) advance(1);
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      size_t e = pos_ + 1;
      if (e < text_.size() && (text_[e] == '+' || text_[e] == '-')) ++e;
      if (e < text_.size() && digit(text_[e])) {
        t.isFloat = true;
        advance(e - pos_);
        while (pos_ < text_.size() && digit(text_[pos_])) advance(1);
      }
    }
    t.text = text_.substr(start, pos_ - start);
    if (t.isFloat && pos_ < text_.size() && (text_[pos_] == 'f' || text_[pos_] == 'F')) advance(1);
    if (pos_ < text_.size() && (identChar(text_[pos_]) || text_[pos_] == '.')) {
      size_t end = pos_;
      while (end < text_.size() && (identChar(text_[end]) || text_[end] == '.')) ++end;
      fail(t.loc, "malformed number '" + text_.substr(start, end - start) + "'");
    }
    t.kind = Tok::Number;
  }

  void lexWord(Token& t) {
    size_t start = pos_;
    while (pos_ < text_.size() && identChar(text_[pos_])) advance(1);
    t.text = text_.substr(start, pos_ - start);
    t.kind = Tok::Ident;
    for (const auto& k : kKeywords)
      if (t.text == k.text) t.kind = k.kind;
    // `min=` / `max=` (and `min=!`) are reduction operators, as in TC's lexer;
    // `min==` stays `min` followed by `==`.
    if ((t.kind == Tok::Min || t.kind == Tok::Max) && pos_ < text_.size() && text_[pos_] == '=' &&
        !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '=')) {
      advance(1);
      bool bang = pos_ < text_.size() && text_[pos_] == '!';
      if (bang) advance(1);
      if (t.kind == Tok::Min)
        t.kind = bang ? Tok::MinEqB : Tok::MinEq;
      else
        t.kind = bang ? Tok::MaxEqB : Tok::MaxEq;
      t.text = text_.substr(start, pos_ - start);
    }
  }

  bool lexOperator(Token& t) {
    for (const auto& op : kOperators) {
      std::string s = op.text;
      if (text_.compare(pos_, s.size(), s) == 0) {
        t.kind = op.kind;
        t.text = s;
        advance(s.size());
        return true;
      }
    }
    return false;
  }

  [[noreturn]] void fail(const SourceLoc& loc, const std::string& msg) {
    throw UserError(loc, msg, sourceLine(text_, loc.line));
  }

  const std::string& file_;
  const std::string& text_;
  size_t pos_ = 0;
  size_t lineStart_ = 0;
  size_t lastEnd_ = static_cast<size_t>(-1);
  int line_ = 1;
};

}  // namespace

std::string describe(Tok kind) {
  switch (kind) {
    case Tok::Eof:
      return "the end of the file";
    case Tok::Ident:
      return "an identifier";
    case Tok::Number:
      return "a number";
    default:
      break;
  }
  for (const auto& k : kKeywords)
    if (k.kind == kind) return std::string("'") + k.text + "'";
  for (const auto& op : kOperators)
    if (op.kind == kind) return std::string("'") + op.text + "'";
  switch (kind) {
    case Tok::MinEq:
      return "'min='";
    case Tok::MaxEq:
      return "'max='";
    case Tok::MinEqB:
      return "'min=!'";
    case Tok::MaxEqB:
      return "'max=!'";
    case Tok::Dot:
      return "'.'";
    default:
      return "?";
  }
}

std::string describe(const Token& t) {
  if (t.kind == Tok::Eof) return "the end of the file";
  return "'" + t.text + "'";
}

std::vector<Token> lex(const std::string& file, const std::string& text) { return Lexer(file, text).run(); }

std::string sourceLine(const std::string& text, int line) {
  if (line < 1) return "";
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    start = text.find('\n', start);
    if (start == std::string::npos) return "";
    ++start;
  }
  size_t end = text.find('\n', start);
  std::string s = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (!s.empty() && s.back() == '\r') s.pop_back();
  return s;
}

}  // namespace tessel::front
