// A target's strategy: the pipeline it lowers a program with, from the
// program passes to emission (driver/Pipeline.h). A new target is a new
// strategy, not conditions spread through the driver.
#pragma once

#include <string>
#include <vector>

#include "driver/Options.h"
#include "driver/Pipeline.h"

namespace tessel::driver {

class TargetStrategy {
 public:
  virtual ~TargetStrategy() = default;
  virtual const char* name() const = 0;
  virtual Pipeline pipeline() const = 0;
};

// x86 CPUs: isl scheduling, tiling for the caches, packing, basteln fusion,
// micro-kernels, OpenMP parallel loops, AVX-512 / AVX2 vector code, C.
const TargetStrategy& cpuStrategy();
Pipeline cpuPipeline();

// Every target Tessel compiles for, and the one named `name` (UserError
// naming the targets when there is none).
std::vector<const TargetStrategy*> targetStrategies();
const TargetStrategy& targetStrategy(const std::string& name);

}  // namespace tessel::driver
