// Tessel's own scheduler (paper 004 §II): valid schedules, as parallel and
// as deep as isl's on the example operators, the building blocks of its
// ILPs, constraint trees and their file format (paper 004 §III).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "../support/RunTool.h"
#include "front/Frontend.h"
#include "poly/ExtractScop.h"
#include "poly/IslContext.h"
#include "schedule/CheckSchedule.h"
#include "schedule/CoefficientIlp.h"
#include "schedule/ConstraintTree.h"
#include "schedule/Scheduler.h"
#include "schedule/TreeQueries.h"
#include "schedule/VectorScenarios.h"

namespace tessel {
namespace {

te::Program programFrom(const std::string& file, const std::map<std::string, int64_t>& sizes = {}) {
  front::Source src{file, testing::readText(testing::sourcePath(file))};
  auto module = front::parse(src);
  auto bound = front::defaultSizes(src);
  for (const auto& [n, v] : sizes) bound[n] = v;
  return front::lower(*module, "", bound);
}

// Per statement: the members of the first band on its path from the root,
// and how many band members on the path, from the outermost, are parallel
// (coincident) before the first that is not.
struct OuterBand {
  int members = 0;
  int parallel = 0;
};
std::map<std::string, OuterBand> outerBands(const isl::schedule& tree) {
  std::map<std::string, OuterBand> out;
  std::function<void(const isl::schedule_node&, OuterBand, bool)> visit =
      [&](const isl::schedule_node& node, OuterBand b, bool stillParallel) {
        if (node.isa<isl::schedule_node_band>()) {
          auto band = node.as<isl::schedule_node_band>();
          int n = static_cast<int>(band.n_member());
          if (b.members == 0) b.members = n;
          for (int m = 0; m < n && stillParallel; ++m) {
            stillParallel = band.member_get_coincident(m);
            b.parallel += stillParallel ? 1 : 0;
          }
        }
        if (node.n_children() == 0 || node.isa<isl::schedule_node_leaf>()) {
          schedule::nodeDomain(node).foreach_set(
              [&](const isl::set& s) { out[isl_set_get_tuple_name(s.get())] = b; });
          return;
        }
        for (int i = 0; i < static_cast<int>(node.n_children()); ++i) visit(node.child(i), b, stillParallel);
      };
  visit(tree.root(), OuterBand{}, true);
  return out;
}

// The innermost band member above `statement`, on its instances.
isl::union_pw_aff innermostMember(const isl::schedule& tree, const poly::Scop& scop,
                                  const std::string& statement) {
  isl::union_set instances(scop.statement(statement).domain);
  std::optional<isl::union_pw_aff> deepest;
  tree.root().foreach_descendant_top_down([&](const isl::schedule_node& node) {
    if (!node.isa<isl::schedule_node_band>()) return true;
    if (schedule::nodeDomain(node).intersect(instances).is_empty()) return false;
    auto band = node.as<isl::schedule_node_band>();
    deepest =
        band.get_partial_schedule().at(static_cast<int>(band.n_member()) - 1).intersect_domain(instances);
    return true;
  });
  return *deepest;
}

schedule::ScheduleResult scheduleWith(const schedule::Scheduler& scheduler, const poly::Scop& scop,
                                      schedule::FusionStrategy fusion,
                                      const schedule::ConstraintTree* constraints = nullptr) {
  schedule::SchedulerOptions o;
  o.fusion = fusion;
  o.constraints = constraints;
  return scheduler.run(scop, o);
}

TEST(TesselScheduler, MatmulGetsIslsTree) {
  poly::IslContext isl;
  te::Program p = programFrom("examples/matmul.tc", {{"M", 13}, {"N", 7}, {"K", 5}});
  poly::Scop scop = poly::extractScop(isl.ctx(), p);
  auto r = scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart);
  EXPECT_EQ(r.fallback, "");
  isl::schedule_node band = r.tree.root().child(0);
  ASSERT_TRUE(band.isa<isl::schedule_node_band>());
  auto b = band.as<isl::schedule_node_band>();
  ASSERT_EQ(b.n_member(), 3u);
  EXPECT_TRUE(b.permutable());
  EXPECT_TRUE(b.member_get_coincident(0));
  EXPECT_TRUE(b.member_get_coincident(1));
  EXPECT_FALSE(b.member_get_coincident(2));  // k carries the reduction
  ASSERT_TRUE(band.child(0).isa<isl::schedule_node_sequence>());
  EXPECT_EQ(schedule::statementNames(schedule::nodeDomain(band.child(0).child(0).child(0))), "S0");
}

// Every example and benchmark program, under every fusion strategy: the
// schedule is valid, needs no fallback, and gives each statement an outer
// band at least as parallel and as deep as isl's.
TEST(TesselScheduler, AsParallelAndDeepAsIslOnEveryProgram) {
  std::vector<std::string> files;
  for (const char* dir : {"examples", "bench/programs"})
    for (const auto& e : std::filesystem::directory_iterator(testing::sourcePath(dir)))
      if (e.path().extension() == ".tc")
        files.push_back(std::string(dir) + "/" + e.path().filename().string());
  std::sort(files.begin(), files.end());
  auto tessel = schedule::makeTesselScheduler();
  auto isl = schedule::makeIslScheduler();
  for (const auto& file : files) {
    poly::IslContext ctx;
    te::Program p = programFrom(file);
    poly::Scop scop = poly::extractScop(ctx.ctx(), p);
    for (auto fusion : {schedule::FusionStrategy::None, schedule::FusionStrategy::Min,
                        schedule::FusionStrategy::Smart, schedule::FusionStrategy::Max}) {
      std::string what = file + " (" + schedule::fusionStrategyName(fusion) + ")";
      auto ours = scheduleWith(*tessel, scop, fusion);
      EXPECT_EQ(ours.fallback, "") << what;
      EXPECT_EQ(schedule::scheduleViolation(scop, ours.tree), "") << what;
      // Max fusion fuses whatever the dependences allow, serializing loops if
      // need be (a 3x3 convolution's input computed in its h and w loops,
      // interpolate's channels shifted by 3 for the alpha channel every
      // level reads), where isl's clustering fuses less; isl also fuses by
      // shifting one loop past another (softmax: its exponentials at
      // d + 511), which Tessel's scheduler sequences instead
      // (kMaxFusionShift). So under max only validity is compared.
      if (fusion == schedule::FusionStrategy::Max) continue;
      auto theirs = scheduleWith(*isl, scop, fusion);
      auto a = outerBands(ours.tree), b = outerBands(theirs.tree);
      for (const auto& [statement, band] : b) {
        EXPECT_GE(a[statement].parallel, band.parallel) << what << ": " << statement;
        EXPECT_GE(a[statement].members, band.members) << what << ": " << statement;
      }
    }
  }
}

// Paper 004's running example (Fig. 2): isl keeps X and Y apart with k
// innermost for Y, so D(k, i, j) is read with long jumps. The constraint tree
// of Fig. 3(b) gives fused, i-parallel, j-innermost code: X (B) and Y (C's
// update) share i and k; C's initialization, named by no constraint, runs
// before them.
TEST(TesselScheduler, Fig3TreeFusesWithJInnermost) {
  poly::IslContext ctx;
  te::Program p = programFrom("tests/schedule/programs/fused_mul_sub_mul.tc");
  poly::Scop scop = poly::extractScop(ctx.ctx(), p);
  auto tree = schedule::parseConstraintTree(
      testing::readText(testing::sourcePath("tests/schedule/programs/fig3b.constraints")),
      "fig3b.constraints", scop);
  auto tessel = schedule::makeTesselScheduler();
  auto plain = scheduleWith(*tessel, scop, schedule::FusionStrategy::Smart);
  auto r = scheduleWith(*tessel, scop, schedule::FusionStrategy::Smart, &tree);
  EXPECT_EQ(r.fallback, "");
  EXPECT_EQ(schedule::scheduleViolation(scop, r.tree), "");
  EXPECT_NE(r.explanation.find("branch 1.1.1 holds for S0 S2"), std::string::npos) << r.explanation;
  isl::schedule_node top = r.tree.root().child(0);
  ASSERT_TRUE(top.isa<isl::schedule_node_band>());
  auto outer = top.as<isl::schedule_node_band>();
  ASSERT_EQ(outer.n_member(), 1u);
  EXPECT_TRUE(outer.member_get_coincident(0));  // forall i
  isl::union_set y(scop.statement("S2").domain);
  EXPECT_TRUE(outer.get_partial_schedule().at(0).intersect_domain(y).plain_is_equal(
      isl::union_pw_aff(ctx.ctx(), "{ S2[i, j, k] -> [(i)] }").intersect_domain(y)));
  // Below: C's initialization, then one band over X and Y: k, then j (Y) with X at j = 0.
  isl::schedule_node seq = top.child(0);
  ASSERT_TRUE(seq.isa<isl::schedule_node_sequence>());
  ASSERT_EQ(seq.n_children(), 2u);
  EXPECT_EQ(schedule::statementNames(schedule::nodeDomain(seq.child(0).child(0))), "S1");
  isl::schedule_node fused = seq.child(1).child(0);
  ASSERT_TRUE(fused.isa<isl::schedule_node_band>());
  EXPECT_EQ(schedule::statementNames(schedule::nodeDomain(fused)), "S0 S2");
  auto inner = fused.as<isl::schedule_node_band>();
  ASSERT_EQ(inner.n_member(), 2u);
  EXPECT_TRUE(inner.get_partial_schedule().at(0).intersect_domain(y).plain_is_equal(
      isl::union_pw_aff(ctx.ctx(), "{ S2[i, j, k] -> [(k)] }").intersect_domain(y)));
  EXPECT_TRUE(inner.get_partial_schedule().at(1).intersect_domain(y).plain_is_equal(
      isl::union_pw_aff(ctx.ctx(), "{ S2[i, j, k] -> [(j)] }").intersect_domain(y)));
  EXPECT_TRUE(
      innermostMember(r.tree, scop, "S2")
          .plain_is_equal(isl::union_pw_aff(ctx.ctx(), "{ S2[i, j, k] -> [(j)] }").intersect_domain(y)));
  // Without the tree, Y keeps k innermost.
  EXPECT_TRUE(
      innermostMember(plain.tree, scop, "S2")
          .plain_is_equal(isl::union_pw_aff(ctx.ctx(), "{ S2[i, j, k] -> [(k)] }").intersect_domain(y)));
}

// Pluto's independence constraints: the complement of the rows found so
// far; a unit row leaves the other unit vectors, a skewed one the
// projection's rows (scaled to integers).
TEST(CoefficientIlp, OrthogonalComplement) {
  using Rows = std::vector<std::vector<int64_t>>;
  EXPECT_EQ(schedule::orthogonalComplement({}, 2), (Rows{{1, 0}, {0, 1}}));
  EXPECT_EQ(schedule::orthogonalComplement({{1, 0, 0}}, 3), (Rows{{0, 1, 0}, {0, 0, 1}}));
  EXPECT_EQ(schedule::orthogonalComplement({{1, 1}}, 2), (Rows{{1, -1}, {-1, 1}}));
  EXPECT_TRUE(schedule::orthogonalComplement({{1, 0}, {0, 1}}, 2).empty());
  EXPECT_EQ(schedule::rank({{1, 0}, {2, 0}, {0, 0}}, 2), 1);
  EXPECT_TRUE(schedule::orthogonalComplement({{1, 0}, {2, 0}, {0, 1}}, 2).empty());  // dependent rows
}

// Farkas' lemma through isl: c0 + c1 x >= 0 on 0 <= x <= 3 exactly when
// c0 >= 0 and c0 + 3 c1 >= 0; and the lexicographic minimum of a program.
TEST(CoefficientIlp, FarkasAndLexicographicMinimum) {
  poly::IslContext ctx;
  auto farkas = schedule::farkasConstraints(isl::set(ctx.ctx(), "{ [x] : 0 <= x <= 3 }"));
  auto holds = [&](int64_t c0, int64_t c1) {
    for (const auto& c : farkas) {
      int64_t v = c.constant + c.coefficients[0] * c0 + c.coefficients[1] * c1;
      if (c.equality ? v != 0 : v < 0) return false;
    }
    return true;
  };
  EXPECT_TRUE(holds(0, 0));
  EXPECT_TRUE(holds(3, -1));
  EXPECT_FALSE(holds(2, -1));
  EXPECT_FALSE(holds(-1, 5));
  // min (a, b) lexicographically with a + b >= 3, a <= 1, b >= 0, a >= 0: (0, 3).
  std::vector<schedule::LinearConstraint> program = {
      {{1, 1}, -3, false}, {{-1, 0}, 1, false}, {{0, 1}, 0, false}, {{1, 0}, 0, false}};
  auto r = schedule::lexicographicMinimum(ctx.ctx(), 2, program);
  ASSERT_TRUE(r.point);
  EXPECT_EQ(*r.point, (std::vector<int64_t>{0, 3}));
  program.push_back({{0, -1}, 1, false});  // b <= 1: infeasible
  EXPECT_FALSE(schedule::lexicographicMinimum(ctx.ctx(), 2, program).point);
}

// A fixed dimension (n = 0 in a batch-1 convolution) needs no row: isl's
// schedules skip it, and so does Tessel's.
TEST(TesselScheduler, FixedDimensionsGetNoRow) {
  poly::IslContext ctx;
  auto flat = schedule::flatDirections(isl::set(ctx.ctx(), "{ S0[n, h] : n = 0 and 0 <= h <= 9 }"));
  ASSERT_EQ(flat.size(), 1u);
  EXPECT_EQ(flat[0][1], 0);
  EXPECT_NE(flat[0][0], 0);
  te::Program p = programFrom("examples/conv_bias_relu.tc");
  poly::Scop scop = poly::extractScop(ctx.ctx(), p);
  auto r = scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart);
  isl::schedule_node top = r.tree.root().child(0);
  ASSERT_TRUE(top.isa<isl::schedule_node_band>());
  EXPECT_EQ(top.as<isl::schedule_node_band>().n_member(), 4u);  // k, h, w, c: not n
}

// Constraint trees print back in their text form, with isl names, and an
// alternative that cannot hold gives way to the next one.
TEST(ConstraintTree, PrintsAndFallsBackToTheNextAlternative) {
  poly::IslContext ctx;
  te::Program p = programFrom("examples/matmul.tc", {{"M", 5}, {"N", 4}, {"K", 3}});
  poly::Scop scop = poly::extractScop(ctx.ctx(), p);
  // k outermost for C's update while C.init has no k: first alternative asks
  // row 0 to carry nothing with k, which the reduction forbids.
  auto tree = schedule::parseConstraintTree("row { C.k = 1; coincident }\nrow { C.n = 1 }\n", "t", scop);
  EXPECT_EQ(tree.toString(scop),
            "  row {\n    S1.k - 1 = 0\n    coincident\n  }\n  row {\n    S1.n - 1 = 0\n  }\n");
  auto r = scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart, &tree);
  EXPECT_EQ(schedule::scheduleViolation(scop, r.tree), "");
  EXPECT_NE(r.explanation.find("branch 2 holds"), std::string::npos) << r.explanation;
  isl::union_set update(scop.statement("S1").domain);
  auto first = r.tree.root().child(0).as<isl::schedule_node_band>().get_partial_schedule().at(0);
  EXPECT_TRUE(first.intersect_domain(update).plain_is_equal(
      isl::union_pw_aff(ctx.ctx(), "{ S1[m, n, k] -> [(n)] }").intersect_domain(update)));
  // The only alternative cannot hold: the schedule is computed without the tree.
  auto impossible = schedule::parseConstraintTree("row { C.k = 1; coincident }\n", "t", scop);
  auto plain =
      scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart, &impossible);
  EXPECT_NE(plain.explanation.find("no branch of the constraint tree holds"), std::string::npos)
      << plain.explanation;
  EXPECT_EQ(schedule::scheduleViolation(scop, plain.tree), "");
}

// Algorithm 1's backtracking: an alternative that holds on its row but
// whose child cannot hold on the next row gives way to the next alternative
// of the row above. A node's row is computed once (parallel where it can
// be); the search moves on to siblings, as the paper's nodes are tried once.
TEST(ConstraintTree, BacktracksToTheRowAboveWhenAChildCannotHold) {
  poly::IslContext ctx;
  te::Program p = programFrom("examples/matmul.tc", {{"M", 5}, {"N", 4}, {"K", 3}});
  poly::Scop scop = poly::extractScop(ctx.ctx(), p);
  // Alternative 1: m outermost (holds), then k parallel (the reduction forbids it).
  // Alternative 2: n outermost, then m.
  auto tree = schedule::parseConstraintTree(
      "row { C.m = 1\n  row { C.k = 1; coincident } }\nrow { C.n = 1\n  row { C.m = 1 } }\n", "t", scop);
  auto r = scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart, &tree);
  EXPECT_EQ(schedule::scheduleViolation(scop, r.tree), "");
  EXPECT_NE(r.explanation.find("branch 2.1 holds for"), std::string::npos) << r.explanation;
  EXPECT_EQ(r.explanation.find("branch 1"), std::string::npos) << r.explanation;
  isl::union_set update(scop.statement("S1").domain);
  auto band = r.tree.root().child(0).as<isl::schedule_node_band>();
  ASSERT_GE(band.n_member(), 2u);
  EXPECT_TRUE(band.get_partial_schedule().at(0).intersect_domain(update).plain_is_equal(
      isl::union_pw_aff(ctx.ctx(), "{ S1[m, n, k] -> [(n)] }").intersect_domain(update)));
  EXPECT_TRUE(band.get_partial_schedule().at(1).intersect_domain(update).plain_is_equal(
      isl::union_pw_aff(ctx.ctx(), "{ S1[m, n, k] -> [(m)] }").intersect_domain(update)));
  // `permutable` holds where the row extends the band above: n, m and k in one band.
  auto permutable = schedule::parseConstraintTree(
      "row { C.n = 1\n  row { C.m = 1; permutable\n    row { C.k = 1; permutable } } }\n", "t", scop);
  auto q = scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart, &permutable);
  EXPECT_NE(q.explanation.find("branch 1.1.1 holds for"), std::string::npos) << q.explanation;
  auto one = q.tree.root().child(0).as<isl::schedule_node_band>();
  EXPECT_EQ(one.n_member(), 3u);
  EXPECT_TRUE(one.permutable());
}

// Paper 004 Alg. 2 on its running example: Y's best scenario has j (stride 1
// in C and D, a broadcast of B) innermost, then k; X's has k innermost. The
// tree it builds leads, like the hand-written Fig. 3(b), to fused X and Y
// with j innermost.
TEST(VectorScenarios, RunningExampleGetsFig3sSchedule) {
  poly::IslContext ctx;
  te::Program p = programFrom("tests/schedule/programs/fused_mul_sub_mul.tc");
  poly::Scop scop = poly::extractScop(ctx.ctx(), p);
  schedule::ScenarioTarget target;
  auto scenarios = schedule::buildVectorScenarios(scop, target);
  EXPECT_NE(scenarios.explanation.find("scenario 1 (cost"), std::string::npos) << scenarios.explanation;
  EXPECT_NE(scenarios.explanation.find("S0[i k]"), std::string::npos) << scenarios.explanation;
  EXPECT_NE(scenarios.explanation.find("S2[i k j]"), std::string::npos) << scenarios.explanation;
  ASSERT_FALSE(scenarios.tree.empty());
  auto r =
      scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart, &scenarios.tree);
  EXPECT_EQ(r.fallback, "");
  EXPECT_EQ(schedule::scheduleViolation(scop, r.tree), "");
  isl::union_set y(scop.statement("S2").domain);
  EXPECT_TRUE(
      innermostMember(r.tree, scop, "S2")
          .plain_is_equal(isl::union_pw_aff(ctx.ctx(), "{ S2[i, j, k] -> [(j)] }").intersect_domain(y)));
  // X and Y share their loops above j.
  bool fused = false;
  r.tree.root().foreach_descendant_top_down([&](const isl::schedule_node& node) {
    if (node.isa<isl::schedule_node_band>() &&
        schedule::statementNames(schedule::nodeDomain(node)) == "S0 S2")
      fused = true;
    return true;
  });
  EXPECT_TRUE(fused) << r.explanation;
}

// A transpose: the store's contiguous loop goes innermost (stores weigh 5,
// loads 3), and a broadcast counts as vectorizable.
TEST(VectorScenarios, StoresWeighMoreThanLoads) {
  poly::IslContext ctx;
  te::Program p = programFrom("examples/transpose.tc", {{"M", 64}, {"N", 48}});
  poly::Scop scop = poly::extractScop(ctx.ctx(), p);
  auto scenarios = schedule::buildVectorScenarios(scop, schedule::ScenarioTarget{});
  EXPECT_NE(scenarios.explanation.find("scenario 1 (cost 11): S0[n m]"), std::string::npos)
      << scenarios.explanation;
  auto r =
      scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart, &scenarios.tree);
  isl::union_set s0(scop.statement("S0").domain);
  EXPECT_TRUE(
      innermostMember(r.tree, scop, "S0")
          .plain_is_equal(isl::union_pw_aff(ctx.ctx(), "{ S0[n, m] -> [(m)] }").intersect_domain(s0)));
}

// Loops away from the innermost position score the same in any order, so
// ties keep the statement's own order: NHWC -> NCHW keeps c outside h (not h
// outside c), and BERT's batch loop, whose stride is long in both tensors,
// stays outermost instead of going inside the heads loop.
TEST(VectorScenarios, TiesKeepTheStatementsOrderAndLongStridesCountLittle) {
  poly::IslContext ctx;
  te::Program nchw =
      programFrom("bench/programs/layout_nhwc_to_nchw.tc", {{"N", 2}, {"C", 32}, {"H", 5}, {"W", 7}});
  poly::Scop nchwScop = poly::extractScop(ctx.ctx(), nchw);
  auto a = schedule::buildVectorScenarios(nchwScop, schedule::ScenarioTarget{});
  EXPECT_NE(a.explanation.find("scenario 1 (cost"), std::string::npos) << a.explanation;
  EXPECT_NE(a.explanation.find("): S0[c h w]\n  scenario 2"), std::string::npos) << a.explanation;
  te::Program bert =
      programFrom("bench/programs/layout_bert_split_heads.tc", {{"B", 32}, {"S", 128}, {"E", 768}});
  poly::Scop bertScop = poly::extractScop(ctx.ctx(), bert);
  auto b = schedule::buildVectorScenarios(bertScop, schedule::ScenarioTarget{});
  EXPECT_NE(b.explanation.find("): S0[h s d]\n  scenario 2"), std::string::npos) << b.explanation;
}

// The width term is w5 * min(N, L) / L (the paper prints L / N, which would
// favour short loops): with only that weight, a loop of 4 loses to one of
// 64 for the innermost position.
TEST(VectorScenarios, WidthTermFavoursLoopsThatFillTheVector) {
  poly::IslContext ctx;
  te::Program p = programFrom("examples/transpose.tc", {{"M", 64}, {"N", 4}});
  poly::Scop scop = poly::extractScop(ctx.ctx(), p);
  schedule::ScenarioTarget target;
  target.innermostLoops = 1;
  schedule::ScenarioWeights widthOnly{0, 0, 0, 0, 1};
  auto scenarios = schedule::buildVectorScenarios(scop, target, widthOnly);
  EXPECT_NE(scenarios.explanation.find("scenario 1 (cost 1): S0[m]\n  scenario 2 (cost 0.25): S0[n]\n"),
            std::string::npos)
      << scenarios.explanation;
}

int leaves(const std::vector<schedule::ConstraintNode>& nodes) {
  int n = 0;
  for (const auto& node : nodes) n += node.children.empty() ? 1 : leaves(node.children);
  return n;
}

// Siblings with the same constraints (in any order) would be one shared prefix.
bool siblingsDiffer(const std::vector<schedule::ConstraintNode>& nodes) {
  std::set<std::set<std::string>> keys;
  for (const auto& node : nodes) {
    std::set<std::string> key;
    for (const auto& c : node.constraints) key.insert(c.text);
    if (!keys.insert(key).second || !siblingsDiffer(node.children)) return false;
  }
  return true;
}

// How the eight scenarios arise (a beam: two loops per innermost position,
// up to three positions, per statement; the statements' orders combined and
// the 8 best totals kept), and how they become one tree: fused variants
// first, then each scenario alone, then relaxed ones steering only the
// costliest statement, equal prefixes shared.
TEST(VectorScenarios, EightScenariosInOneTreeFusedFirstRelaxedLast) {
  poly::IslContext ctx;
  te::Program p =
      programFrom("bench/programs/layout_mixed_chain.tc", {{"N", 2}, {"C", 32}, {"H", 5}, {"W", 17}});
  poly::Scop scop = poly::extractScop(ctx.ctx(), p);
  auto scenarios = schedule::buildVectorScenarios(scop, schedule::ScenarioTarget{});
  const std::string& text = scenarios.explanation;
  // Two 4-loop statements: 8 orders each, 64 pairs, 8 kept, costliest first.
  EXPECT_NE(text.find("scenario 8 (cost"), std::string::npos) << text;
  EXPECT_EQ(text.find("scenario 9 (cost"), std::string::npos) << text;
  double last = 1e300;
  for (size_t at = text.find("(cost "); at != std::string::npos; at = text.find("(cost ", at + 1)) {
    double cost = std::stod(text.substr(at + 6));
    EXPECT_LE(cost, last) << text;
    last = cost;
  }
  const auto& roots = scenarios.tree.roots;
  ASSERT_FALSE(roots.empty());
  auto names = [&](const schedule::ConstraintNode& node) {
    std::set<int> statements;
    for (const auto& c : node.constraints)
      for (const auto& t : c.terms) statements.insert(t.first.statement);
    return statements;
  };
  // The first alternative fuses T and O: it equates their coefficients.
  bool equates = false;
  for (const auto& c : roots.front().constraints) equates = equates || (c.terms.size() == 2 && c.equality);
  EXPECT_TRUE(equates) << scenarios.tree.toString(scop);
  // The last steers one statement only.
  EXPECT_EQ(names(roots.back()).size(), 1u) << scenarios.tree.toString(scop);
  // 24 paths (3 variants of 8 scenarios) at most, sharing row 0 where the
  // same loops lie below it (in any order), no two siblings alike.
  EXPECT_LE(leaves(roots), 24);
  EXPECT_LT(roots.size(), static_cast<size_t>(leaves(roots)));
  EXPECT_TRUE(siblingsDiffer(roots));
  // The tree schedules validly.
  auto r =
      scheduleWith(*schedule::makeTesselScheduler(), scop, schedule::FusionStrategy::Smart, &scenarios.tree);
  EXPECT_EQ(schedule::scheduleViolation(scop, r.tree), "");
  EXPECT_NE(r.explanation.find("constraint tree: branch"), std::string::npos) << r.explanation;
}

}  // namespace
}  // namespace tessel
