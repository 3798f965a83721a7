#include "poly/IslText.h"

#include <cctype>
#include <set>
#include <sstream>

namespace tessel::poly {

namespace {

// Words isl's parser reserves: index variables with these names (or names
// that look like statement names) get positional names in isl text.
bool usableAsIslName(const std::string& v) {
  static const std::set<std::string> reserved = {
      "and",   "or",     "not",   "xor", "implies", "min",   "max", "mod",    "floor", "ceil",   "floord",
      "ceild", "exists", "infty", "NaN", "true",    "false", "rat", "domain", "range", "params", "any"};
  bool ok = !v.empty() && (std::isalpha(static_cast<unsigned char>(v[0])) || v[0] == '_');
  for (char c : v) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  bool looksLikeStatement = v.size() > 1 && v[0] == 'S' && std::isdigit(static_cast<unsigned char>(v[1]));
  return ok && !reserved.count(v) && !looksLikeStatement;
}

// Linear isl text of a quasi-affine index: quotients become the variables
// in `quotients`, each bound by a constraint in `constraints`.
class QuasiAffineText {
 public:
  QuasiAffineText(const StatementText& text, const std::map<std::string, te::Range>& ranges)
      : text_(text), ranges_(ranges) {}

  std::optional<std::string> linear(const te::Expr& e) {
    if (auto a = te::toAffine(e)) return "(" + text_.affine(*a) + ")";
    switch (e->kind) {
      case te::ExprKind::Unary:
        if (e->unaryOp != te::UnaryOp::Neg) return std::nullopt;
        if (auto x = linear(e->operands[0])) return "(-" + *x + ")";
        return std::nullopt;
      case te::ExprKind::Cast:
        if (e->type != te::DType::I32 || e->operands[0]->type != te::DType::I32) return std::nullopt;
        return linear(e->operands[0]);
      case te::ExprKind::Binary:
        return binary(e);
      default:
        return std::nullopt;
    }
  }

  std::vector<std::string> quotients, constraints;

 private:
  static std::optional<int64_t> constant(const te::Expr& e) {
    auto a = te::toAffine(e);
    if (!a || !a->coeffs.empty()) return std::nullopt;
    return a->constant;
  }

  std::optional<std::string> binary(const te::Expr& e) {
    using te::BinaryOp;
    if (e->type != te::DType::I32) return std::nullopt;
    BinaryOp op = e->binaryOp;
    if (op == BinaryOp::Mul) {
      for (int k = 0; k < 2; ++k)
        if (auto c = constant(e->operands[static_cast<size_t>(k)]))
          if (auto x = linear(e->operands[static_cast<size_t>(1 - k)]))
            return "(" + std::to_string(*c) + "*" + *x + ")";
      return std::nullopt;
    }
    auto a = linear(e->operands[0]);
    if (!a) return std::nullopt;
    if (op == BinaryOp::Add || op == BinaryOp::Sub) {
      auto b = linear(e->operands[1]);
      if (!b) return std::nullopt;
      return "(" + *a + (op == BinaryOp::Add ? " + " : " - ") + *b + ")";
    }
    if (op != BinaryOp::Div && op != BinaryOp::Mod) return std::nullopt;
    auto d = constant(e->operands[1]);
    if (!d || *d <= 0) return std::nullopt;
    if (*d == 1) return op == BinaryOp::Div ? *a : "(0)";
    // q = trunc(a / d): d*q <= a < d*q + d where a >= 0, d*q - d < a <= d*q
    // where a < 0. A numerator of known sign needs one of the two (each
    // disjunction would double the pieces of the relation).
    std::string q = text_.freshDim("q" + std::to_string(quotients.size()) + "_");
    std::string dq = std::to_string(*d) + "*" + q, slack = std::to_string(*d - 1);
    std::string floorPart = dq + " <= " + *a + " <= " + dq + " + " + slack;
    std::string ceilPart = dq + " - " + slack + " <= " + *a + " <= " + dq;
    auto sign = te::int32Range(e->operands[0], ranges_);
    quotients.push_back(q);
    if (sign && sign->first >= 0)
      constraints.push_back(floorPart);
    else if (sign && sign->second <= 0)
      constraints.push_back(ceilPart);
    else
      constraints.push_back("((" + *a + " >= 0 and " + floorPart + ") or (" + *a + " < 0 and " + ceilPart +
                            "))");
    if (op == BinaryOp::Div) return q;
    return "(" + *a + " - " + dq + ")";
  }

  const StatementText& text_;
  const std::map<std::string, te::Range>& ranges_;
};

}  // namespace

std::optional<std::string> StatementText::indexEquals(const std::string& element, const te::Expr& index,
                                                      const std::map<std::string, te::Range>& ranges) const {
  QuasiAffineText quasi(*this, ranges);
  auto value = quasi.linear(index);
  if (!value) return std::nullopt;
  std::string equals = element + " = " + *value;
  if (quasi.quotients.empty()) return equals;
  std::string text = "exists (";
  for (size_t i = 0; i < quasi.quotients.size(); ++i) text += (i ? ", " : "") + quasi.quotients[i];
  text += " : ";
  for (const auto& c : quasi.constraints) text += c + " and ";
  return text + equals + ")";
}

StatementText::StatementText(const std::string& name, const std::vector<std::string>& dims) {
  std::set<std::string> taken(dims.begin(), dims.end());
  tuple_ = name + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    std::string d = dims[i];
    if (!usableAsIslName(d)) {
      d = "i" + std::to_string(i) + "_";
      while (taken.count(d)) d += "_";
      taken.insert(d);
    }
    dimName_[dims[i]] = d;
    tuple_ += (i ? ", " : "") + d;
  }
  tuple_ += "]";
}

const std::string& StatementText::dim(const std::string& v) const {
  auto it = dimName_.find(v);
  TESSEL_CHECK(it != dimName_.end(), "extract", "index variable " + v + " not in the statement domain");
  return it->second;
}

std::string StatementText::affine(const te::AffineExpr& a) const {
  std::ostringstream os;
  os << a.constant;
  for (const auto& [v, c] : a.coeffs) os << (c < 0 ? " - " : " + ") << (c < 0 ? -c : c) << "*" << dim(v);
  return os.str();
}

std::string StatementText::freshDim(const std::string& base) const {
  std::string name = base;
  bool clash = true;
  while (clash) {
    clash = false;
    for (const auto& [v, d] : dimName_) clash = clash || d == name;
    if (clash) name += "_";
  }
  return name;
}

std::string boxConstraint(const std::string& dim, int64_t lo, int64_t hi) {
  return std::to_string(lo) + " <= " + dim + " < " + std::to_string(hi);
}

}  // namespace tessel::poly
