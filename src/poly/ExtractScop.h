// te::Program -> Scop: iteration domains, read/write access relations and the
// initial (source-order) schedule tree. Dependences are filled by
// computeDependences (poly/Dependences.h).
#pragma once

#include "poly/Scop.h"

namespace tessel::poly {

Scop extractScop(isl::ctx ctx, const te::Program& program);

}  // namespace tessel::poly
