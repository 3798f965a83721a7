// Typed compilation options; they print themselves for --explain and logs.
#pragma once

#include <string>

#include "schedule/Scheduler.h"

namespace tessel::driver {

struct CompileOptions {
  schedule::FusionStrategy fusion = schedule::FusionStrategy::Smart;
  std::string dumpAfter;  // name of a pass whose result to keep as text ("" = none)
  // A schedule tree (isl YAML, as --dump-after prints it) used instead of the
  // scheduler's; checked against the dependences before use.
  std::string scheduleText;
  std::string scheduleOrigin;  // where scheduleText came from; non-empty = use scheduleText
  std::string toString() const;
};

}  // namespace tessel::driver
