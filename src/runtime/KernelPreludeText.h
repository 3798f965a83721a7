// Text of src/runtime/KernelPrelude.h, embedded at build time.
#pragma once

namespace tessel::runtime {
extern const char* const kKernelPrelude;
}
