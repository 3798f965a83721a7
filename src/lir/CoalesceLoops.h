// Coalescing of short contiguous loop nests: a loop around a vectorizable
// loop, both of constant range, whose accesses all move along the outer loop
// by the inner loop's trip count times their step along the inner one (an
// NCHW tensor's h and w), becomes one vectorizable loop over both. A 7x7
// feature map is then 49 contiguous elements -- six whole vectors and one
// element -- instead of seven rows of one partial vector each.
#pragma once

#include <string>

#include "lir/Lir.h"
#include "support/Remarks.h"

namespace tessel::lir {

// `lanes`: the vector width the vectorizer will use (8 or 16; 0: no
// vectorization, nothing coalesced). Nests whose inner trip count is a
// multiple of `lanes` (whole vectors already) are left alone.
Kernel coalesceLoops(const Kernel& kernel, int lanes, Remarks& remarks);

}  // namespace tessel::lir
