// Exact flow dependences and the false (anti/output) dependences of a Scop,
// computed by isl's dataflow analysis against the initial schedule.
#pragma once

#include "poly/Scop.h"

namespace tessel::poly {

Dependences computeDependences(const Scop& scop);

}  // namespace tessel::poly
