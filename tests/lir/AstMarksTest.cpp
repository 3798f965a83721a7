// Marks (parallel, vector, unroll_jam) apply to the loop of the band under
// them. When isl drops that loop (one iteration), the mark must not fall on
// the next loop inside: a "parallel" mark on a reduction loop is a race.
#include <gtest/gtest.h>

#include <functional>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "lir/AstToLir.h"
#include "poly/ExtractScop.h"
#include "poly/IslContext.h"
#include "runtime/Runner.h"
#include "schedule/MarkParallel.h"
#include "schedule/Marks.h"
#include "target/DetectHost.h"
#include "target/cpu/MarkVectorLoops.h"
#include "tile/TilePolicy.h"

namespace tessel::lir {
namespace {

driver::CompiledProgram compileWithTiles(const std::string& tc, const std::string& tiles) {
  driver::CompileOptions o;
  o.tiles = tile::parseTilePolicy(tiles, "test");
  return testing::compileFor(front::testing::lowerText(tc), o);
}

void expectMatchesOnTwoThreads(const driver::CompiledProgram& cp) {
  runtime::RunOptions ro;
  ro.check = true;
  ro.threads = 2;
  for (int run = 0; run < 3; ++run) {
    auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
    for (const auto& out : r.outputs) EXPECT_TRUE(out.pass) << out.tensor << ": " << out.message;
  }
}

// The m and n tiles cover their whole ranges, so their loops disappear; the
// parallel mark above them used to land on the k tile loop. Now the band's
// first member with a loop is the k tile, which carries the reduction, so
// the m point loop inside is the parallel one.
TEST(AstMarks, ParallelMarkOfADroppedLoopIsDropped) {
  auto cp = compileWithTiles(
      "# sizes: M=8 N=16 K=8192\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(k,n)\n}\n",
      "S_0: 8@L1, 16@L1; S_1: 8@L1, 16@L1, 8@L1");
  std::string lir = toString(cp.kernel);
  EXPECT_EQ(lir.find("parallel for c2"), std::string::npos) << lir;
  EXPECT_NE(lir.find("parallel unroll-jam for c3"), std::string::npos) << lir;
  expectMatchesOnTwoThreads(cp);
}

// Full row tiles are isolated from the partial one (100 rows in tiles of
// 32: three full, 4 rows left), and isl runs the partial tile once, without
// its row loop: the full tiles' loop stays parallel, and the partial tile's
// column loop (marked parallel_fallback) runs in parallel instead, at the
// top level: never nested in the full tiles' parallel loop.
TEST(AstMarks, ParallelMarkKeepsTheFullTilesOfASplitLoop) {
  auto cp = compileWithTiles(
      "# sizes: M=100 N=48 K=240\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(k,n)\n}\n",
      "S_0: 32@L1, 16@L1; S_1: 32@L1, 16@L1, 8@L1");
  std::string lir = toString(cp.kernel);
  // (Each parallel loop as the then branch of `if (tessel_threads > 1)`: lir/ThreadVersions.h.)
  EXPECT_NE(lir.find("\n    parallel for c0"), std::string::npos) << lir;
  size_t fallback = lir.find("parallel for c1");
  ASSERT_NE(fallback, std::string::npos) << lir;
  EXPECT_EQ(lir.substr(fallback - 5, 5), "\n    ") << lir;
  EXPECT_EQ(lir.find("parallel for c1", fallback + 1), std::string::npos) << lir;
  EXPECT_NE(cp.cSource.find("#pragma omp parallel for"), std::string::npos) << cp.cSource;
  expectMatchesOnTwoThreads(cp);
}

// A dropped point loop (tile of 1) and a partial k tile: the unroll-jam mark
// must not move to the k loop, whose iterations update the same elements.
TEST(AstMarks, UnrollJamMarkOfADroppedLoopIsDropped) {
  auto cp = compileWithTiles(
      "# sizes: M=4 N=16 K=12 L=4\ndef f(float(M,K,L) A, float(K,L,N) B) -> (C) {\n  C(m,n) +=! A(m,k,l) * "
      "B(k,l,n)\n}\n",
      "S_0: 1@L1, 16@L1; S_1: 1@L1, 16@L1, 8@L1, 4@L1");
  expectMatchesOnTwoThreads(cp);
}

// A parallel loop whose iterations do not share out evenly among the
// machine's cores (3 channels on 2) runs as one OpenMP loop with the
// coincident loop inside it, so that 2 threads share 3 x H rows rather than
// 3 channels; one that shares out evenly (8 channels) stays as it was.
TEST(AstMarks, ParallelLoopOfFewIterationsCollapsesWithTheLoopInside) {
  auto blur = [](int c) {
    return "# sizes: C=" + std::to_string(c) +
           " H=1031 W=517\n"
           "def blur(float(C, H, W) I) -> (B) {\n"
           "  BX(c, h, w) = I(c, h, w) + I(c, h, w + 1) + I(c, h, w + 2)\n"
           "  B(c, h, w) = BX(c, h, w) + BX(c, h + 1, w) + BX(c, h + 2, w)\n}\n";
  };
  target::Hardware twoCores = target::withCaches(target::detectHost(), 48 * 1024, 2 * 1024 * 1024, 2);
  driver::CompiledProgram few = testing::compileFor(front::testing::lowerText(blur(3)), {}, twoCores);
  // (Its output streams past the caches: the loop is then a fenced "omp for".)
  EXPECT_NE(few.cSource.find("for collapse(2) schedule(static)"), std::string::npos) << toString(few.kernel);
  EXPECT_NE(toString(few.kernel).find("parallel for c0"), std::string::npos) << toString(few.kernel);
  EXPECT_NE(toString(few.kernel).find("collapsible for c1"), std::string::npos) << toString(few.kernel);
  expectMatchesOnTwoThreads(few);
  runtime::RunOptions ro;
  ro.check = true;
  ro.threads = 3;
  auto r = runtime::runKernel(few.program, few.cSource, backend::packedEntryName(few.kernel), ro);
  for (const auto& out : r.outputs) EXPECT_TRUE(out.pass) << out.tensor << ": " << out.message;
  driver::CompiledProgram even = testing::compileFor(front::testing::lowerText(blur(8)), {}, twoCores);
  EXPECT_EQ(even.cSource.find("collapse("), std::string::npos) << toString(even.kernel);
  EXPECT_EQ(toString(even.kernel).find("collapsible"), std::string::npos) << toString(even.kernel);
}

// Loops of `kernel` with a vector hint, and all loops.
void countLoops(const Stmt& s, int& vector, int& all) {
  if (!s) return;
  if (s->kind == StmtKind::For) {
    ++all;
    if (s->vector != VectorHint::None) ++vector;
  }
  for (const Stmt& child : s->body) countLoops(child, vector, all);
  countLoops(s->thenCase, vector, all);
  countLoops(s->elseCase, vector, all);
}

// isl splits a loop into pieces (a block of loops with one iterator, or an
// if over them) where the domain under it is a union, as in basteln's slices
// or an isolated part; a vector mark above applies to every piece.
TEST(AstMarks, VectorMarkAppliesToEveryPieceOfASplitLoop) {
  poly::IslContext isl;
  te::Program program =
      front::testing::lowerText("# sizes: N=37\ndef f(float(N) A) -> (Y) {\n  Y(i) = A(i) * 2\n}\n");
  poly::Scop scop = poly::extractScop(isl.ctx(), program);
  isl::schedule_node band =
      isl::schedule::from_domain(scop.domain)
          .root()
          .child(0)
          .insert_partial_schedule(isl::multi_union_pw_aff(isl.ctx(), "[{ S0[i] -> [(i)] }]"));
  band = band.as<isl::schedule_node_band>().set_ast_build_options(
      isl::union_set(isl.ctx(), "{ isolate[[] -> [i]] : 8 <= i <= 20 }"));
  isl::schedule schedule = band.insert_mark(isl::id(isl.ctx(), schedule::kVectorMark)).schedule();
  Kernel kernel = astToLir(program, scop, buildAst(schedule, scop, {}), {});
  int vector = 0, all = 0;
  countLoops(kernel.body, vector, all);
  EXPECT_EQ(all, 3) << toString(kernel);
  EXPECT_EQ(vector, all) << toString(kernel);
}

// A parallel loop split into a loop of 8 rows and a last row run once: in
// that row's piece the parallel mark has no loop, and must not pass on to
// the next marked loop (the vector loop over j there; a vector reduction
// would race).
TEST(AstMarks, MarksOfALoopRunOnceDoNotPassToTheNextMarkedLoop) {
  poly::IslContext isl;
  te::Program program = front::testing::lowerText(
      "# sizes: N=9 M=37\ndef f(float(N,M) A) -> (Y) {\n  Y(i,j) = A(i,j) * 2\n}\n");
  poly::Scop scop = poly::extractScop(isl.ctx(), program);
  isl::schedule_node rows =
      isl::schedule::from_domain(scop.domain)
          .root()
          .child(0)
          .insert_partial_schedule(isl::multi_union_pw_aff(isl.ctx(), "[{ S0[i, j] -> [(i)] }]"));
  rows = rows.as<isl::schedule_node_band>().set_ast_build_options(
      isl::union_set(isl.ctx(), "{ isolate[[] -> [i]] : 0 <= i <= 7 }"));
  isl::schedule_node columns =
      rows.child(0).insert_partial_schedule(isl::multi_union_pw_aff(isl.ctx(), "[{ S0[i, j] -> [(j)] }]"));
  rows = columns.insert_mark(isl::id(isl.ctx(), schedule::kVectorMark)).parent();
  isl::schedule schedule = rows.insert_mark(isl::id(isl.ctx(), schedule::kParallelMark)).schedule();
  Kernel kernel = astToLir(program, scop, buildAst(schedule, scop, {}), {});
  int rowLoops = 0, parallelRows = 0, vectorColumns = 0, parallelColumns = 0;
  std::function<void(const Stmt&)> visit = [&](const Stmt& s) {
    if (!s) return;
    if (s->kind == StmtKind::For) {
      bool row = s->name == "c0";
      rowLoops += row ? 1 : 0;
      parallelRows += row && s->parallel ? 1 : 0;
      vectorColumns += !row && s->vector != VectorHint::None ? 1 : 0;
      parallelColumns += !row && s->parallel ? 1 : 0;
    }
    for (const Stmt& child : s->body) visit(child);
    visit(s->thenCase);
    visit(s->elseCase);
  };
  visit(kernel.body);
  EXPECT_EQ(rowLoops, 1) << toString(kernel);
  EXPECT_EQ(parallelRows, 1) << toString(kernel);
  EXPECT_EQ(vectorColumns, 2) << toString(kernel);
  EXPECT_EQ(parallelColumns, 0) << toString(kernel);
}

}  // namespace
}  // namespace tessel::lir
