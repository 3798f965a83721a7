// Storage contraction of temporaries (AKG's storage management, paper 000
// §4.4; basteln's per-tile scratch buffers): a temporary whose every value is
// produced and consumed within one iteration of some loop nest lives in a
// buffer of one iteration's footprint, allocated under those loops per
// thread, instead of a full-size array that the kernel allocates, clears and
// streams through memory. After fuse-outer, a row softmax's exponentials
// become one row in L1 instead of a second tensor in DRAM.
//
// A temporary qualifies below band B (its placement: the deepest such point)
// when all its accesses run under B, every value read was written by the
// kernel in the same iteration of the loops down to B (isl dataflow: a read
// without a source would see the zeros of a fresh array), its reads are
// affine and proven in range, and one iteration's accesses fit a fixed-size
// box within the stack budget. The site is a promotion mark whose tensors are
// flagged `contracted`: no copy in, and writes go to the buffer too.
#pragma once

#include <isl/cpp.h>

#include <string>

#include "poly/Scop.h"
#include "support/Remarks.h"
#include "target/Promotion.h"

namespace tessel::target::cpu {

isl::schedule contractTemporaries(const poly::Scop& scop, const isl::schedule& schedule, PromotionPlan& plan,
                                  Remarks& remarks);

}  // namespace tessel::target::cpu
