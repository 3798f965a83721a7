// isl text for a statement: its tuple ("S0[m, n]"), affine expressions over
// its dimensions, and names for extra dimensions that cannot capture a user's
// index variable. Extraction builds isl objects by parsing such text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessel/te.h"

namespace tessel::poly {

class StatementText {
 public:
  StatementText(const std::string& name, const std::vector<std::string>& dims);

  const std::string& tuple() const { return tuple_; }
  // The isl name of te index variable `v` (InternalError if not a dimension).
  const std::string& dim(const std::string& v) const;
  bool hasDim(const std::string& v) const { return dimName_.count(v) > 0; }
  // "2 + 1*h - 1*k": `a` over the statement's dimensions.
  std::string affine(const te::AffineExpr& a) const;
  // "element = index" as an isl constraint, for an index that is affine or
  // divides (/) or takes the remainder (%) of quasi-affine parts by positive
  // constants, truncating toward zero as kernels do (C); each quotient is an
  // existential variable (`ranges`, the index variables' ranges, tell the
  // numerators' signs). nullopt for anything else (a tensor read, a product
  // of variables, a divisor that is not a positive constant).
  std::optional<std::string> indexEquals(const std::string& element, const te::Expr& index,
                                         const std::map<std::string, te::Range>& ranges) const;
  // A name for an extra dimension ("a0_", "a0__", ...) used by no dimension here.
  std::string freshDim(const std::string& base) const;

 private:
  std::string tuple_;
  std::map<std::string, std::string> dimName_;  // te var -> isl dim name
};

// "lo <= dim < hi"
std::string boxConstraint(const std::string& dim, int64_t lo, int64_t hi);

}  // namespace tessel::poly
