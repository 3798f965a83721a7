// Vectorization-oriented intra-tile rescheduling (AKG §4.3): in every
// innermost permutable band (the point loops of a tile, or an untiled band),
// the member along which most accesses are contiguous (stride 1 in the
// array's last dimension, writes counting double) becomes the innermost loop,
// so the C compiler and Tessel's vectorizer find unit-stride vectors there.
// Permutability, which the scheduler proved, makes any member order valid.
#pragma once

#include <isl/cpp.h>

#include <string>

#include "poly/Scop.h"

namespace tessel::target::cpu {

// Appends one line per band it reorders to `explain`.
isl::schedule sinkContiguousMember(const poly::Scop& scop, const isl::schedule& schedule,
                                   std::string& explain);

}  // namespace tessel::target::cpu
