// Vectorization-oriented intra-tile rescheduling (AKG §4.3): in every
// innermost permutable band (the point loops of a tile, or an untiled band),
// the member along which most accesses are contiguous (stride 1 in the
// array's last dimension, writes counting double) becomes the innermost loop,
// so the C compiler and Tessel's vectorizer find unit-stride vectors there.
// A read strided along that member but contiguous along another parallel
// member counts as contiguous when the latter can run right above it (the
// backend transposes it through registers); the band is ordered so.
// Permutability, which the scheduler proved, makes any member order valid.
#pragma once

#include <isl/cpp.h>

#include <cstdint>
#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"

namespace tessel::target::cpu {

// `packingBudgetBytes`: what promotion may copy under L1 tiles (0 when it is
// off); a read it will copy, transposed if need be, counts as contiguous.
// Adds one remark (applied) per band it reorders to `remarks`.
// `registerTransposes`: whether the backend transposes through registers.
isl::schedule sinkContiguousMember(const poly::Scop& scop, const isl::schedule& schedule,
                                   int64_t packingBudgetBytes, bool registerTransposes, Remarks& remarks);

}  // namespace tessel::target::cpu
