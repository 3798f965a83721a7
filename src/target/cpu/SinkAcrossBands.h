// Vectorization-oriented rescheduling across bands (AKG §4.3 beyond one
// band): the scheduler may leave loops that cannot make good vectors
// innermost, in bands of their own under the band of the output dimensions
// (a convolution's channel reduction, strided in every array; a window of 2
// or 3 iterations). Then the member of the outer band that carries no
// dependence, runs at least a vector's worth of iterations and moves every
// access by one element or not at all (w of O(n, k, h, w)) is taken out of
// its band and scheduled innermost under every leaf below it, where the
// vectorizer finds unit-stride loads and stores. A coincident member carries
// no dependence, so moving it inward keeps every dependence in order; the new
// tree is still checked against the dependences and dropped if it fails.
#pragma once

#include <isl/cpp.h>

#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"

namespace tessel::target::cpu {

// Adds one remark (applied) per member it moves to `remarks`.
isl::schedule sinkAcrossBands(const poly::Scop& scop, const isl::schedule& schedule, Remarks& remarks);

}  // namespace tessel::target::cpu
