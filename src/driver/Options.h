// Typed compilation options; they print themselves for --explain and logs.
#pragma once

#include <string>

#include "schedule/Scheduler.h"

namespace tessel::driver {

struct CompileOptions {
  schedule::FusionStrategy fusion = schedule::FusionStrategy::Smart;
  std::string dumpAfter;  // name of a pass whose result to keep as text ("" = none)
  std::string toString() const;
};

}  // namespace tessel::driver
