// f16 and bf16 reductions accumulate in an f32 scratch tensor and are rounded
// to the narrow type once, at the end, as production libraries do: summing
// thousands of terms directly in bf16 stalls (256 + 1 rounds back to 256).
// The original program stays the semantic reference (the interpreter
// accumulates it in double); this is the program the compiler lowers.
#pragma once

#include "tessel/te.h"

namespace tessel::te {

Program widenLowPrecisionAccumulators(const Program& program);

}  // namespace tessel::te
