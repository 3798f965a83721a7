// te::Program -> Scop: iteration domains, read/write access relations, the
// initial (source-order) schedule tree, read safety under guards
// (poly/GuardedReads.h) and the dependences (poly/Dependences.h).
#pragma once

#include "poly/Scop.h"

namespace tessel::poly {

// The Scop refers to `program` (statements, expressions): it must outlive it.
Scop extractScop(isl::ctx ctx, const te::Program& program);
Scop extractScop(isl::ctx ctx, te::Program&& program) = delete;

}  // namespace tessel::poly
