// Scheduling interface: Scop + options -> a new schedule tree. The isl
// scheduler is the first implementation; Tessel's own constraint-injection
// scheduler (paper 004) will be a second one behind the same interface.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "poly/Scop.h"

namespace tessel::schedule {

// How eagerly statements are fused into common loop nests (PPCG's
// minfuse/smartfuse/maxfuse).
enum class FusionStrategy {
  None,   // no fusion: each TC statement its own loop nests, in source order
  Min,    // every strongly connected component gets its own loop nest
  Smart,  // fuse unless fusion costs outer parallelism (coincidence)
  Max,    // fuse as much as the dependences allow
};
const char* fusionStrategyName(FusionStrategy f);
// Parses "none", "min", "smart" or "max"; throws UserError naming the accepted values.
FusionStrategy parseFusionStrategy(const std::string& s);

struct SchedulerOptions {
  FusionStrategy fusion = FusionStrategy::Smart;
  // Wall-clock bound on each scheduling attempt (0 = none). Past it the
  // scheduler falls back to a cheaper schedule and says so.
  std::chrono::milliseconds timeLimit{10'000};
  // isl operations each attempt may take (0 = none): the deterministic part
  // of the bound, about a second of work for typical operators (which need
  // far less), but not a time bound (an operation's cost varies a lot).
  unsigned long operationLimit = 20'000'000;
  // When set, only these instances are scheduled, under the dependences among
  // them (basteln's grouping schedules one group of nests at a time).
  std::optional<isl::union_set> instances;
};

struct ScheduleResult {
  isl::schedule tree;
  // Empty when the requested schedule was computed; otherwise which cheaper
  // schedule was used and why (shown to the user as a warning).
  std::string fallback;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual const char* name() const = 0;
  virtual ScheduleResult run(const poly::Scop& scop, const SchedulerOptions& options) const = 0;
};

std::unique_ptr<Scheduler> makeIslScheduler();

}  // namespace tessel::schedule
