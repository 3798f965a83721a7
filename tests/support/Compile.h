// driver::compile as the tessel command calls it: for a described machine,
// or for this one when none is given, with the machine's stored micro-kernel
// table; the scheme search the options may ask for runs first.
#pragma once

#include <optional>

#include "driver/Compile.h"
#include "target/DetectHost.h"
#include "tune/MicroKernelStore.h"
#include "tune/SchemeSearch.h"

namespace tessel::testing {

inline driver::CompiledProgram compileFor(const te::Program& program, const driver::CompileOptions& options,
                                          const std::optional<target::Hardware>& hardware = std::nullopt) {
  return tune::compileTuned(program, options, tune::machineFor(hardware ? *hardware : target::detectHost()));
}

}  // namespace tessel::testing
