// Marks, on every path of the tree, the outermost band whose first member
// with a loop (members of a single value get none) is coincident as a
// parallel loop: the band is split around that member and a "parallel" mark
// is inserted above it. Code generation turns the marked loop into an OpenMP
// loop. (A band whose first such member carries a dependence is not split to
// reach a later coincident member.) The first loop of the first band on each
// path below a parallel loop gets a "collapsible" mark when it is coincident
// too: code generation runs the two as one OpenMP loop (collapse(2)) where
// they are perfectly nested and rectangular, so that an outer loop of few
// iterations (unsharp's 3 channels on 2 threads) does not leave threads idle.
#pragma once

#include <isl/cpp.h>

namespace tessel::schedule {

inline constexpr const char* kParallelMark = "parallel";
inline constexpr const char* kCollapsibleMark = "collapsible";

isl::schedule markParallelLoops(const isl::schedule& schedule);

}  // namespace tessel::schedule
