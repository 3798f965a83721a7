// Recomputed producers (basteln's extension nodes) run in every tile that
// needs them, so neighbouring tiles store into the same elements of the
// producer's tensors. When tiles run on several threads at once that is
// harmless only while they store the same value into a shared element, or
// store into a per-thread buffer (a contracted temporary). A tensor that a
// recomputed producer writes several times per element (a reduction's init
// and updates) from several iterations of the loops around the extension
// node, or that the consumer writes too, and that stays a shared array,
// makes every loop around the extension node sequential. (Elements written
// from one iteration alone, as a nest moved whole into the tiles writes
// them, race with no other: a tile that reads an element runs its writers.)
#pragma once

#include <isl/cpp.h>

#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"
#include "target/Promotion.h"

namespace tessel::target::cpu {

// Adds one remark (applied) per serialized nest to `remarks`.
isl::schedule serializeRacyTiles(const poly::Scop& scop, const isl::schedule& schedule,
                                 const PromotionPlan& plan, Remarks& remarks);

}  // namespace tessel::target::cpu
