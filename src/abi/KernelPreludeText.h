// Text of src/abi/KernelPrelude.h, embedded at build time.
#pragma once

namespace tessel::abi {
extern const char* const kKernelPrelude;
}
