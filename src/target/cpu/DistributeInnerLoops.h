// Intra-tile loop distribution (AKG §4.3, "local_UB" rescheduling): in an
// innermost band over a sequence of statements, the inner members along which
// the statements do not all iterate (a reduction's initialization sits at one
// point of the reduction loop) are distributed over the sequence, so each
// statement gets loops of its own:
//   for m, k, n { if (k == 0) C = 0; C += A*B }  ->  for m { for n C = 0; for k, n C += A*B }
// The vectorizer then sees clean inner loops. Distribution is applied only
// when no dependence runs from a later statement of the sequence back to an
// earlier one inside one iteration of the loops kept outside.
#pragma once

#include <isl/cpp.h>

#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"

namespace tessel::target::cpu {

isl::schedule distributeInnerLoops(const poly::Scop& scop, const isl::schedule& schedule, Remarks& remarks);

}  // namespace tessel::target::cpu
