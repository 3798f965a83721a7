// isl's Pluto-style scheduler (with Feautrier fallback), fusion steered by
// isl's context options, which IslContext keeps per compilation.
#include <isl/options.h>
#include <isl/schedule.h>

#include "schedule/Scheduler.h"

namespace tessel::schedule {

const char* fusionStrategyName(FusionStrategy f) {
  switch (f) {
    case FusionStrategy::Min:
      return "min";
    case FusionStrategy::Smart:
      return "smart";
    case FusionStrategy::Max:
      return "max";
  }
  return "?";
}

FusionStrategy parseFusionStrategy(const std::string& s) {
  if (s == "min") return FusionStrategy::Min;
  if (s == "smart") return FusionStrategy::Smart;
  if (s == "max") return FusionStrategy::Max;
  userError("unknown fusion strategy '" + s + "' (expected min, smart or max)");
}

namespace {

class IslScheduler final : public Scheduler {
 public:
  const char* name() const override { return "isl"; }

  isl::schedule run(const poly::Scop& scop, const SchedulerOptions& options) const override {
    isl::ctx ctx = scop.domain.ctx();
    isl_ctx* c = ctx.get();
    // min: one nest per SCC. smart: fuse, but never at the expense of outer
    // parallelism. max: fuse whenever legal, even when it serializes loops.
    isl_options_set_schedule_serialize_sccs(c, options.fusion == FusionStrategy::Min);
    isl_options_set_schedule_maximize_coincidence(c, options.fusion == FusionStrategy::Smart);
    isl_options_set_schedule_outer_coincidence(c, options.fusion == FusionStrategy::Smart);
    isl_options_set_schedule_whole_component(c, 0);
    isl_options_set_schedule_maximize_band_depth(c, 1);

    isl::union_map validity = scop.deps.validity();
    isl::schedule_constraints sc = isl::schedule_constraints::on_domain(scop.domain)
                                       .set_validity(validity)
                                       .set_coincidence(validity)
                                       .set_proximity(validity);
    return sc.compute_schedule();
  }
};

}  // namespace

std::unique_ptr<Scheduler> makeIslScheduler() { return std::make_unique<IslScheduler>(); }

}  // namespace tessel::schedule
