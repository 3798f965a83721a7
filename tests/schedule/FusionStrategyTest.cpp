// The fusion strategies shape the schedule tree as documented: none keeps
// each statement's nests apart in source order, min keeps one nest per
// statement group, smart and max fuse a producer-consumer chain.
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

isl::schedule scheduleOf(const poly::Scop& scop, schedule::FusionStrategy f) {
  schedule::SchedulerOptions o;
  o.fusion = f;
  return schedule::makeIslScheduler()->run(scop, o).tree;
}

Program chain(int64_t rows = 13, int64_t columns = 7) {
  builder::ProgramBuilder b("chain");
  auto A = b.input("A", DType::F32, {rows, columns});
  auto T = b.temporary("T", DType::F32);
  auto C = b.output("C", DType::F32);
  auto i = b.index("i"), j = b.index("j");
  b.define(T(i, j), A(i, j) * 2.0f);
  b.define(C(i, j), T(i, j) + 1.0f);
  return b.build();
}

isl::schedule scheduleWith(poly::IslContext& isl, const Program& p, schedule::FusionStrategy f) {
  return scheduleOf(poly::extractScop(isl.ctx(), p), f);
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

// T, an independent U, a row sum S of T (its init and update) and C from S
// and U: isl may order U anywhere before C; none keeps the source order.
Program fourStatements() {
  builder::ProgramBuilder b("four");
  auto A = b.input("A", DType::F32, {13, 7});
  auto B = b.input("B", DType::F32, {13});
  auto T = b.temporary("T", DType::F32);
  auto U = b.temporary("U", DType::F32);
  auto S = b.temporary("S", DType::F32);
  auto C = b.output("C", DType::F32);
  auto i = b.index("i"), j = b.index("j");
  b.define(T(i, j), A(i, j) * 2.0f);
  b.define(U(i), B(i) + 1.0f);
  b.define(S(i), Reduction::Sum, /*init=*/true, T(i, j));
  b.define(C(i), S(i) * U(i));
  return b.build();
}

TEST(FusionStrategy, NoneRunsEachStatementAloneInSourceOrder) {
  poly::IslContext isl;
  Program p = fourStatements();
  poly::Scop scop = poly::extractScop(isl.ctx(), p);
  schedule::SchedulerOptions o;
  o.fusion = schedule::FusionStrategy::None;
  isl::schedule s = schedule::makeIslScheduler()->run(scop, o).tree;
  schedule::checkSchedule(scop, s, "none");
  ASSERT_EQ(topLevelNests(s), 4);
  isl::schedule_node sequence = s.root().child(0);
  ASSERT_TRUE(sequence.isa<isl::schedule_node_sequence>());
  for (int k = 0; k < 4; ++k) {
    // Child k runs exactly the statements of stage k (S: its init and update).
    isl::union_set expected = isl::union_set::empty(isl.ctx());
    for (const auto& statement : scop.statements)
      if (statement.stage == k) expected = expected.unite(isl::union_set(statement.domain));
    isl::union_set filter = sequence.child(k).as<isl::schedule_node_filter>().get_filter();
    EXPECT_TRUE(filter.intersect(scop.domain).is_equal(expected)) << "child " << k;
  }
}

TEST(FusionStrategy, ParsesNamesAndRejectsOthers) {
  EXPECT_EQ(schedule::parseFusionStrategy("none"), schedule::FusionStrategy::None);
  EXPECT_EQ(schedule::parseFusionStrategy("min"), schedule::FusionStrategy::Min);
  EXPECT_EQ(schedule::parseFusionStrategy("smart"), schedule::FusionStrategy::Smart);
  EXPECT_EQ(schedule::parseFusionStrategy("max"), schedule::FusionStrategy::Max);
  EXPECT_THROW(schedule::parseFusionStrategy("maximal"), UserError);
}

int parallelMarks(const isl::schedule& s) {
  int marks = 0;
  s.root().foreach_descendant_top_down([&](const isl::schedule_node& n) {
    if (n.isa<isl::schedule_node_mark>() &&
        isl::manage(isl_schedule_node_mark_get_id(n.get())).name() == schedule::kParallelMark)
      ++marks;
    return true;
  });
  return marks;
}

// 2 x 400 x 300 instances: enough work for threads.
TEST(MarkParallel, MarksOutermostCoincidentLoopOnly) {
  poly::IslContext isl;
  Program p = chain(400, 300);
  poly::Scop scop = poly::extractScop(isl.ctx(), p);
  Remarks remarks;
  isl::schedule s =
      schedule::markParallelLoops(scheduleOf(scop, schedule::FusionStrategy::Smart), scop, 2, remarks);
  EXPECT_EQ(parallelMarks(s), 1);
  EXPECT_TRUE(remarks.find("", RemarkKind::Missed, "kernel").empty()) << remarks.text();
}

// 2 x 13 x 7 instances: a parallel region would cost more than the work;
// on one core the marks stay (the kernel versions them for one thread).
TEST(MarkParallel, SmallKernelsRunSerially) {
  poly::IslContext isl;
  Program p = chain();
  poly::Scop scop = poly::extractScop(isl.ctx(), p);
  Remarks remarks;
  isl::schedule tree = scheduleOf(scop, schedule::FusionStrategy::Smart);
  EXPECT_EQ(parallelMarks(schedule::markParallelLoops(tree, scop, 2, remarks)), 0);
  std::vector<Remark> missed = remarks.find("", RemarkKind::Missed, "kernel");
  ASSERT_EQ(missed.size(), 1u) << remarks.text();
  EXPECT_EQ(missed[0].value("work"), "182") << remarks.text();
  Remarks oneCore;
  EXPECT_EQ(parallelMarks(schedule::markParallelLoops(tree, scop, 1, oneCore)), 1);
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
