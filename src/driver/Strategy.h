// A target's strategy: the ordered list of schedule-tree passes it runs after
// the initial schedule is extracted. A new target is a new strategy.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "driver/Options.h"
#include "poly/Scop.h"
#include "target/MicroKernelPlan.h"
#include "target/Promotion.h"

namespace tessel::driver {

// The smallest output (bytes) the kernel writes with non-temporal stores,
// none when it writes none (scalar code, --stream-stores off).
std::optional<int64_t> streamingStoreThreshold(const CompileOptions& options,
                                               const target::Hardware& hardware);

// What a schedule-tree pass may read, and where it explains its decisions
// (printed by --explain).
struct PassContext {
  const poly::Scop& scop;
  const CompileOptions& options;
  const target::Hardware& hardware;
  std::string& explain;
  std::vector<std::string>& warnings;     // shown to the user whatever the flags
  target::PromotionPlan& promotions;      // what the promotion pass marked, for code generation
  target::MicroKernelPlan& microKernels;  // the contractions grafted as micro-kernels
};

struct SchedulePass {
  std::string name;
  bool isScheduler = false;  // replaced by a tree given with --schedule
  std::function<isl::schedule(const isl::schedule&, PassContext&)> run;
};

class TargetStrategy {
 public:
  virtual ~TargetStrategy() = default;
  virtual const char* name() const = 0;
  virtual std::vector<SchedulePass> schedulePasses() const = 0;
};

// x86 CPU: isl scheduling, tiling for the caches, then OpenMP parallel marks.
const TargetStrategy& cpuStrategy();

}  // namespace tessel::driver
