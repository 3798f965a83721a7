// Scheduling interface: Scop + options -> a new schedule tree. Two
// implementations: isl's scheduler, and Tessel's own (paper 004), which
// accepts injected constraints (ConstraintTree.h).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "poly/Scop.h"
#include "schedule/ConstraintTree.h"

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
  // Constraints injected into the schedule rows (Tessel's scheduler only;
  // null or empty: none).
  const ConstraintTree* constraints = nullptr;
};

struct ScheduleResult {
  isl::schedule tree;
  // Empty when the requested schedule was computed; otherwise which cheaper
  // schedule was used and why (shown to the user as a warning).
  std::string fallback;
  // Where another scheduler than the one asked made `tree`, which (isl's,
  // when Tessel's falls back), e.g. "isl's scheduler", or "isl's scheduler
  // for T4, T6" when it made only those stages; empty otherwise.
  std::string madeBy;
  // What the scheduler decided, for --explain (which constraint branches held).
  std::string explanation;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual const char* name() const = 0;
  virtual ScheduleResult run(const poly::Scop& scop, const SchedulerOptions& options) const = 0;
};

std::unique_ptr<Scheduler> makeIslScheduler();
// Pluto-style, built on isl's sets and ILP (TesselScheduler.cpp); falls back
// to isl's scheduler where it cannot finish.
std::unique_ptr<Scheduler> makeTesselScheduler();

// "isl" or "tessel"; UserError naming the accepted values otherwise.
std::unique_ptr<Scheduler> makeScheduler(const std::string& name);

// Fusion None for any scheduler: each TC statement (a reduction's init and
// update together) scheduled alone by `one`, the nests in source order,
// which is always valid. Fallback messages name the statement's output.
ScheduleResult schedulePerStatement(const poly::Scop& scop, const isl::union_set& domain,
                                    const std::function<ScheduleResult(const isl::union_set&)>& one);

}  // namespace tessel::schedule
