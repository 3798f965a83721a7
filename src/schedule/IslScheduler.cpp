// isl's Pluto-style scheduler (with Feautrier fallback), fusion steered by
// isl's context options, which IslContext keeps per compilation.
#include <isl/options.h>
#include <isl/schedule.h>

#include <algorithm>
#include <optional>

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

// About a second of isl work on this machine; typical operators need far less.
constexpr unsigned long kOperationBudget = 20'000'000;

std::optional<isl::schedule> withinBudget(isl_ctx* c, const isl::schedule_constraints& sc) {
  isl_ctx_reset_operations(c);
  isl_ctx_set_max_operations(c, kOperationBudget);
  std::optional<isl::schedule> result;
  try {
    result = sc.compute_schedule();
  } catch (const isl::exception_quota&) {
    isl_ctx_reset_error(c);
  }
  isl_ctx_set_max_operations(c, 0);
  return result;
}

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
    // Deep-learning operators need schedule coefficients in {-2..2} (shifts
    // are constant terms, which stay unbounded). Larger coefficients let the
    // ILPs grow huge numbers: a fuzzed 8-statement program took minutes
    // under max fusion with the default bound, 0.3 s with this one.
    isl_options_set_schedule_max_coefficient(c, 2);
    // Shifts larger than the largest loop extent never help fusion; bounding
    // them keeps max fusion's ILPs small too (a fuzzed program ran for
    // minutes without this bound).
    int64_t extent = 1;
    for (const auto& stage : scop.program->stages)
      for (const auto& [v, r] : stage.ranges) extent = std::max(extent, r.extent());
    isl_options_set_schedule_max_constant_term(c, static_cast<int>(std::min<int64_t>(extent, 1 << 20)));

    isl::union_map validity = scop.deps.validity();
    isl::schedule_constraints sc = isl::schedule_constraints::on_domain(scop.domain)
                                       .set_validity(validity)
                                       .set_coincidence(validity)
                                       .set_proximity(validity);
    // isl's ILPs can explode on some multi-statement graphs (seen with max
    // fusion: minutes in compute_wcc_band). Bound the work; past the bound,
    // schedule each strongly connected component on its own (min fusion),
    // and past that, keep the source order, which is always valid.
    if (auto s = withinBudget(c, sc)) return *s;
    isl_options_set_schedule_serialize_sccs(c, 1);
    isl_options_set_schedule_maximize_coincidence(c, 0);
    if (auto s = withinBudget(c, sc)) return *s;
    return scop.initialSchedule;
  }
};

}  // namespace

std::unique_ptr<Scheduler> makeIslScheduler() { return std::make_unique<IslScheduler>(); }

}  // namespace tessel::schedule
