// Post-scheduling fusion of outer parallel loops (the grouping step of
// basteln's Alg. 1, with its parallelism rule d = 1 and the dependence test
// relaxed from quasi-identity to "same outer iteration").
//
// isl's scheduler fuses nests only when whole bands line up; a row softmax
// (row max, exponentials, row sum, divide) stays four nests over the rows,
// each streaming the whole tensor from memory. Here consecutive children of
// a sequence (or of a set: independent nests) are grouped greedily, inner
// sequences first, when every dependence between the group
// and the next child links instances of the same iteration of their outer
// parallel loops (some member of a permutable band may serve as the outer
// loop). A group then runs as one loop over that dimension with the
// children's remaining schedules in sequence inside it: each row is produced
// and consumed while it is in cache, and the loop stays parallel.
//
// A child with no dependence on the group joins it only when it reads some
// tensor element in the same outer iteration as the group does (fusing it
// brings reuse); otherwise it starts a new group. The result is checked
// against the dependences.
#pragma once

#include <isl/cpp.h>

#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"

namespace tessel::fuse {

// Adds one applied remark per fused group to `remarks`: its statements, its
// "nests" ("S0 S1 ; S2"), their count and the band member each contributes.
isl::schedule fuseOuterLoops(const poly::Scop& scop, const isl::schedule& schedule, Remarks& remarks);

}  // namespace tessel::fuse
