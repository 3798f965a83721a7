// The contract between generated kernels and their callers (the runtime, AOT
// users): `int NAME(const T* inputs..., T* outputs...)`, dense row-major
// tensors, f16/bf16 as 16-bit patterns, and these return codes, which the
// kernel prelude defines for the C side.
#pragma once

#include "abi/KernelPrelude.h"

namespace tessel::abi {

inline constexpr int kKernelOk = TESSEL_STATUS_OK;
inline constexpr int kKernelBadIndex = TESSEL_STATUS_BAD_INDEX;
inline constexpr int kKernelOutOfMemory = TESSEL_STATUS_OUT_OF_MEMORY;

}  // namespace tessel::abi
