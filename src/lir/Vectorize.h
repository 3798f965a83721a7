// The vectorizer: every loop the schedule marked vectorizable whose body maps
// onto SIMD operations (VectorLoop.h) is given the target's lane count; the C
// backend then emits it with vector intrinsics and a masked tail. Loops whose
// body does not qualify stay scalar, and --explain says why.
#pragma once

#include <string>

#include "lir/Lir.h"
#include "support/Remarks.h"

namespace tessel::lir {

// `isa`: "avx512" (16 f32 lanes), "avx2" (8) or "" (no vectorization).
Kernel vectorizeLoops(const Kernel& kernel, const std::string& isa, Remarks& remarks);

// Lanes of f32 vectors for an ISA name (0 for none).
int f32Lanes(const std::string& isa);

}  // namespace tessel::lir
