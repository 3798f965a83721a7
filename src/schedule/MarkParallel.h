// Marks, on every path of the tree, the outermost band whose first member
// with a loop (members of a single value get none) is coincident as a
// parallel loop: the band is split around that member and a "parallel" mark
// is inserted above it. Code generation turns the marked loop into an OpenMP
// loop. (A band whose first such member carries a dependence is not split to
// reach a later coincident member.)
#pragma once

#include <isl/cpp.h>

namespace tessel::schedule {

inline constexpr const char* kParallelMark = "parallel";

isl::schedule markParallelLoops(const isl::schedule& schedule);

}  // namespace tessel::schedule
