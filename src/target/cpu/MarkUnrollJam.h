// Marks the loops the register tiler may unroll and jam (TTILE's register
// tiles, paper 002; AKG's register level): the last member of a band (split
// into a band of its own) when it is coincident and the band's subtree holds
// only the loops of innermost bands, at least one of them marked for vector
// code. Its iterations carry no dependence, so several of them can be
// interleaved over the loops below; the LIR register tiler decides whether
// the loops under it have the shape it keeps in registers.
#pragma once

#include <isl/cpp.h>

#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"

namespace tessel::target::cpu {

// A permutable band whose last member carries a dependence first gets the
// coincident member that shares the most reads between its iterations as its
// last member.
isl::schedule markUnrollJamLoops(const poly::Scop& scop, const isl::schedule& schedule, Remarks& remarks);
// The same on the subtree at `node` alone: a nest that post-tiling fusion
// moves whole under an extension node, where the pass could not query it
// (fuse/Basteln.h, Alg. 4's identical case), is marked before it moves.
isl::schedule_node markUnrollJamLoopsBelow(const poly::Scop& scop, const isl::schedule_node& node,
                                           Remarks& remarks);

}  // namespace tessel::target::cpu
