// Marks (parallel, vector, unroll_jam) apply to the loop of the band under
// them. When isl drops that loop (one iteration), the mark must not fall on
// the next loop inside: a "parallel" mark on a reduction loop is a race.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/Runner.h"
#include "tile/TilePolicy.h"

namespace tessel::lir {
namespace {

driver::CompiledProgram compileWithTiles(const std::string& tc, const std::string& tiles) {
  driver::CompileOptions o;
  o.tiles = tile::parseTilePolicy(tiles, "test");
  return driver::compile(front::testing::lowerText(tc), o);
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
      "# sizes: M=8 N=16 K=64\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n",
      "S_0: 8@L1, 16@L1; S_1: 8@L1, 16@L1, 8@L1");
  std::string lir = toString(cp.kernel);
  EXPECT_EQ(lir.find("parallel for c2"), std::string::npos) << lir;
  EXPECT_NE(lir.find("parallel unroll-jam for c3"), std::string::npos) << lir;
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

}  // namespace
}  // namespace tessel::lir
