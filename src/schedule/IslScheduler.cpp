// isl's Pluto-style scheduler (with Feautrier fallback), fusion steered by
// isl's context options, which IslContext keeps per compilation.
#include <isl/options.h>
#include <isl/schedule.h>

#include <algorithm>
#include <optional>

#include "poly/IslWorkLimit.h"
#include "schedule/Scheduler.h"

namespace tessel::schedule {

const char* fusionStrategyName(FusionStrategy f) {
  switch (f) {
    case FusionStrategy::None:
      return "none";
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
  if (s == "none") return FusionStrategy::None;
  if (s == "min") return FusionStrategy::Min;
  if (s == "smart") return FusionStrategy::Smart;
  if (s == "max") return FusionStrategy::Max;
  userError("unknown fusion strategy '" + s + "' (expected none, min, smart or max)");
}

namespace {

const char* stopReason(poly::IslStop stop) {
  return stop == poly::IslStop::Quota ? "isl's operation quota" : "the scheduling time limit";
}

// min: one nest per SCC. smart: fuse, but never at the expense of outer
// parallelism. max: fuse whenever legal, even when it serializes loops.
void setFusionOptions(isl_ctx* c, FusionStrategy f) {
  isl_options_set_schedule_serialize_sccs(c, f == FusionStrategy::Min);
  isl_options_set_schedule_maximize_coincidence(c, f == FusionStrategy::Smart);
  isl_options_set_schedule_outer_coincidence(c, f == FusionStrategy::Smart);
}

class IslScheduler final : public Scheduler {
 public:
  const char* name() const override { return "isl"; }

  ScheduleResult run(const poly::Scop& scop, const SchedulerOptions& options) const override {
    isl::ctx ctx = scop.domain.ctx();
    isl_ctx* c = ctx.get();
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

    isl::union_set domain = options.instances ? scop.domain.intersect(*options.instances) : scop.domain;
    if (options.fusion != FusionStrategy::None) return schedule(scop, domain, options.fusion, options);
    return schedulePerStatement(scop, domain, [&](const isl::union_set& part) {
      return schedule(scop, part, FusionStrategy::Smart, options);
    });
  }

 private:
  // The schedule of `domain` under `fusion`, or under weaker fusion, or in
  // source order, when isl runs past the options' bounds.
  static ScheduleResult schedule(const poly::Scop& scop, const isl::union_set& domain, FusionStrategy fusion,
                                 const SchedulerOptions& options) {
    isl::ctx ctx = scop.domain.ctx();
    isl_ctx* c = ctx.get();
    isl::union_map validity = scop.deps.validity().intersect_domain(domain).intersect_range(domain);
    isl::schedule_constraints sc = isl::schedule_constraints::on_domain(domain)
                                       .set_validity(validity)
                                       .set_coincidence(validity)
                                       .set_proximity(validity);
    // isl's ILPs can explode on some multi-statement graphs (seen with max
    // fusion: minutes in one ILP of compute_wcc_band). Bound the work; past
    // the bound, try the weaker fusion strategies, and past those keep the
    // source order, which is always valid.
    poly::IslWorkLimit limit{options.operationLimit, options.timeLimit};
    std::string why;
    for (FusionStrategy f : {FusionStrategy::Max, FusionStrategy::Smart, FusionStrategy::Min}) {
      if (f > fusion) continue;
      setFusionOptions(c, f);
      auto attempt = poly::runBounded(ctx, limit, [&] { return sc.compute_schedule(); });
      if (attempt.value)
        return {*attempt.value, why.empty() ? "" : why + "; used " + fusionStrategyName(f) + " fusion", "",
                ""};
      why += std::string(why.empty() ? "" : ", ") + fusionStrategyName(f) + " fusion stopped at " +
             stopReason(attempt.stop);
    }
    isl::schedule sourceOrder =
        isl::manage(isl_schedule_intersect_domain(scop.initialSchedule.copy(), domain.copy()));
    return {sourceOrder, why + "; kept the source order (no fusion, no loop reordering)", "", ""};
  }
};

}  // namespace

std::unique_ptr<Scheduler> makeIslScheduler() { return std::make_unique<IslScheduler>(); }

std::unique_ptr<Scheduler> makeScheduler(const std::string& name) {
  if (name == "isl") return makeIslScheduler();
  if (name == "tessel") return makeTesselScheduler();
  userError("unknown scheduler '" + name + "' (expected isl or tessel)");
}

ScheduleResult schedulePerStatement(const poly::Scop& scop, const isl::union_set& domain,
                                    const std::function<ScheduleResult(const isl::union_set&)>& one) {
  isl::ctx ctx = domain.ctx();
  std::optional<isl::schedule> result;
  ScheduleResult out;
  std::vector<std::string> byOthers;  // stages another scheduler made (ScheduleResult::madeBy)
  std::string other;
  size_t scheduled = 0;
  for (size_t stage = 0; stage < scop.program->stages.size(); ++stage) {
    isl::union_set part = isl::union_set::empty(ctx);
    for (const auto& statement : scop.statements)
      if (statement.stage == static_cast<int>(stage)) part = part.unite(isl::union_set(statement.domain));
    part = part.intersect(domain);
    if (part.is_empty()) continue;
    ScheduleResult r = one(part);
    ++scheduled;
    if (!r.fallback.empty())
      out.fallback +=
          (out.fallback.empty() ? "" : "; ") + scop.program->stages[stage].output + ": " + r.fallback;
    out.explanation += r.explanation;
    if (!r.madeBy.empty()) {
      byOthers.push_back(scop.program->stages[stage].output);
      other = r.madeBy;
    }
    result = result ? isl::manage(isl_schedule_sequence(result->release(), r.tree.release())) : r.tree;
  }
  out.tree = result ? *result : isl::schedule::from_domain(domain);
  // Said once for the whole tree: the other scheduler, and for which stages
  // when it did not make them all.
  if (byOthers.size() == scheduled && scheduled > 0) {
    out.madeBy = other;
  } else if (!byOthers.empty()) {
    std::string stages;
    for (const auto& s : byOthers) stages += (stages.empty() ? "" : ", ") + s;
    out.madeBy = other + " for " + stages;
  }
  return out;
}

}  // namespace tessel::schedule
