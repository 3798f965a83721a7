// Integer ranges of index and integer expressions over the ranges of the loop
// variables around them: what lets the vector code generator drop a padding
// condition that holds on every lane of a vector (a convolution's interior
// columns) instead of masking each load with it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "lir/Lir.h"

namespace tessel::lir {

struct IndexRange {
  int64_t lo = 0, hi = 0;  // inclusive
};
using IndexRanges = std::map<std::string, IndexRange>;  // loop or let variable -> its values

// Records `range` as `var`'s, or forgets what was known of `var` when there is none.
void bindRange(IndexRanges& ranges, const std::string& var, std::optional<IndexRange> range);

// The values `e` (an index or 32-bit integer expression) may take when each
// variable in `ranges` takes any value of its range; nullopt when some part
// is not affine-like (loads, divisions other than by a positive constant),
// names a variable without a range, or may leave the 32-bit range.
std::optional<IndexRange> rangeOf(const Expr& e, const IndexRanges& ranges);

// A range holding the values loop `loop`'s variable takes (from its init up
// to its bound, by a positive constant step), nullopt when unknown.
std::optional<IndexRange> loopRange(const StmtNode& loop, const IndexRanges& ranges);

// Whether integer comparison `c` (Lt..Ne on integer operands) holds for
// every value in `ranges` (true), for none (false), or depends (nullopt).
std::optional<bool> comparisonOutcome(const Expr& c, const IndexRanges& ranges);

}  // namespace tessel::lir
