// Text of src/abi/VectorPrelude.h (the SIMD operations of vectorized loops),
// embedded at build time like the kernel prelude. Kernels with vector loops
// include it after the prelude and VectorMath.h.
#pragma once

namespace tessel::abi {
extern const char* const kVectorPrelude;
}  // namespace tessel::abi
