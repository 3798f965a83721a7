// The fusion strategies shape the schedule tree as documented: min keeps one
// nest per statement group, smart and max fuse a producer-consumer chain.
#include <gtest/gtest.h>

#include "poly/ExtractScop.h"
#include "poly/IslContext.h"
#include "schedule/CheckSchedule.h"
#include "schedule/MarkParallel.h"
#include "schedule/Scheduler.h"
#include "tessel/builder.h"

namespace tessel {
namespace {

using namespace te;

Program chain() {
  builder::ProgramBuilder b("chain");
  auto A = b.input("A", DType::F32, {13, 7});
  auto T = b.temporary("T", DType::F32);
  auto C = b.output("C", DType::F32);
  auto i = b.index("i"), j = b.index("j");
  b.define(T(i, j), A(i, j) * 2.0f);
  b.define(C(i, j), T(i, j) + 1.0f);
  return b.build();
}

isl::schedule scheduleWith(poly::IslContext& isl, const Program& p, schedule::FusionStrategy f) {
  poly::Scop scop = poly::extractScop(isl.ctx(), p);
  schedule::SchedulerOptions o;
  o.fusion = f;
  return schedule::makeIslScheduler()->run(scop, o).tree;
}

// Number of outermost loop nests: children of a top-level sequence, or 1.
int topLevelNests(const isl::schedule& s) {
  isl::schedule_node n = s.root().child(0);
  return n.isa<isl::schedule_node_sequence>() || n.isa<isl::schedule_node_set>()
             ? static_cast<int>(n.n_children())
             : 1;
}

TEST(FusionStrategy, MinKeepsStatementsApart) {
  poly::IslContext isl;
  EXPECT_EQ(topLevelNests(scheduleWith(isl, chain(), schedule::FusionStrategy::Min)), 2);
}

TEST(FusionStrategy, SmartAndMaxFuseAChain) {
  poly::IslContext isl;
  EXPECT_EQ(topLevelNests(scheduleWith(isl, chain(), schedule::FusionStrategy::Smart)), 1);
  EXPECT_EQ(topLevelNests(scheduleWith(isl, chain(), schedule::FusionStrategy::Max)), 1);
}

TEST(FusionStrategy, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(schedule::parseFusionStrategy("min"), schedule::FusionStrategy::Min);
  EXPECT_EQ(schedule::parseFusionStrategy("smart"), schedule::FusionStrategy::Smart);
  EXPECT_EQ(schedule::parseFusionStrategy("max"), schedule::FusionStrategy::Max);
  EXPECT_THROW(schedule::parseFusionStrategy("maximal"), UserError);
}

TEST(MarkParallel, MarksOutermostCoincidentLoopOnly) {
  poly::IslContext isl;
  isl::schedule s = schedule::markParallelLoops(scheduleWith(isl, chain(), schedule::FusionStrategy::Smart));
  int marks = 0;
  s.root().foreach_descendant_top_down([&](const isl::schedule_node& n) {
    if (n.isa<isl::schedule_node_mark>() &&
        isl::manage(isl_schedule_node_mark_get_id(n.get())).name() == schedule::kParallelMark)
      ++marks;
    return true;
  });
  EXPECT_EQ(marks, 1);
}

TEST(CheckSchedule, HandEditedCoincidenceIsRecomputed) {
  poly::IslContext isl;
  builder::ProgramBuilder b("rowsum");
  auto A = b.input("A", DType::F32, {5, 6});
  auto S = b.output("S", DType::F32);
  auto i = b.index("i"), k = b.index("k");
  b.define(S(i), Reduction::Sum, true, A(i, k));
  Program p = b.build();
  poly::Scop scop = poly::extractScop(isl.ctx(), p);
  // A tree claiming that the reduction loop k is parallel.
  isl::schedule lie(
      isl.ctx(),
      "{ domain: \"{ S0[i] : 0 <= i < 5; S1[i, k] : 0 <= i < 5 and 0 <= k < 6 }\", child: "
      "{ schedule: \"[{ S0[i] -> [(i)]; S1[i, k] -> [(i)] }, { S0[i] -> [(0)]; S1[i, k] -> [(k)] }]\", "
      "coincident: [ 1, 1 ], child: { sequence: [ { filter: \"{ S0[i] }\" }, "
      "{ filter: \"{ S1[i, k] }\" } ] } } }");
  schedule::checkSchedule(scop, lie, "test");  // the order itself is valid
  isl::schedule fixed = schedule::recomputeCoincidence(scop, lie);
  auto band = fixed.root().child(0).as<isl::schedule_node_band>();
  EXPECT_TRUE(band.member_get_coincident(0));
  EXPECT_FALSE(band.member_get_coincident(1));
}

}  // namespace
}  // namespace tessel
