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

}  // namespace

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
