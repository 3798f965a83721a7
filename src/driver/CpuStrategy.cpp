#include <algorithm>

#include "backend/CEmitter.h"
#include "driver/Strategy.h"
#include "fuse/Basteln.h"
#include "fuse/FuseOuterLoops.h"
#include "fuse/GroupQuasiIdentity.h"
#include "fuse/InlineElementwise.h"
#include "lir/CoalesceLoops.h"
#include "lir/RegisterTile.h"
#include "lir/StreamStores.h"
#include "lir/ThreadVersions.h"
#include "lir/Vectorize.h"
#include "poly/ExtractScop.h"
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
#include "te/WidenAccumulators.h"
#include "tile/TileBands.h"

namespace tessel::driver {

namespace {

// The smallest output (bytes) the kernel writes with non-temporal stores,
// none when it writes none (scalar code, --stream-stores off).
std::optional<int64_t> streamingStoreThreshold(const CompileOptions& options,
                                               const target::Hardware& hardware) {
  if (!options.vectorize || options.streamingStores == CompileOptions::StreamingStores::Off ||
      target::vectorIsa(hardware).empty())
    return std::nullopt;
  return options.streamingStores == CompileOptions::StreamingStores::Always
             ? 0
             : target::totalCacheBytes(hardware);
}

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
    c.remarks.analysis("", "schedule: vectorization scenarios (paper 004 Alg. 2):\n" + scenarios.explanation,
                       {{"constraints", "scenarios"}});
  } else if (c.options.scheduleConstraints) {
    constraints = schedule::parseConstraintTree(c.options.scheduleConstraints->text,
                                                c.options.scheduleConstraints->origin, c.scop);
    c.remarks.analysis("",
                       "schedule: constraint tree from " + c.options.scheduleConstraints->origin + ":\n" +
                           constraints->toString(c.scop),
                       {{"constraints", c.options.scheduleConstraints->origin}});
  }
  if (constraints) so.constraints = &*constraints;
  schedule::ScheduleResult r = scheduler->run(c.scop, so);
  std::string madeBy = r.madeBy.empty() ? std::string(scheduler->name()) + "'s scheduler"
                       : r.madeBy.find(" for ") == std::string::npos
                           ? r.madeBy
                           : std::string(scheduler->name()) + "'s scheduler, " + r.madeBy;
  c.remarks.applied("", "schedule: " + madeBy + "\n" + r.explanation, {{"scheduler", madeBy}});
  if (!r.fallback.empty()) {
    c.warnings.push_back("scheduling: " + r.fallback);
    c.remarks.missed("", "schedule: " + r.fallback, {{"reason", r.fallback}});
  }
  c.remarks.analysis("", "schedule: the scheduler's tree (--dump-after schedule prints it whole):\n" +
                             schedule::scheduleOutline(r.tree));
  std::string violation = schedule::scheduleViolation(c.scop, r.tree);
  if (!violation.empty())
    throw InternalError("schedule", std::string("the schedule of ") + scheduler->name() + "'s scheduler " +
                                        violation + "; the schedule:\n" + poly::scheduleToYaml(r.tree));
  return r.tree;
}

// The largest cache one core has to itself (0 when none is known): a
// temporary beyond it goes through shared caches or memory.
int64_t largestPrivateCacheBytes(const target::Hardware& hardware) {
  int64_t bytes = 0;
  for (const auto& level : hardware.memory)
    if (!level.managed && level.capacityBytes > 0 && level.name != "DRAM" && level.sharedBy <= 1)
      bytes = std::max(bytes, level.capacityBytes);
  return bytes;
}

// What inline-elementwise inlines for these options (nothing: it does not run).
fuse::InlineOptions inlineOptions(const CompileOptions& o, const target::Hardware& hardware) {
  fuse::InlineOptions inlining;
  inlining.readOnce = o.inlineElementwise;
  // Never with --schedule, whose tree names the program's statements.
  if (o.recomputeCheap && !o.schedule) inlining.recomputeAboveBytes = largestPrivateCacheBytes(hardware);
  return inlining;
}

bool vectorizing(const CompileOptions& o, const target::Hardware&) { return o.vectorize; }

}  // namespace

// Halide's lower_impl for x86 CPUs: the whole lowering, stage after stage.
// docs/passes.md describes each stage under its name.
Pipeline cpuPipeline() {
  Pipeline p("cpu");
  p.programPass({"widen-accumulators", "16-bit accumulations widened to f32"},
                [](const te::Program& program, ProgramPassContext&) {
                  return te::widenLowPrecisionAccumulators(program);
                });
  p.programPass({"inline",
                 "elementwise temporaries inlined into their readers (paper 001 Alg. 5)",
                 {"widen-accumulators"},
                 "with --inline on, or cheap temporaries beyond the private caches",
                 [](const CompileOptions& o, const target::Hardware& h) {
                   fuse::InlineOptions inlining = inlineOptions(o, h);
                   return inlining.readOnce || inlining.recomputeAboveBytes > 0;
                 }},
                [](const te::Program& program, ProgramPassContext& c) {
                  return fuse::inlineElementwise(c.ctx, program, inlineOptions(c.options, c.hardware),
                                                 c.remarks);
                });
  p.extract({"extract", "the polyhedral model: domains, accesses, dependences, the initial tree"},
            [](isl::ctx ctx, const te::Program& program) { return poly::extractScop(ctx, program); });
  p.scheduler({"schedule", "isl's or Tessel's scheduler, checked against every dependence"},
              [](const isl::schedule&, PassContext& c) { return scheduleProgram(c); });
  p.schedulePass(
      {"basteln-group",
       "nests grouped along quasi-identity dependences (paper 001 Alg. 1)",
       {"schedule"},
       "under --fusion basteln",
       [](const CompileOptions& o, const target::Hardware&) { return o.fusion == Fusion::Basteln; }},
      [](const isl::schedule& s, PassContext& c) {
        schedule::SchedulerOptions so;
        so.timeLimit = c.options.scheduleTimeLimit;
        return fuse::groupQuasiIdentityNests(
            c.scop, s, *schedule::makeScheduler(schedulerName(c.options.scheduler)), so, c.remarks);
      });
  p.schedulePass(
      {"fuse-outer",
       "outer loops of consecutive nests fused where the dependences allow",
       {"schedule"},
       "under --fusion smart, max or basteln",
       [](const CompileOptions& o, const target::Hardware&) {
         return o.fusion != Fusion::None && o.fusion != Fusion::Min;
       }},
      [](const isl::schedule& s, PassContext& c) { return fuse::fuseOuterLoops(c.scop, s, c.remarks); });
  p.schedulePass({"graft-microkernel",
                  "a contraction replaced by a TTILE scheme's micro-kernels (paper 002)",
                  {"schedule"}},
                 [](const isl::schedule& s, PassContext& c) {
                   target::cpu::GraftOptions go;
                   go.scheme = c.options.scheme.text;
                   go.origin = c.options.scheme.origin;
                   go.optional = c.options.scheme.chosenByModel;
                   go.vectorIsa = target::vectorIsa(c.hardware);
                   if (!c.options.constantInputs.empty())
                     go.declaredConstant = [&c](const std::string& input) {
                       return c.options.constantInputs.has(input);
                     };
                   return target::cpu::graftMicroKernels(c.scop, s, go, c.microKernels, c.remarks);
                 });
  p.schedulePass(
      {"sink-across-bands", "a contiguous loop moved below the bands it would leave scalar", {"schedule"}},
      [](const isl::schedule& s, PassContext& c) {
        return target::cpu::sinkAcrossBands(c.scop, s, c.remarks);
      });
  p.schedulePass({"tile", "bands tiled for the caches (paper 000 Auto Tiling, --tiles)", {"schedule"}},
                 [](const isl::schedule& s, PassContext& c) {
                   return tile::tileBands(c.scop, s, tilingOptions(c), c.remarks);
                 });
  p.schedulePass({"sink-contiguous", "the contiguous member of a point band made innermost", {"tile"}},
                 [](const isl::schedule& s, PassContext& c) {
                   return target::cpu::sinkContiguousMember(c.scop, s, packingBudget(c),
                                                            c.options.registerTransposes, c.remarks);
                 });
  p.schedulePass({"distribute-inner", "inner loops of a fused tile split per statement", {"tile"}},
                 [](const isl::schedule& s, PassContext& c) {
                   return target::cpu::distributeInnerLoops(c.scop, s, c.remarks);
                 });
  p.schedulePass({"mark-vector", "the loops to vectorize marked", {"sink-contiguous"}},
                 [](const isl::schedule& s, PassContext& c) {
                   return target::cpu::markVectorLoops(c.scop, s, c.options.registerTransposes, c.remarks);
                 });
  p.schedulePass({"promote",
                  "reused operand tiles copied into contiguous buffers (packing)",
                  {"tile"},
                  "unless --promote off",
                  [](const CompileOptions& o, const target::Hardware&) {
                    return o.promotion != CompileOptions::Promotion::Off;
                  }},
                 [](const isl::schedule& s, PassContext& c) {
                   return target::cpu::promoteOperands(c.scop, s, promotionOptions(c), c.promotions,
                                                       c.remarks);
                 });
  p.schedulePass(
      {"basteln",
       "producers recomputed in the tiles of their consumers (paper 001 Algs. 2-4)",
       {"tile", "promote"},
       "under --fusion basteln",
       [](const CompileOptions& o, const target::Hardware&) { return o.fusion == Fusion::Basteln; }},
      [](const isl::schedule& s, PassContext& c) {
        fuse::BastelnOptions bo;
        bo.redundancyLimit = c.options.bastelnRedundancy;
        bo.promotions = &c.promotions;
        bo.checkTimeLimit = c.options.fusionCheckTimeLimit;
        bo.cores = c.hardware.cores;
        // Half the largest private cache: the slices and the consumer's own tile share it.
        for (const auto& level : tilingOptions(c).levels)
          if (level.sharedBy <= 1) bo.sliceBytesLimit = std::max(bo.sliceBytesLimit, level.capacityBytes / 2);
        return fuse::fuseIntoTiles(c.scop, s, bo, c.remarks);
      });
  // Before contraction: a temporary's buffer stays out of the loops the
  // register tiler jams, whose iterations need their own values at once.
  p.schedulePass({"mark-unroll-jam", "the loops the register tiler unrolls and jams marked", {"mark-vector"}},
                 [](const isl::schedule& s, PassContext& c) {
                   return target::cpu::markUnrollJamLoops(c.scop, s, c.remarks);
                 });
  p.schedulePass({"contract", "temporaries contracted to per-tile buffers", {"mark-unroll-jam"}},
                 [](const isl::schedule& s, PassContext& c) {
                   return target::cpu::contractTemporaries(c.scop, s, c.promotions, c.remarks);
                 });
  p.schedulePass({"serialize-racy-tiles", "tiles that would race run on one thread", {"contract"}},
                 [](const isl::schedule& s, PassContext& c) {
                   return target::cpu::serializeRacyTiles(c.scop, s, c.promotions, c.remarks);
                 });
  p.schedulePass(
      {"mark-parallel", "the outermost parallel loops marked for OpenMP", {"serialize-racy-tiles"}},
      [](const isl::schedule& s, PassContext& c) {
        return schedule::markParallelLoops(s, c.scop, c.hardware.cores, c.remarks);
      });
  p.generateAst({"ast", "isl's AST of the final tree"}, [](const isl::schedule& s, PassContext& c) {
    return lir::buildAst(s, c.scop, c.promotions);
  });
  p.lowerToLoops({"lir", "the AST as loop IR: promotion copies, micro-kernel calls, statements"},
                 [](const te::Program& program, const lir::GeneratedAst& ast, PassContext& c) {
                   return lir::astToLir(program, c.scop, ast, c.promotions, c.microKernels);
                 });
  p.loopPass({"coalesce",
              "short nested loops over contiguous data merged into one",
              {},
              "unless --vectorize off",
              vectorizing},
             [](const lir::Kernel& k, LoopPassContext& c) {
               return lir::coalesceLoops(k, lir::f32Lanes(target::vectorIsa(c.hardware)), c.remarks);
             });
  p.loopPass(
      {"vectorize", "marked loops as SIMD code (AVX-512, AVX2)", {}, "unless --vectorize off", vectorizing},
      [](const lir::Kernel& k, LoopPassContext& c) {
        return lir::vectorizeLoops(k, target::vectorIsa(c.hardware), c.remarks);
      });
  p.loopPass(
      {"register-tile",
       "unroll-and-jam marked loops into register tiles",
       {"vectorize"},
       "unless --vectorize off",
       vectorizing},
      [](const lir::Kernel& k, LoopPassContext& c) { return lir::registerTile(k, k.vectorIsa, c.remarks); });
  p.loopPass({"stream-stores",
              "non-temporal stores for large outputs never read back",
              {"vectorize"},
              "unless --stream-stores off or --vectorize off",
              [](const CompileOptions& o, const target::Hardware& h) {
                return streamingStoreThreshold(o, h).has_value();
              }},
             [](const lir::Kernel& k, LoopPassContext& c) {
               return lir::markStreamingStores(k, *streamingStoreThreshold(c.options, c.hardware), c.remarks);
             });
  p.loopPass({"thread-versions", "a serial copy of the parallel loops of small kernels, for one thread"},
             [](const lir::Kernel& k, LoopPassContext& c) {
               return lir::versionParallelLoopsByThreads(k, c.remarks);
             });
  p.emit({"emit-c", "C with intrinsics and OpenMP"}, [](const lir::Kernel& k) { return backend::emitC(k); });
  return p;
}

namespace {

class CpuStrategy final : public TargetStrategy {
 public:
  const char* name() const override { return "cpu"; }
  Pipeline pipeline() const override { return cpuPipeline(); }
};

}  // namespace

const TargetStrategy& cpuStrategy() {
  static const CpuStrategy strategy;  // stateless
  return strategy;
}

}  // namespace tessel::driver
