// The integer linear programs of Tessel's own scheduler (paper 004 §II,
// Pluto-style): one schedule row for a group of statements is found at a
// time, as the lexicographic minimum of a program over the row's
// coefficients. This file holds the program's variables, its constraint rows
// and its solution; the scheduling algorithm is in TesselScheduler.cpp.
#pragma once

#include <isl/cpp.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace tessel::schedule {

// One statement's row of a schedule: phi(x) = coefficients . x + constant,
// coefficients in the order of the statement's domain dimensions.
struct AffineRow {
  std::vector<int64_t> coefficients;
  int64_t constant = 0;
  bool isConstant() const;
};

// sum(coefficients[i] * x[i]) + constant >= 0, or = 0 when `equality`.
struct LinearConstraint {
  std::vector<int64_t> coefficients;
  int64_t constant = 0;
  bool equality = false;
};

// The variables of one row's program, in the order of the lexicographic
// objective (isl's order): the proximity bound w first (short dependence
// distances: reuse), then the sum of all iterator coefficients (simple
// rows), then per statement its constant and its iterator coefficients from
// the last to the first, so that ties keep outer iterators outer (the
// source order).
class RowVariables {
 public:
  explicit RowVariables(const std::vector<int>& statementDims);
  int count() const { return count_; }
  int statements() const { return static_cast<int>(dims_.size()); }
  int dims(int statement) const { return dims_[statement]; }
  static constexpr int proximityBound() { return 0; }
  static constexpr int coefficientSum() { return 1; }
  int constant(int statement) const { return first_[statement]; }
  int iterator(int statement, int dim) const { return first_[statement] + dims_[statement] - dim; }
  // The rows of every statement in a solution.
  std::vector<AffineRow> rows(const std::vector<int64_t>& solution) const;
  LinearConstraint zero() const;  // 0 >= 0, to add terms to

 private:
  std::vector<int> dims_;
  std::vector<int> first_;
  int count_ = 2;
};

// The affine forms (in the row's variables) that Farkas' lemma is applied to,
// one per dimension of a coefficient space (isl_set_coefficients' flattened
// [c_cst, c_x...]).
struct AffineSubstitution {
  std::vector<LinearConstraint> components;  // component k = the k-th coefficient, as a form in the variables
};

// The constraints on (c_cst, c_1..c_n) that make c_cst + sum c_i x_i >= 0
// hold for every x in `points` (isl's affine Farkas lemma: the coefficients
// of `points`), each a LinearConstraint over those n + 1 values. `points` has
// no parameters.
std::vector<LinearConstraint> farkasConstraints(const isl::set& points);

// The constraints of `farkas` with every coefficient replaced by its form in
// the row's variables: a constraint on the row's variables.
std::vector<LinearConstraint> substitute(const std::vector<LinearConstraint>& farkas,
                                         const AffineSubstitution& forms, int variables);

struct IlpSolution {
  std::optional<std::vector<int64_t>> point;  // empty: infeasible, or too hard
  bool tooHard = false;                       // isl ran out of the operation budget
};

// The lexicographically smallest integer point satisfying every constraint.
// `operationBudget` (0: none) bounds isl's work on this program alone: past
// it the solution is empty and tooHard set (max fusion over a dozen
// statements gave isl a program it did not finish in minutes). Throws isl's
// exception when isl stops otherwise (the outer quota or the deadline,
// poly/IslWorkLimit.h).
IlpSolution lexicographicMinimum(isl::ctx ctx, int variables,
                                 const std::vector<LinearConstraint>& constraints,
                                 unsigned long operationBudget = 0);

// The directions in which `domain` does not extend: the iterator parts of
// the equalities of its affine hull (a dimension fixed to one value gives a
// unit vector). Rows along them order nothing, so they count as done.
std::vector<std::vector<int64_t>> flatDirections(const isl::set& domain);

std::vector<std::vector<int64_t>> orthogonalComplement(const std::vector<std::vector<int64_t>>& rows,
                                                       int columns);
int rank(const std::vector<std::vector<int64_t>>& rows, int columns);

}  // namespace tessel::schedule
