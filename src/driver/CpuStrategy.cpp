#include "driver/Strategy.h"
#include "schedule/MarkParallel.h"

namespace tessel::driver {

namespace {

class CpuStrategy final : public TargetStrategy {
 public:
  const char* name() const override { return "cpu"; }

  std::vector<SchedulePass> schedulePasses() const override {
    return {
        {"schedule", true,
         [](const poly::Scop& scop, const isl::schedule&, const CompileOptions& o) {
           schedule::SchedulerOptions so;
           so.fusion = o.fusion;
           return schedule::makeIslScheduler()->run(scop, so);
         }},
        {"mark-parallel", false,
         [](const poly::Scop&, const isl::schedule& s, const CompileOptions&) {
           return schedule::markParallelLoops(s);
         }},
    };
  }
};

}  // namespace

const TargetStrategy& cpuStrategy() {
  static const CpuStrategy strategy;  // stateless
  return strategy;
}

}  // namespace tessel::driver
