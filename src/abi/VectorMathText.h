// Text of src/abi/VectorMath.h (f32 exp/log/tanh/sigmoid/erf on AVX-512 and AVX2 vectors),
// embedded at build time like the kernel prelude.
#pragma once

namespace tessel::abi {
extern const char* const kVectorMath;

// C source defining tessel_{exp,log,tanh,sigmoid,erf}_v16 (when compiled with AVX-512F) and
// _v8 (AVX2 + FMA); self-contained, so it may follow the prelude in any kernel.
inline const char* vectorMathText() { return kVectorMath; }
}  // namespace tessel::abi
