#include <algorithm>

#include "driver/Strategy.h"
#include "fuse/Basteln.h"
#include "fuse/FuseOuterLoops.h"
#include "fuse/GroupQuasiIdentity.h"
#include "poly/Print.h"
#include "schedule/CheckSchedule.h"
#include "schedule/MarkParallel.h"
#include "schedule/TreeQueries.h"
#include "schedule/VectorScenarios.h"
#include "target/cpu/ContractTemporaries.h"
#include "target/cpu/ContractionTiles.h"
#include "target/cpu/DistributeInnerLoops.h"
#include "target/cpu/GraftMicroKernels.h"
#include "target/cpu/MarkUnrollJam.h"
#include "target/cpu/MarkVectorLoops.h"
#include "target/cpu/PromoteOperands.h"
#include "target/cpu/SerializeRacyTiles.h"
#include "target/cpu/SinkAcrossBands.h"
#include "target/cpu/SinkContiguousMember.h"
#include "tile/TileBands.h"

namespace tessel::driver {

namespace {

// One core's share of L2 (an L2 shared by cores holds their tiles at once);
// 0 without an L2 right after L1.
int64_t l2Share(const tile::TilingOptions& t) {
  return t.levels.size() > 1 && t.levels.front().name == "L1" && t.levels[1].name == "L2"
             ? t.levels[1].capacityBytes / std::max(1, std::min(t.levels[1].sharedBy, t.cores))
             : 0;
}

// The caches of the machine (fastest first) are the tiling levels.
tile::TilingOptions tilingOptions(const PassContext& c) {
  tile::TilingOptions t;
  t.autoTiling = c.options.autoTiling;
  t.policy = c.options.tiles;
  t.cores = c.hardware.cores;
  t.fusionTiles = c.options.fusion == Fusion::Basteln;
  t.fusionRedundancy = c.options.bastelnRedundancy;
  // The outputs code generation will stream (lir::markStreamingStores): f32,
  // large enough, never read back.
  if (std::optional<int64_t> threshold = streamingStoreThreshold(c.options, c.hardware)) {
    std::set<std::string> read;
    c.scop.reads.foreach_map([&](isl::map m) { read.insert(m.range_tuple_id().name()); });
    for (const auto* out : c.scop.program->outputs())
      if (out->dtype == te::DType::F32 && out->numElements() * te::dtypeBytes(out->dtype) >= *threshold &&
          !read.count(out->name))
        t.streamedOutputs.insert(out->name);
  }
  for (const auto& level : c.hardware.memory)
    if (!level.managed && level.capacityBytes > 0 && level.name != "DRAM")
      t.levels.push_back({level.name, level.capacityBytes, level.lineBytes, level.sharedBy});
  // Contractions the register tiler will keep in registers get the L1 tile
  // its tiles want.
  std::string isa = target::vectorIsa(c.hardware);
  if (c.options.vectorize && (isa == "avx2" || isa == "avx512") && !t.levels.empty() &&
      t.levels.front().name == "L1") {
    int lanes = isa == "avx512" ? 16 : 8;
    int64_t l1Bytes = t.levels.front().capacityBytes, l2Bytes = l2Share(t);
    int cores = c.hardware.cores;
    const poly::Scop& scop = c.scop;
    t.innermostTile = [&scop, lanes, l1Bytes, l2Bytes, cores](const tile::BandModel& band, std::string& why) {
      return target::cpu::contractionL1Tile(scop, band, lanes, l1Bytes, l2Bytes, cores, why);
    };
  }
  return t;
}

target::cpu::PromotionOptions promotionOptions(const PassContext& c) {
  tile::TilingOptions t = tilingOptions(c);
  target::cpu::PromotionOptions po;
  po.levels = t.levels;
  po.ignoreCost = c.options.promotion == CompileOptions::Promotion::All;
  if (!po.levels.empty() && po.levels.front().name == "L1")
    po.panelBytes = target::cpu::contractionPanelBytes(po.levels.front().capacityBytes, l2Share(t));
  return po;
}

// What promotion may copy under L1 tiles (0: promotion is off), which
// sink-contiguous counts on when it picks the vector loop.
int64_t packingBudget(const PassContext& c) {
  using Promotion = CompileOptions::Promotion;
  if (c.options.promotion == Promotion::Off) return 0;
  if (c.options.promotion == Promotion::All) return target::cpu::kMaxPromotionSiteBytes;
  return target::cpu::promotionBudget(promotionOptions(c), "L1");
}

// The chosen scheduler's tree, checked against every dependence by the
// independent checker: a scheduler's mistake stops here, named.
isl::schedule scheduleProgram(PassContext& c) {
  auto scheduler = schedule::makeScheduler(schedulerName(c.options.scheduler));
  schedule::SchedulerOptions so;
  so.fusion = schedulerFusion(c.options.fusion);
  so.timeLimit = c.options.scheduleTimeLimit;
  std::optional<schedule::ConstraintTree> constraints;
  if (c.options.scheduleConstraints && c.options.scheduleConstraints->automatic) {
    schedule::ScenarioTarget target;
    // f32 lanes of the SIMD unit; the scenario's loops should fill them.
    target.widthLimit = target::vectorIsa(c.hardware) == "avx512" ? 16 : 8;
    // A tensor within an eighth of L1 stays there beside the streams.
    for (const auto& level : c.hardware.memory)
      if (level.name == "L1" && level.capacityBytes > 0) target.residentBytes = level.capacityBytes / 8;
    schedule::VectorScenarios scenarios = schedule::buildVectorScenarios(c.scop, target);
    constraints = std::move(scenarios.tree);
    c.explain += "schedule: vectorization scenarios (paper 004 Alg. 2):\n" + scenarios.explanation;
  } else if (c.options.scheduleConstraints) {
    constraints = schedule::parseConstraintTree(c.options.scheduleConstraints->text,
                                                c.options.scheduleConstraints->origin, c.scop);
    c.explain += "schedule: constraint tree from " + c.options.scheduleConstraints->origin + ":\n" +
                 constraints->toString(c.scop);
  }
  if (constraints) so.constraints = &*constraints;
  schedule::ScheduleResult r = scheduler->run(c.scop, so);
  std::string madeBy = r.madeBy.empty() ? std::string(scheduler->name()) + "'s scheduler"
                       : r.madeBy.find(" for ") == std::string::npos
                           ? r.madeBy
                           : std::string(scheduler->name()) + "'s scheduler, " + r.madeBy;
  c.explain += "schedule: " + madeBy + "\n" + r.explanation;
  if (!r.fallback.empty()) {
    c.warnings.push_back("scheduling: " + r.fallback);
    c.explain += "schedule: " + r.fallback + "\n";
  }
  c.explain += "schedule: the scheduler's tree (--dump-after schedule prints it whole):\n" +
               schedule::scheduleOutline(r.tree);
  std::string violation = schedule::scheduleViolation(c.scop, r.tree);
  if (!violation.empty())
    throw InternalError("schedule", std::string("the schedule of ") + scheduler->name() + "'s scheduler " +
                                        violation + "; the schedule:\n" + poly::scheduleToYaml(r.tree));
  return r.tree;
}

class CpuStrategy final : public TargetStrategy {
 public:
  const char* name() const override { return "cpu"; }

  std::vector<SchedulePass> schedulePasses() const override {
    return {
        {"schedule", true, [](const isl::schedule&, PassContext& c) { return scheduleProgram(c); }},
        {"basteln-group", false,
         [](const isl::schedule& s, PassContext& c) {
           if (c.options.fusion != Fusion::Basteln) return s;
           schedule::SchedulerOptions so;
           so.timeLimit = c.options.scheduleTimeLimit;
           return fuse::groupQuasiIdentityNests(
               c.scop, s, *schedule::makeScheduler(schedulerName(c.options.scheduler)), so, c.explain);
         }},
        {"fuse-outer", false,
         [](const isl::schedule& s, PassContext& c) {
           if (c.options.fusion == Fusion::None || c.options.fusion == Fusion::Min) return s;
           return fuse::fuseOuterLoops(c.scop, s, c.explain);
         }},
        {"graft-microkernel", false,
         [](const isl::schedule& s, PassContext& c) {
           target::cpu::GraftOptions go;
           go.scheme = c.options.scheme.text;
           go.origin = c.options.scheme.origin;
           go.vectorIsa = target::vectorIsa(c.hardware);
           if (!c.options.constantInputs.empty())
             go.declaredConstant = [&c](const std::string& input) {
               return c.options.constantInputs.has(input);
             };
           return target::cpu::graftMicroKernels(c.scop, s, go, c.microKernels, c.explain);
         }},
        {"sink-across-bands", false,
         [](const isl::schedule& s, PassContext& c) {
           return target::cpu::sinkAcrossBands(c.scop, s, c.explain);
         }},
        {"tile", false,
         [](const isl::schedule& s, PassContext& c) {
           return tile::tileBands(c.scop, s, tilingOptions(c), c.explain);
         }},
        {"sink-contiguous", false,
         [](const isl::schedule& s, PassContext& c) {
           return target::cpu::sinkContiguousMember(c.scop, s, packingBudget(c), c.options.registerTransposes,
                                                    c.explain);
         }},
        {"distribute-inner", false,
         [](const isl::schedule& s, PassContext& c) {
           return target::cpu::distributeInnerLoops(c.scop, s, c.explain);
         }},
        {"mark-vector", false,
         [](const isl::schedule& s, PassContext& c) {
           return target::cpu::markVectorLoops(c.scop, s, c.options.registerTransposes, c.explain);
         }},
        {"promote", false,
         [](const isl::schedule& s, PassContext& c) {
           if (c.options.promotion == CompileOptions::Promotion::Off) return s;
           return target::cpu::promoteOperands(c.scop, s, promotionOptions(c), c.promotions, c.explain);
         }},
        {"basteln", false,
         [](const isl::schedule& s, PassContext& c) {
           if (c.options.fusion != Fusion::Basteln) return s;
           fuse::BastelnOptions bo;
           bo.redundancyLimit = c.options.bastelnRedundancy;
           bo.promotions = &c.promotions;
           bo.checkTimeLimit = c.options.fusionCheckTimeLimit;
           bo.cores = c.hardware.cores;
           // Half the largest private cache: the slices and the consumer's own tile share it.
           for (const auto& level : tilingOptions(c).levels)
             if (level.sharedBy <= 1)
               bo.sliceBytesLimit = std::max(bo.sliceBytesLimit, level.capacityBytes / 2);
           return fuse::fuseIntoTiles(c.scop, s, bo, c.explain);
         }},
        // Before contraction: a temporary's buffer stays out of the loops the
        // register tiler jams, whose iterations need their own values at once.
        {"mark-unroll-jam", false,
         [](const isl::schedule& s, PassContext& c) {
           return target::cpu::markUnrollJamLoops(c.scop, s, c.explain);
         }},
        {"contract", false,
         [](const isl::schedule& s, PassContext& c) {
           return target::cpu::contractTemporaries(c.scop, s, c.promotions, c.explain);
         }},
        {"serialize-racy-tiles", false,
         [](const isl::schedule& s, PassContext& c) {
           return target::cpu::serializeRacyTiles(c.scop, s, c.promotions, c.explain);
         }},
        {"mark-parallel", false,
         [](const isl::schedule& s, PassContext& c) {
           return schedule::markParallelLoops(s, c.hardware.cores);
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
