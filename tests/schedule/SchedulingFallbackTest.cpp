// Scheduling under a time limit: past the limit the isl scheduler falls back
// to weaker fusion, then to the source order, and says which; every fallback
// is a valid schedule. The program is a fuzzed one whose max-fusion ILP runs
// for minutes.
#include <gtest/gtest.h>

#include <map>

#include "../support/RunTool.h"
#include "front/Frontend.h"
#include "poly/ExtractScop.h"
#include "poly/IslContext.h"
#include "poly/Print.h"
#include "schedule/CheckSchedule.h"
#include "schedule/Scheduler.h"

namespace tessel {
namespace {

using namespace std::chrono_literals;
using testing::readText;
using testing::sourcePath;

te::Program slowMaxFusionProgram() {
  std::string path = "tests/schedule/programs/slow_max_fusion.tc";
  front::Source src{path, readText(sourcePath(path))};
  auto module = front::parse(src);
  std::map<std::string, int64_t> sizes, all = front::defaultSizes(src);
  for (const auto& n : front::sizeNames(*module, "")) sizes[n] = all.at(n);
  return front::lower(*module, "", sizes);
}

schedule::ScheduleResult scheduleWithin(const poly::Scop& scop, schedule::FusionStrategy fusion,
                                        std::chrono::milliseconds limit, unsigned long operations = 0) {
  schedule::SchedulerOptions o;
  o.fusion = fusion;
  o.timeLimit = limit;
  o.operationLimit = operations;
  return schedule::makeIslScheduler()->run(scop, o);
}

TEST(SchedulingFallback, MaxFusionPastItsLimitUsesSmartFusion) {
  poly::IslContext isl;
  te::Program program = slowMaxFusionProgram();  // the Scop refers to it
  poly::Scop scop = poly::extractScop(isl.ctx(), program);
  // Max fusion takes minutes, smart fusion milliseconds.
  auto r = scheduleWithin(scop, schedule::FusionStrategy::Max, 1000ms);
  EXPECT_EQ(r.fallback, "max fusion stopped at the scheduling time limit; used smart fusion");
  EXPECT_NO_THROW(schedule::checkSchedule(scop, r.tree, "fallback"));
  // The context is usable after the interrupted attempt: the same request
  // with the smart strategy gives the same tree.
  auto smart = scheduleWithin(scop, schedule::FusionStrategy::Smart, 0ms);
  EXPECT_TRUE(smart.fallback.empty()) << smart.fallback;
  EXPECT_EQ(poly::scheduleToYaml(smart.tree), poly::scheduleToYaml(r.tree));
}

TEST(SchedulingFallback, EveryStrategyPastTheLimitKeepsTheSourceOrder) {
  poly::IslContext isl;
  te::Program program = slowMaxFusionProgram();  // the Scop refers to it
  poly::Scop scop = poly::extractScop(isl.ctx(), program);
  auto r = scheduleWithin(scop, schedule::FusionStrategy::Max, 0ms, 10);
  EXPECT_EQ(r.fallback,
            "max fusion stopped at isl's operation quota, smart fusion stopped at isl's operation quota, min "
            "fusion stopped at isl's operation quota; kept the source order (no fusion, no loop reordering)");
  EXPECT_EQ(poly::scheduleToYaml(r.tree), poly::scheduleToYaml(scop.initialSchedule));
  EXPECT_NO_THROW(schedule::checkSchedule(scop, r.tree, "source order"));
}

// Tessel's scheduler past its limit hands the program to isl's, which says
// what it did in turn; the tree is valid and says who made it.
TEST(SchedulingFallback, TesselsSchedulerPastItsLimitUsesIsls) {
  poly::IslContext isl;
  te::Program program = slowMaxFusionProgram();  // the Scop refers to it
  poly::Scop scop = poly::extractScop(isl.ctx(), program);
  schedule::SchedulerOptions o;
  o.fusion = schedule::FusionStrategy::Max;
  o.operationLimit = 10;
  auto r = schedule::makeTesselScheduler()->run(scop, o);
  EXPECT_EQ(
      r.fallback.rfind("Tessel's scheduler stopped at isl's operation quota; used isl's scheduler (", 0), 0u)
      << r.fallback;
  EXPECT_EQ(r.madeBy, "isl's scheduler");
  EXPECT_NO_THROW(schedule::checkSchedule(scop, r.tree, "fallback"));
  // Without fusion each stage is scheduled apart: every stage past the limit, isl's made the whole tree.
  o.fusion = schedule::FusionStrategy::None;
  auto perStage = schedule::makeTesselScheduler()->run(scop, o);
  EXPECT_EQ(perStage.madeBy, "isl's scheduler") << perStage.fallback;
  EXPECT_NO_THROW(schedule::checkSchedule(scop, perStage.tree, "fallback per stage"));
  // Within its limit it makes the tree itself.
  o.operationLimit = 0;
  o.fusion = schedule::FusionStrategy::Smart;
  auto own = schedule::makeTesselScheduler()->run(scop, o);
  EXPECT_EQ(own.fallback, "");
  EXPECT_EQ(own.madeBy, "");
}

TEST(SchedulingFallback, NoFallbackWithinTheLimit) {
  poly::IslContext isl;
  te::Program program = slowMaxFusionProgram();  // the Scop refers to it
  poly::Scop scop = poly::extractScop(isl.ctx(), program);
  auto r = scheduleWithin(scop, schedule::FusionStrategy::Min, 60'000ms);
  EXPECT_TRUE(r.fallback.empty()) << r.fallback;
}

}  // namespace
}  // namespace tessel
