// C identifiers for user names: tensors and kernels keep their TC names unless
// those would collide with C keywords, the C library or the emitter's own
// names, in which case they get a suffix.
#pragma once

#include <string>

#include "lir/Lir.h"

namespace tessel::backend {

// True for C keywords, names the C library headers declare and reserved prefixes.
bool clashesWithC(const std::string& name);
// The C name of a tensor: its name, or NAME_t on a clash.
std::string cName(const std::string& tensor);
// The C symbol of a kernel: its name, or NAME_kernel on a clash.
std::string kernelSymbol(const lir::Kernel& kernel);

}  // namespace tessel::backend
