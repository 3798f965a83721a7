// Influence constraint trees (paper 004 §III): ordered trees of affine
// constraints on schedule coefficients that Tessel's scheduler injects while
// it builds a schedule one row at a time. A node at depth d constrains row d
// (and may relate it to rows above); siblings are alternatives, the leftmost
// first; the search goes depth first and backtracks (TesselScheduler.cpp).
//
// The text form (`--schedule-constraints FILE`), one node per `row { }`:
//
//   # Fig. 3(b) (tests/schedule/programs/fig3b.constraints), here also
//   # requiring j's row to be parallel: fuse X and Y on rows 0 and 1 with
//   # j innermost, else only j innermost
//   row {                              # depth 0, first alternative
//     X.i = Y.i; X.k = Y.k; X.1 = Y.1; Y.j = 0
//     row {                            # depth 1
//       X.i = Y.i; X.k = Y.k; X.1 = Y.1; Y.j = 0
//       row { Y.j = 1; coincident }    # depth 2: j carries nothing
//     }
//   }
//   row { Y.j = 0  row { Y.j = 0  row { Y.j = 1 } } }   # depth 0, second alternative
//
// A coefficient is STATEMENT.ITERATOR (the coefficient of that iterator in
// the row of the node's depth), STATEMENT.1 (the row's constant), or either
// followed by @ROW for a row above (a constraint across rows). Statements are
// named by the tensor their TC statement writes (a reduction's update, also
// when a half-precision one accumulates in f32; its initialization is
// TENSOR.init) or by their isl name (S0, S1, ...), as --dump-after prints them. Constraints are linear
// (integer multiples, '+' and '-') compared with '=', '>=' or '<='; they end at ';' or a line's end.
// `coincident` requires the row to carry no dependence (a parallel loop);
// `permutable` requires it to extend the band of the row above.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "poly/Scop.h"
#include "tessel/error.h"

namespace tessel::schedule {

struct CoefficientRef {
  int statement = 0;  // index into Scop::statements
  int row = 0;        // schedule row (the depth of a node), outermost 0
  int dim = -1;       // iterator index in the statement's domain; -1: the constant
};

// sum(factor * coefficient) + constant >= 0, or = 0 when `equality`.
struct CoefficientConstraint {
  std::vector<std::pair<CoefficientRef, int64_t>> terms;
  int64_t constant = 0;
  bool equality = false;
  SourceLoc loc;
  std::string text;  // as written, for --explain
};

struct ConstraintNode {
  std::vector<CoefficientConstraint> constraints;
  bool requireCoincident = false;
  bool requirePermutable = false;
  std::vector<ConstraintNode> children;  // alternatives for the next row, by priority
  SourceLoc loc;
};

struct ConstraintTree {
  std::vector<ConstraintNode> roots;  // alternatives for row 0, by priority
  bool empty() const { return roots.empty(); }
  // The tree in the text form above (resolved names: isl statement names).
  std::string toString(const poly::Scop& scop) const;
};

// Parses the text form against the program's statements; errors name
// `origin`:line:col and what was expected.
ConstraintTree parseConstraintTree(const std::string& text, const std::string& origin,
                                   const poly::Scop& scop);

}  // namespace tessel::schedule
