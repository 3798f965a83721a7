#include "microkernel/Scheme.h"

#include <cctype>
#include <limits>

namespace tessel::microkernel {

namespace {

class SchemeParser {
 public:
  SchemeParser(const std::string& text, const std::string& origin, size_t start)
      : text_(text), origin_(origin), pos_(start) {}

  Scheme parse() {
    Scheme scheme{text_, origin_, {}};
    skipSpace();
    bool bracketed = accept("[");
    skipSpace();
    if (bracketed && accept("]")) fail("the scheme is empty");
    if (!bracketed && pos_ == text_.size()) fail("the scheme is empty");
    while (true) {
      scheme.specs.push_back(specifier());
      skipSpace();
      if (accept(",")) continue;
      if (bracketed) {
        if (!accept("]")) fail("expected ',' or ']' after a specifier");
        skipSpace();
      }
      if (pos_ != text_.size())
        fail(bracketed ? "unexpected text after ']'" : "expected ',' between specifiers");
      return scheme;
    }
  }

 private:
  [[noreturn]] void fail(const std::string& reason) const { fail(pos_, reason); }
  [[noreturn]] void fail(size_t at, const std::string& reason) const {
    throw UserError(locationInText(origin_, text_, at), "bad scheme: " + reason, text_);
  }

  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(const std::string& token) {
    if (text_.compare(pos_, token.size(), token) != 0) return false;
    pos_ += token.size();
    return true;
  }
  void expect(const std::string& token, const std::string& what) {
    skipSpace();
    if (!accept(token)) fail("expected '" + token + "' " + what);
  }

  std::string name(const std::string& what) {
    skipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
    if (pos_ == start) fail("expected " + what);
    return text_.substr(start, pos_ - start);
  }

  int64_t number(const std::string& what) {
    skipSpace();
    size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (value > (std::numeric_limits<int32_t>::max() - 9) / 10) fail(start, what + " is too large");
      value = value * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) fail("expected " + what);
    if (value < 1) fail(start, what + " must be at least 1");
    return value;
  }

  Factor factor() {
    skipSpace();
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))
      return {number("a loop factor"), ""};
    return {0, name("a loop factor (a number or a lambda parameter)")};
  }

  // The dimension after "_": "_k" or "_{k}".
  std::string subscriptDim() {
    if (!accept("_")) fail("expected '_' and a dimension");
    if (accept("{")) {
      std::string d = name("a dimension");
      expect("}", "after the dimension");
      return d;
    }
    return name("a dimension");
  }

  Specifier specifier() {
    skipSpace();
    Specifier s;
    s.offset = pos_;
    if (accept("λseq") || accept("lambda") || accept("seq")) {
      s.kind = SpecKind::Seq;
      s.dim = subscriptDim();
      s.param = name("the lambda's parameter name");
      expect(".", "after the lambda's parameter");
      expect("[", "to open the lambda's list");
      do {
        expect("(", "to open a (repetitions, value) pair");
        int64_t repetitions = number("a repetition count");
        expect(",", "between repetitions and value");
        int64_t value = number("a parameter value");
        expect(")", "to close the pair");
        s.branches.emplace_back(repetitions, value);
        skipSpace();
      } while (accept(","));
      expect("]", "to close the lambda's list");
      if (s.branches.size() < 2) fail(s.offset, "a lambda needs at least two (repetitions, value) pairs");
      return s;
    }
    if (pos_ >= text_.size()) fail(kExpected);
    char letter = text_[pos_];
    switch (letter) {
      case 'V':
        // V_d and V_{d}: a whole vector; V_{n,d}: n lanes of one (the rest masked off).
        if (text_.compare(pos_ + 1, 2, "_{") == 0 && text_.find(',', pos_) < text_.find('}', pos_)) {
          ++pos_;
          s.kind = SpecKind::V;
          expect("_", "after V");
          expect("{", "after V_");
          s.factor = factor();
          expect(",", "between the lane count and the dimension");
          s.dim = name("a dimension");
          expect("}", "after the dimension");
          return s;
        }
        [[fallthrough]];
      case 'R':
      case 'P':
        ++pos_;
        s.kind = letter == 'R' ? SpecKind::R : letter == 'V' ? SpecKind::V : SpecKind::P;
        s.dim = subscriptDim();
        return s;
      case 'T':
      case 'U':
        ++pos_;
        s.kind = letter == 'T' ? SpecKind::T : SpecKind::U;
        if (!accept("_")) fail("expected '_{n,d}' after " + std::string(1, letter));
        expect("{", "after " + std::string(1, letter) + "_");
        s.factor = factor();
        expect(",", "between the factor and the dimension");
        s.dim = name("a dimension");
        expect("}", "after the dimension");
        return s;
      case 'L':
        ++pos_;
        s.kind = SpecKind::L;
        s.dim = subscriptDim();
        s.layout = layoutItems();
        return s;
      default:
        fail(kExpected);
    }
  }

  // "(k/64, r, #2, k%64)"
  std::vector<LayoutItem> layoutItems() {
    expect("(", "to open the layout's list of dimensions");
    std::vector<LayoutItem> items;
    do {
      skipSpace();
      LayoutItem item;
      item.offset = pos_;
      if (accept("#")) {
        size_t at = pos_;
        item.position = 0;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])) &&
               item.position < 1000)
          item.position = item.position * 10 + (text_[pos_++] - '0');
        if (pos_ == at) fail("expected a subscript position after '#'");
      } else {
        item.dim = name("a subscript (a loop variable or #position)");
      }
      skipSpace();
      if (accept("/") || accept("%")) {
        item.split = text_[pos_ - 1];
        item.block = number("a block size");
      }
      items.push_back(item);
      skipSpace();
    } while (accept(","));
    expect(")", "to close the layout's list");
    return items;
  }

  static constexpr const char* kExpected =
      "expected a specifier (R_d, T_{n,d}, U_{n,d}, V_d, P_X, L_X(...) or lambda_d)";

  const std::string& text_;
  const std::string& origin_;
  size_t pos_;
};

std::string factorText(const Factor& f) { return f.param.empty() ? std::to_string(f.value) : f.param; }

}  // namespace

Scheme parseScheme(const std::string& text, const std::string& origin, size_t start) {
  return SchemeParser(text, origin, start).parse();
}

std::string toString(const Specifier& s) {
  switch (s.kind) {
    case SpecKind::R:
      return "R_" + s.dim;
    case SpecKind::V:
      if (s.factor.value == 0 && s.factor.param.empty()) return "V_" + s.dim;
      return "V_{" + factorText(s.factor) + "," + s.dim + "}";
    case SpecKind::P:
      return "P_" + s.dim;
    case SpecKind::L: {
      std::string text = "L_" + s.dim + "(";
      for (size_t i = 0; i < s.layout.size(); ++i) {
        const LayoutItem& item = s.layout[i];
        text += (i ? ", " : "") + (item.dim.empty() ? "#" + std::to_string(item.position) : item.dim);
        if (item.split) text += std::string(1, item.split) + std::to_string(item.block);
      }
      return text + ")";
    }
    case SpecKind::T:
    case SpecKind::U:
      return std::string(s.kind == SpecKind::T ? "T" : "U") + "_{" + factorText(s.factor) + "," + s.dim + "}";
    case SpecKind::Seq: {
      std::string text = "lambda_" + s.dim + " " + s.param + ".[";
      for (size_t i = 0; i < s.branches.size(); ++i)
        text += (i ? "," : "") + std::string("(") + std::to_string(s.branches[i].first) + "," +
                std::to_string(s.branches[i].second) + ")";
      return text + "]";
    }
  }
  return "";
}

std::string toString(const Scheme& scheme) {
  std::string text;
  for (const auto& s : scheme.specs) text += (text.empty() ? "" : ", ") + toString(s);
  return text;
}

UserError schemeErrorAt(const Scheme& scheme, const Specifier& spec, const std::string& reason) {
  return UserError(locationInText(scheme.origin, scheme.text, spec.offset), "bad scheme: " + reason,
                   scheme.text);
}

void schemeError(const Scheme& scheme, const Specifier& spec, const std::string& reason) {
  throw schemeErrorAt(scheme, spec, reason);
}

}  // namespace tessel::microkernel
