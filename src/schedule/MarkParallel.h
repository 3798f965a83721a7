// Marks the outermost coincident band member on every path of the tree as a
// parallel loop: the band is split after that member and a "parallel" mark is
// inserted above it. Code generation turns the marked loop into an OpenMP loop.
#pragma once

#include <isl/cpp.h>

namespace tessel::schedule {

inline constexpr const char* kParallelMark = "parallel";

isl::schedule markParallelLoops(const isl::schedule& schedule);

}  // namespace tessel::schedule
