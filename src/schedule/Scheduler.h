// Scheduling interface: Scop + options -> a new schedule tree. The isl
// scheduler is the first implementation; Tessel's own constraint-injection
// scheduler (paper 004) will be a second one behind the same interface.
#pragma once

#include <memory>
#include <string>

#include "poly/Scop.h"

namespace tessel::schedule {

// How eagerly statements are fused into common loop nests (PPCG's
// minfuse/smartfuse/maxfuse).
enum class FusionStrategy {
  Min,    // every strongly connected component gets its own loop nest
  Smart,  // fuse unless fusion costs outer parallelism (coincidence)
  Max,    // fuse as much as the dependences allow
};
const char* fusionStrategyName(FusionStrategy f);
// Parses "min", "smart" or "max"; throws UserError naming the accepted values.
FusionStrategy parseFusionStrategy(const std::string& s);

struct SchedulerOptions {
  FusionStrategy fusion = FusionStrategy::Smart;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual const char* name() const = 0;
  virtual isl::schedule run(const poly::Scop& scop, const SchedulerOptions& options) const = 0;
};

std::unique_ptr<Scheduler> makeIslScheduler();

}  // namespace tessel::schedule
