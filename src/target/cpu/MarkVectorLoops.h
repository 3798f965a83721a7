// Marks the loops the vectorizer may turn into SIMD code: the last member of
// every innermost band, when it carries no dependence (its iterations are
// independent: "vector") or when every dependence it carries chains the
// updates of one reduction on the same element ("vector_reduction": the
// partial results of the lanes are combined at the end, which reassociates
// the reduction as any parallel reduction does). The member is split into a
// band of its own under the mark. Code generation decides per loop whether
// its body can actually be emitted as vector code. When the member above a
// "vector" loop carries no dependence and a statement reads contiguously
// along it but strided along the vector loop, that member gets a band of its
// own under a "transpose_block" mark: the backend may run it in blocks of the
// vector width and transpose the read through registers (paper 004's
// vectorized dimensions, with the transposes it leaves to the backend).
#pragma once

#include <isl/cpp.h>

#include <map>
#include <set>
#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"

namespace tessel::target::cpu {

// `registerTransposes`: whether to mark transpose blocks at all.
isl::schedule markVectorLoops(const poly::Scop& scop, const isl::schedule& schedule, bool registerTransposes,
                              Remarks& remarks);

// For each statement below `node` (by name), the domain dimensions its vector
// loop (the band under a vector mark) moves with.
std::map<std::string, std::set<int>> vectorLoopDims(const isl::schedule_node& node);

}  // namespace tessel::target::cpu
