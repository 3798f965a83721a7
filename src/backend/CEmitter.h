// Loop IR -> C: one translation unit holding the kernel prelude, the kernel
// `int NAME(inputs..., outputs...)` (0 on success) and a packed-argument entry
// `int NAME__packed(void** args)` used by the runtime. Parallel loops become
// OpenMP loops.
#pragma once

#include <functional>
#include <string>

#include "backend/CNames.h"
#include "lir/Lir.h"
#include "runtime/KernelLibrary.h"

namespace tessel::backend {

std::string emitC(const lir::Kernel& kernel);
// The C header of an ahead-of-time library: the kernel's prototype and the
// layout of each tensor. `provenance` is a one-line comment (source, sizes).
std::string emitHeader(const lir::Kernel& kernel, const std::string& provenance);
// Name of the packed entry point of `kernel`.
std::string packedEntryName(const lir::Kernel& kernel);
// The packed entry points to call: the whole kernel's, and when it reads
// inputs in another layout (lir::PreparedInput) that are all constant
// (`isConstant`, driver::CompileOptions::constantInputs), also
// `NAME__prepare__packed(inputs..., laid-out...)` and
// `NAME__prepared__packed(inputs..., outputs..., laid-out...)`, which lay them
// out once and then compute from the copies.
runtime::KernelEntries kernelEntries(const lir::Kernel& kernel,
                                     const std::function<bool(const std::string&)>& isConstant = {});
// C parameter type of a tensor of dtype t ("float", "uint16_t", ...).
const char* storageCType(te::DType t);

}  // namespace tessel::backend
