// basteln recomputes producers inside the tiles of their consumers (paper
// 001 Alg. 2 and 3): the conv pipeline of Fig. 1, a multi-statement
// intermediate (Fig. 7), a producer shared by two consumers, and 2mm, where
// the recomputation is too large. Every kernel is checked against the
// interpreter on two threads, at sizes that leave partial and overlapping
// tiles.
#include <gtest/gtest.h>

#include <array>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../support/Compile.h"
#include "../support/RowPrograms.h"
#include "../support/RunTool.h"
#include "driver/Compile.h"
#include "lir/Lir.h"
#include "target/DetectHost.h"
#include "tile/TilePolicy.h"

namespace tessel::fuse {
namespace {

using testing::CheckedProgram;

// The host's ISA with fixed caches, so tile decisions do not depend on the machine.
target::Hardware fixedCaches() {
  target::Hardware h = target::withCaches(target::detectHost(), 32 * 1024, 1024 * 1024, 2);
  h.name = "fixed-caches";
  return h;
}

// Compiled for fixedCaches() unless another machine is given.
CheckedProgram compileAndCheck(const std::string& tc, const driver::CompileOptions& o,
                               const target::Hardware& hardware = fixedCaches()) {
  return testing::compileAndCheck(tc, o, hardware);
}

driver::CompileOptions basteln(int tile, double redundancy = 0.25) {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  o.bastelnRedundancy = redundancy;
  o.autoTiling = false;
  std::string t = std::to_string(tile) + "@L2";
  o.tiles = tile::parseTilePolicy("*: " + t + ", " + t + ", " + t, "test");
  o.dumpAfter = "basteln";
  return o;
}

using Values = std::vector<std::pair<std::string, std::string>>;

// The remarks of stage `pass` of `kind` about `subject` (any when "") with all of `values`.
std::vector<Remark> remarksOf(const CheckedProgram& c, const std::string& pass, RemarkKind kind,
                              const std::string& subject, const Values& values = {}) {
  std::vector<Remark> out;
  for (const Remark& r : c.program.remarks.find(pass, kind, subject)) {
    bool all = true;
    for (const auto& [name, value] : values) all = all && r.value(name) == value;
    if (all) out.push_back(r);
  }
  return out;
}

// basteln's remarks of `kind` about `subject` (any when "") with all of `values`.
std::vector<Remark> decisions(const CheckedProgram& c, RemarkKind kind, const std::string& subject,
                              const Values& values) {
  return remarksOf(c, "basteln", kind, subject, values);
}

// Whether the tiler made fusion tiles (for producers recomputed in them), with all of `values`.
bool fusionTiled(const CheckedProgram& c, Values values = {}) {
  values.emplace_back("source", "fusion");
  return !remarksOf(c, "tile", RemarkKind::Applied, "", values).empty();
}

// Whether serialize-racy-tiles made some loops run in order.
bool serialized(const CheckedProgram& c) {
  return !remarksOf(c, "serialize-racy-tiles", RemarkKind::Applied, "").empty();
}

// Whether basteln recomputed `producer` in the tiles of `consumer` (statement names).
bool recomputedInTiles(const CheckedProgram& c, const std::string& producer, const std::string& consumer) {
  return !decisions(c, RemarkKind::Applied, producer,
                    {{"action", "recomputed"}, {"consumer", consumer}, {"place", "tiles"}})
              .empty();
}

// Whether the contract pass made a buffer of `tensor` with all of `values`
// ("shape", "buffer", "statements", "recomputed", "part", "parts").
bool contracted(const CheckedProgram& c, const std::string& tensor, const Values& values) {
  return !remarksOf(c, "contract", RemarkKind::Applied, tensor, values).empty();
}

// bench/programs/NAME.tc without its first line (its sizes), for a test's own.
std::string benchProgramBody(const std::string& name) {
  std::string tc = testing::readText(testing::sourcePath("bench/programs/" + name + ".tc"));
  return tc.substr(tc.find('\n') + 1);
}

std::string convPipeline(int h, int w) {
  return "# sizes: IH=" + std::to_string(h + 2) + " IW=" + std::to_string(w + 2) +
         " KH=3 KW=3\n"
         "def pipeline(float(IH,IW) X, float(KH,KW) K) -> (R) {\n"
         "  A(h,w) = X(h,w) * 0.5\n"
         "  C(h,w) +=! A(h+kh,w+kw) * K(kh,kw)\n"
         "  R(h,w) = fmax(C(h,w), 0.0)\n}\n";
}

TEST(Basteln, Fig1ConvPipelineRecomputesTheQuantizationPerTile) {
  for (auto [h, w] : {std::pair{6, 6}, {7, 13}, {13, 7}, {127, 33}}) {
    for (int tile : {2, 3, 32}) {
      CheckedProgram c = compileAndCheck(convPipeline(h, w), basteln(tile, 1.0));
      EXPECT_TRUE(c.check.pass) << h << "x" << w << " tile " << tile << "\n" << c.check.failures;
      EXPECT_TRUE(recomputedInTiles(c, "S0", "S3 S2 S1")) << h << "x" << w << " tile " << tile << "\n"
                                                          << c.explained();
      EXPECT_NE(c.program.dump.find("extension:"), std::string::npos) << c.program.dump;
      // A lives in a per-tile buffer: no full-size array is allocated.
      EXPECT_FALSE(c.program.remarks.find("contract", RemarkKind::Applied, "A").empty()) << c.explained();
      for (const auto& t : c.program.kernel.temporaries) EXPECT_NE(t.name, "A");
    }
  }
}

// The tile loop is the kernel's one parallel loop: quantization, convolution
// and ReLU of a tile run together on one thread. (Large enough to share
// among threads: schedule/MarkParallel.h.)
TEST(Basteln, Fig1RunsAsOneParallelLoop) {
  CheckedProgram c = compileAndCheck(convPipeline(181, 135), basteln(16));
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  size_t first = c.program.cSource.find("#pragma omp parallel");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(c.program.cSource.find("#pragma omp parallel", first + 1), std::string::npos)
      << c.program.cSource;
}

TEST(Basteln, SmallTilesPassTheRedundancyLimit) {
  // 2x2 output tiles need 4x4 of A: 75% of A's executions are recomputations.
  CheckedProgram c = compileAndCheck(convPipeline(13, 13), basteln(2));
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  std::vector<Remark> refused =
      decisions(c, RemarkKind::Missed, "S0",
                {{"action", "not-recomputed"}, {"consumer", "S3 S2 S1"}, {"place", "tiles"}});
  ASSERT_FALSE(refused.empty()) << c.explained();
  EXPECT_TRUE(refused[0].has("redundancy")) << c.explained();
  EXPECT_EQ(refused[0].value("redundancy_limit"), "0.25") << c.explained();
  EXPECT_EQ(c.program.dump.find("extension:"), std::string::npos);
}

// 512-row tiles of a 1024x1024 output need a slice of A of 514 rows (1 MiB or more), beyond half the
// fixed 1 MiB L2: recomputing it would save no memory traffic. At 100%
// redundancy ("one kernel whatever it costs") it is fused all the same.
TEST(Basteln, SlicesBeyondTheCachesAreNotRecomputed) {
  CheckedProgram c = compileAndCheck(convPipeline(1024, 1024), basteln(512));
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  std::vector<Remark> refused =
      decisions(c, RemarkKind::Missed, "S0",
                {{"action", "not-recomputed"}, {"consumer", "S3 S2 S1"}, {"place", "tiles"}});
  ASSERT_FALSE(refused.empty()) << c.explained();
  EXPECT_TRUE(refused[0].has("slice_bytes")) << c.explained();
  EXPECT_NEAR(std::stod(refused[0].value("bytes_limit")) / 1024, 512, 0.5) << c.explained();
  CheckedProgram all = compileAndCheck(convPipeline(1024, 1024), basteln(512, 1.0));
  EXPECT_TRUE(all.check.pass) << all.check.failures;
  EXPECT_TRUE(recomputedInTiles(all, "S0", "S3 S2 S1")) << all.explained();
}

// The default redundancy limit (40%) takes unsharp's 5-tap blur in 8-row
// fusion strips (12 rows of it per strip, 33%): measured faster than keeping
// it apart (docs/performance.md).
TEST(Basteln, DefaultLimitTakesUnsharpsBlurInEightRowStrips) {
  const std::string tc = benchProgramBody("unsharp");
  for (int h : {131, 260}) {  // a channel of 37 rows stays in the fixed 1 MiB L2: nothing to gain
    driver::CompileOptions o;
    o.fusion = driver::Fusion::Basteln;
    CheckedProgram c = compileAndCheck("# sizes: C=2 H=" + std::to_string(h) + " W=1028\n" + tc, o);
    EXPECT_TRUE(c.check.pass) << h << "\n" << c.check.failures;
    EXPECT_FALSE(
        decisions(
            c, RemarkKind::Applied, "S0",
            {{"action", "recomputed"}, {"consumer", "S1 S3 S2"}, {"place", "tiles"}, {"slice", "1x12x1024"}})
            .empty())
        << h << "\n"
        << c.explained();
  }
}

// The tree after the pass, whole: the extension node under the tile band
// (its relation maps each tile of 8 output rows to the 10 rows of A it
// needs), the copy of A's point loops before the consumer's, and A's own nest
// filtered to its reserved instances (none here: every A is read by some
// tile). To update after a deliberate change, set TESSEL_UPDATE_GOLDEN=1 and
// rerun.
TEST(Basteln, DumpAfterBastelnMatchesTheGolden) {
  driver::CompileOptions o = basteln(8);
  o.promotion = driver::CompileOptions::Promotion::Off;
  CheckedProgram c = compileAndCheck(convPipeline(21, 19), o);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  const std::string golden = testing::sourcePath("tests/fuse/golden/fig1_after_basteln.yaml");
  if (std::getenv("TESSEL_UPDATE_GOLDEN")) testing::writeText(golden, c.program.dump);
  EXPECT_EQ(c.program.dump, testing::readText(golden));
}

// Fig. 7: the intermediate is two statements (a quantization through a
// temporary, then a reduction over a window); both come into each tile.
TEST(Basteln, MultiStatementIntermediateComesWhole) {
  const std::string tc =
      "# sizes: N=29 M=31\n"
      "def f(float(N,M) X) -> (Y) {\n"
      "  t(i,j) = X(i,j) * 0.25\n"
      "  s(i,j) +=! t(i,j) * X(i,j)\n"
      "  Y(i,j) = s(i,j) + s(i+1,j) + s(i,j+1) where i in 0:N-1, j in 0:M-1\n}\n";
  for (int tile : {2, 5, 16}) {
    CheckedProgram c = compileAndCheck(tc, basteln(tile, 1.0));
    EXPECT_TRUE(c.check.pass) << tile << "\n" << c.check.failures;
    EXPECT_TRUE(recomputedInTiles(c, "S1 S0", "S2")) << tile << "\n" << c.explained();
    EXPECT_TRUE(c.program.kernel.temporaries.empty()) << tile << "\n" << c.explained();
  }
}

// A reduction recomputed per tile writes each element several times; when
// its slice does not fit a per-tile buffer, tiles on two threads would store
// partial sums into the same shared elements, so the tiles run in order.
TEST(Basteln, SharedReductionSliceRunsTilesInOrder) {
  const std::string tc =
      "# sizes: N=300 M=300 K=3\n"
      "def f(float(N,M,K) X) -> (Y) {\n"
      "  s(i,j) +=! X(i,j,k) * X(i,j,k)\n"
      "  Y(i,j) = s(i,j) + s(i+1,j) + s(i,j+1) where i in 0:N-1, j in 0:M-1\n}\n";
  CheckedProgram big = compileAndCheck(tc, basteln(256, 1.0));
  EXPECT_TRUE(big.check.pass) << big.check.failures;
  EXPECT_TRUE(recomputedInTiles(big, "S1 S0", "S2")) << big.explained();
  EXPECT_FALSE(
      remarksOf(big, "serialize-racy-tiles", RemarkKind::Applied, "S0 S1", {{"tensor", "s"}}).empty())
      << big.explained();
  CheckedProgram small = compileAndCheck(tc, basteln(32, 1.0));
  EXPECT_TRUE(small.check.pass) << small.check.failures;
  EXPECT_TRUE(contracted(small, "s", {{"shape", "300x300"}, {"buffer", "33x33"}})) << small.explained();
  EXPECT_FALSE(serialized(small)) << small.explained();
}

// A producer that writes an output (here fused with the row sums Z, which
// read A too) is an output itself and is not recomputed.
TEST(Basteln, ProducerWritingAnOutputIsNotRecomputed) {
  const std::string tc =
      "# sizes: N=23 M=19\n"
      "def f(float(N,M) X) -> (Y, Z) {\n"
      "  A(i,j) = X(i,j) * 2.0\n"
      "  Z(i) +=! A(i,j)\n"
      "  Y(i,j) = A(i,j) + A(i+1,j+1) where i in 0:N-1, j in 0:M-1\n}\n";
  CheckedProgram c = compileAndCheck(tc, basteln(4, 1.0));
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_FALSE(decisions(c, RemarkKind::Missed, "",
                         {{"action", "not-recomputed"},
                          {"consumer", "S3"},
                          {"place", "tiles"},
                          {"reason", "it writes program outputs"}})
                   .empty())
      << c.explained();
  EXPECT_EQ(c.program.dump.find("extension:"), std::string::npos);
}

// The dataflow check of each fusion stops at its time limit
// (a fuzzed program with small tiles spent 38 s in one); the fusion is then
// refused and the kernel stays right.
TEST(Basteln, DataflowCheckStopsAtTheTimeLimit) {
  // The scheduler's tree comes from a file, so that the 1 ms limit bounds
  // the dataflow check alone.
  driver::CompileOptions scheduled = basteln(4, 1.0);
  scheduled.dumpAfter = "schedule";
  std::string tree =
      testing::compileFor(front::testing::lowerText(convPipeline(61, 67)), scheduled, fixedCaches()).dump;
  driver::CompileOptions o = basteln(4, 1.0);
  o.schedule = driver::CompileOptions::ScheduleFile{"test", tree};
  o.fusionCheckTimeLimit = std::chrono::milliseconds(1);
  CheckedProgram c = compileAndCheck(convPipeline(61, 67), o);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_FALSE(
      decisions(
          c, RemarkKind::Missed, "",
          {{"action", "no-fusion"},
           {"reason",
            "the dataflow check of the fused tree ran past its time limit (--fusion-check-time-limit)"}})
          .empty())
      << c.explained();
}

// Q Kᵀ V: promotion transposes K's tiles so that Q Kᵀ runs as outer products;
// a copy of Q Kᵀ recomputed in the tiles of (Q Kᵀ) V would read K in place,
// by columns, so basteln leaves it in its own tiles (unless told to fuse
// whatever it costs).
TEST(Basteln, ProducerReadingATransposedCopyStaysInItsTiles) {
  const std::string tc =
      "# sizes: M=64 N=512 D=64 E=64\n"
      "def f(float(M,D) Q, float(N,D) K, float(N,E) V) -> (O) {\n"
      "  S(i,j) +=! Q(i,d) * K(j,d)\n"
      "  O(i,e) +=! S(i,j) * V(j,e)\n}\n";
  for (double redundancy : {0.25, 1.0}) {
    driver::CompileOptions o;
    o.fusion = driver::Fusion::Basteln;
    o.bastelnRedundancy = redundancy;
    CheckedProgram c = compileAndCheck(tc, o);
    EXPECT_TRUE(c.check.pass) << c.check.failures;
    bool transposed = false;  // some operand copied into a transposed buffer
    for (const Remark& r : remarksOf(c, "promote", RemarkKind::Applied, ""))
      for (const RemarkValue& v : r.values)
        transposed = transposed || (v.name().ends_with(".transposed") && v.text() == "true");
    EXPECT_TRUE(transposed) << c.explained();
    EXPECT_EQ(!decisions(c, RemarkKind::Missed, "",
                         {{"action", "not-recomputed"},
                          {"reason",
                           "its vector loops read a transposed copy that its recomputations would not have"}})
                   .empty(),
              redundancy < 1)
        << c.explained();
  }
}

// 2mm (Fig. 9): a tile of the second product needs whole rows of the first,
// so each tile would recompute most of it; basteln keeps the nests apart.
TEST(Basteln, TwoMatmulsAreRefused) {
  const std::string tc =
      "# sizes: M=40 K=40 L=40 N=40\n"
      "def f(float(M,K) A, float(K,L) B, float(L,N) C) -> (D) {\n"
      "  E(m,l) +=! A(m,k) * B(k,l)\n"
      "  D(m,n) +=! E(m,l) * C(l,n)\n}\n";
  CheckedProgram c = compileAndCheck(tc, basteln(8));
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  std::vector<Remark> refused =
      decisions(c, RemarkKind::Missed, "S1 S0",
                {{"action", "not-recomputed"},
                 {"consumer", "S2 S3"},
                 {"place", "tiles"},
                 {"reason", "about 80% of its executions would be recomputations, limit 25%"}});
  ASSERT_FALSE(refused.empty()) << c.explained();
  EXPECT_NEAR(std::stod(refused[0].value("redundancy")), 0.8, 0.005) << c.explained();
  EXPECT_EQ(refused[0].value("redundancy_limit"), "0.25") << c.explained();
  EXPECT_EQ(c.program.dump.find("extension:"), std::string::npos) << c.explained();
  // At 100% it is fused, and still right.
  CheckedProgram forced = compileAndCheck(tc, basteln(8, 1.0));
  EXPECT_TRUE(forced.check.pass) << forced.check.failures;
  EXPECT_NE(forced.program.dump.find("extension:"), std::string::npos) << forced.explained();
}

// Alg. 4, multiple outputs: O1 reads the top rows of P, O2 the bottom
// rows (the disjoint case), so each part is recomputed in the tiles of its
// own reader and P's nest runs nothing. When both read the same rows (the
// identical case), pre-tiling fusion gives O1 and O2 one loop nest, in
// whose tiles P is recomputed once.
TEST(Basteln, Alg4DisjointPartsGoIntoTheirOwnReaders) {
  auto program = [](int h, int m, bool sameRows) {
    std::string second = sameRows ? "H - 1 - i" : "H + 1 + i";
    return "# sizes: N=" + std::to_string(2 * h + 2) + " H=" + std::to_string(h) + " M=" + std::to_string(m) +
           "\n"
           "def f(float(N, M) X, float(H) S) -> (O1, O2) {\n"
           "  P(i, j) = X(i, j) * 0.5\n"
           "  O1(i, j) = S(i) * (P(i, j) + P(i + 1, j) + P(i, j + 1)) where i in 0:H, j in 0:M-1\n"
           "  O2(i, j) = P(" +
           second + ", j) - P(" + second + ", j + 1) where i in 0:H, j in 0:M-1\n}\n";
  };
  for (auto [h, m] : {std::pair{7, 3}, {13, 17}, {29, 31}}) {
    CheckedProgram c = compileAndCheck(program(h, m, false), basteln(8, 1.0));
    EXPECT_TRUE(c.check.pass) << h << "x" << m << "\n" << c.check.failures;
    EXPECT_TRUE(recomputedInTiles(c, "S0", "S2")) << c.explained();
    EXPECT_TRUE(recomputedInTiles(c, "S0", "S1")) << c.explained();
    // (Each nest computes the values of P it reads.)
    EXPECT_TRUE(contracted(c, "P", {{"part", "2"}, {"parts", "2"}})) << c.explained();
    for (const auto& t : c.program.kernel.temporaries) EXPECT_NE(t.name, "P") << c.explained();
    CheckedProgram same = compileAndCheck(program(h, m, true), basteln(8, 1.0));
    EXPECT_TRUE(same.check.pass) << h << "x" << m << "\n" << same.check.failures;
    bool shared = false;  // one parallel loop over O1's and O2's nests
    for (const Remark& r : same.program.remarks.find("fuse-outer", RemarkKind::Applied))
      shared = shared || r.value("nests") == "S1 ; S2";
    EXPECT_TRUE(shared) << same.explained();
    EXPECT_TRUE(recomputedInTiles(same, "S0", "S2 S1")) << same.explained();
  }
}

// Alg. 4's identical case between nests that pre-tiling fusion keeps apart
// (the paper's self-attention: one normalized input feeds two projections).
// Q and K read the same rows of Nm: every K instance falls in one row tile
// of Q, so K runs in Q's tiles, each tile computes its rows of Nm once for
// both, and Nm is no full array. The tile loop stays parallel (K's elements
// are each written from one tile). With tiles along the columns too, K's
// instances would run in several tiles: the tile band is split after the
// rows, and K runs in each row of tiles. R reads rows from both ends of Nm,
// so some of its instances need two tiles of Q: refused, and Nm stays whole.
TEST(Basteln, Alg4IdenticalCaseRunsTheSecondOutputInTheTilesOfTheFirst) {
  const char* body =
      "def f(float(M,K) X, float(M) S, float(K,N) Wq, float(K,N) Wk) -> (Q, Kp) {\n"
      "  Nm(i,k) = X(i,k) * S(i)\n"
      "  Q(i,j) +=! Nm(i,k) * Wq(k,j)\n"
      "  Kp(i,j) +=! Nm(i,k) * Wk(k,j)\n}\n";
  const char* mirrored =
      "def f(float(M,K) X, float(M) S, float(K,N) Wq) -> (Q, R) {\n"
      "  Nm(i,k) = X(i,k) * S(i)\n"
      "  Q(i,j) +=! Nm(i,k) * Wq(k,j)\n"
      "  R(i,k) = Nm(i,k) - Nm(M - 1 - i, k)\n}\n";
  bool splitSeen = false;
  for (auto [m, k, n] : {std::tuple{1, 1, 1}, {13, 7, 5}, {17, 13, 33}, {127, 19, 7}}) {
    std::string sizes =
        "# sizes: M=" + std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n) + "\n";
    driver::CompileOptions rows = basteln(8, 1.0);  // (partial tiles count as whole in the estimate)
    rows.tiles = tile::parseTilePolicy("*: 8@L2", "test");
    driver::CompileOptions cubes = basteln(8, 1.0);
    for (bool rowsOnly : {true, false}) {
      CheckedProgram c = compileAndCheck(sizes + body, rowsOnly ? rows : cubes);
      EXPECT_TRUE(c.check.pass) << m << "x" << k << "x" << n << "\n" << c.check.failures;
      if (m == 1) continue;  // (one row: nothing is tiled)
      // Cubes are split where K's instances span several of them (after the rows, or the rows
      // and the columns), as the tile band's member order has it.
      // (Alg. 4's identical case: a nest "moved" into the consumer's tiles.)
      if (rowsOnly) {
        EXPECT_FALSE(decisions(c, RemarkKind::Applied, "S3 S4",
                               {{"action", "moved"}, {"consumer", "S2 S1"}, {"place", "tiles"}})
                         .empty())
            << c.explained();
        EXPECT_TRUE(recomputedInTiles(c, "S0", "S2 S1")) << c.explained();
      } else {
        EXPECT_FALSE(decisions(c, RemarkKind::Applied, "S3 S4", {{"action", "moved"}}).empty())
            << c.explained();
        EXPECT_FALSE(decisions(c, RemarkKind::Applied, "S0", {{"action", "recomputed"}}).empty())
            << c.explained();
      }
      const Values rowOfTiles{{"consumer", "S2 S1"}, {"place", "outer-tile-loops"}, {"tile_loops", "1"}};
      Values movedThere = rowOfTiles;
      movedThere.emplace_back("action", "moved");
      if (!decisions(c, RemarkKind::Applied, "S3 S4", movedThere).empty()) {
        splitSeen = true;
        // (Its slice is one per row of tiles: the place says so.)
        std::vector<Remark> slice = decisions(c, RemarkKind::Applied, "S0", rowOfTiles);
        ASSERT_FALSE(slice.empty()) << c.explained();
        EXPECT_EQ(slice[0].value("action"), "recomputed") << c.explained();
        EXPECT_EQ(slice[0].value("slice").rfind("8x", 0), 0u) << c.explained();
      }
      EXPECT_FALSE(serialized(c)) << c.explained();
      for (const auto& t : c.program.kernel.temporaries) EXPECT_NE(t.name, "Nm") << c.explained();
    }
    // One tile of rows for two threads (fixedCaches: 2 cores): K would run on one of them.
    driver::CompileOptions oneTile = rows;
    oneTile.tiles = tile::parseTilePolicy("*: 128@L2", "test");
    CheckedProgram single = compileAndCheck(sizes + body, oneTile);
    EXPECT_TRUE(single.check.pass) << m << "x" << k << "x" << n << "\n" << single.check.failures;
    EXPECT_TRUE(decisions(single, RemarkKind::Applied, "", {{"action", "moved"}, {"place", "tiles"}}).empty())
        << single.explained();
    if (m > 1) {
      EXPECT_FALSE(
          decisions(single, RemarkKind::Missed, "", {{"action", "not-moved"}, {"threads", "2"}}).empty())
          << single.explained();
    }
    CheckedProgram refused = compileAndCheck(sizes + mirrored, rows);
    EXPECT_TRUE(refused.check.pass) << m << "x" << k << "x" << n << "\n" << refused.check.failures;
    if (m > 8) {
      EXPECT_FALSE(decisions(refused, RemarkKind::Missed, "S3",
                             {{"action", "not-moved"},
                              {"consumer", "S2 S1"},
                              {"place", "tiles"},
                              {"reason", "some of its instances would run in several tiles"}})
                       .empty())
          << refused.explained();
    }
  }
  EXPECT_TRUE(splitSeen);
}

// Every tile of T4 reads the column T3(*, 0), so each recomputes A's column.
// Inside the copy, the copy's second loop is the constant 0: isl generates
// what lies under it once per statement, so A's buffer goes above the copy's
// loops, the tile's column slice (4 rows: T4's reduction is tiled by 4),
// which init, update and reader share.
TEST(Basteln, RecomputedColumnKeepsItsBufferAboveTheCopyLoops) {
  for (int n : {1, 5, 13}) {
    const std::string tc = "# sizes: N=" + std::to_string(n) +
                           "\n"
                           "def f(float(N,N) X) -> (T4) {\n"
                           "  A(i0, i1) +=! sigmoid(X(i1, r0)) where i0 in 0:N, i1 in 0:N, r0 in 0:N\n"
                           "  T3(i0, i1) = A(i0, i1) * 2\n"
                           "  T4(i0, i1) +=! fmax(T3(r0, 0), 0) where i0 in 0:N, i1 in 0:N, r0 in 0:N\n}\n";
    CheckedProgram c = compileAndCheck(tc, basteln(4, 1.0));
    EXPECT_TRUE(c.check.pass) << n << "\n" << c.check.failures;
    if (n == 1) continue;  // one iteration: nothing to recompute
    EXPECT_NE(c.program.dump.find("extension:"), std::string::npos) << n << "\n" << c.explained();
    EXPECT_TRUE(contracted(c, "A",
                           {{"shape", std::to_string(n) + "x" + std::to_string(n)},
                            {"buffer", "4x1"},
                            {"statements", "S2 S1 S0"},
                            {"recomputed", "true"}}))
        << n << "\n"
        << c.explained();
  }
}

// Alg. 2 tiles the outputs: a separable blur's vertical pass has too little
// reuse for Auto Tiling alone, but under basteln it gets row tiles (whole
// rows, at least one per core) into which the horizontal pass is recomputed
// with a two-row halo; the intermediate then lives per tile.
TEST(Basteln, StencilConsumerGetsFusionTiles) {
  auto blur = [](int h, int w) {
    return "# sizes: H=" + std::to_string(h) + " W=" + std::to_string(w) +
           "\n"
           "def blur(float(H, W) I) -> (B) {\n"
           "  BX(h, w) = (I(h, w) + I(h, w + 1) + I(h, w + 2)) / 3\n"
           "  B(h, w) = (BX(h, w) + BX(h + 1, w) + BX(h + 2, w)) / 3\n}\n";
  };
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  for (auto [h, w] : {std::pair{131, 1031}, {257, 509}}) {
    CheckedProgram c = compileAndCheck(blur(h, w), o);
    EXPECT_TRUE(c.check.pass) << h << "x" << w << "\n" << c.check.failures;
    EXPECT_TRUE(fusionTiled(c, {{"levels", "L2"}})) << c.explained();
    EXPECT_TRUE(recomputedInTiles(c, "S0", "S1")) << c.explained();
    for (const auto& t : c.program.kernel.temporaries) EXPECT_NE(t.name, "BX");
  }
  // Hyperthreads share L1 and L2 (sharedBy 2): L2 is still private to the core.
  target::Hardware smt = fixedCaches();
  for (auto& level : smt.memory)
    if (level.name != "DRAM") level.sharedBy = 2;
  CheckedProgram onSmt = compileAndCheck(blur(131, 1031), o, smt);
  EXPECT_TRUE(onSmt.check.pass) << onSmt.check.failures;
  EXPECT_TRUE(fusionTiled(onSmt, {{"levels", "L2"}})) << onSmt.explained();
  // A tile policy that covers the nest decides alone, even to leave it untiled.
  driver::CompileOptions untiled = o;
  untiled.tiles = tile::parseTilePolicy("S_1: *, *", "test");
  CheckedProgram byPolicy = compileAndCheck(blur(131, 1031), untiled);
  EXPECT_TRUE(byPolicy.check.pass) << byPolicy.check.failures;
  EXPECT_FALSE(byPolicy.has("fusion tiles")) << byPolicy.explained();
  // Without basteln the same nest stays untiled (streaming is as good).
  o.fusion = driver::Fusion::Smart;
  CheckedProgram smart = compileAndCheck(blur(131, 1031), o);
  EXPECT_TRUE(smart.check.pass) << smart.check.failures;
  EXPECT_FALSE(smart.has("fusion tiles")) << smart.explained();
}

// Harris's 3x3 sums over rows so wide that one row's data nearly fills the
// fusion tiles' share of L2: whole-row tiles of one or two rows would
// recompute two extra rows of the products per row (refused); tiles grown
// from short rows move less data, and the products, derivatives and their
// arrays then live in each tile.
TEST(Basteln, WideStencilRowsGetShorterFusionTiles) {
  const std::string tc = benchProgramBody("harris");
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  for (int h : {68, 101}) {  // 64 output rows in two tiles; 97 in four, the last a partial one
    CheckedProgram c = compileAndCheck("# sizes: H=" + std::to_string(h) + " W=4099\n" + tc, o);
    EXPECT_TRUE(c.check.pass) << h << "\n" << c.check.failures;
    EXPECT_TRUE(c.has("fusion tiles with whole rows: 1x4095")) << c.explained();
    EXPECT_FALSE(
        decisions(c, RemarkKind::Applied, "", {{"action", "recomputed"}, {"place", "tiles"}}).empty())
        << c.explained();
    for (const auto& t : c.program.kernel.temporaries)
      for (const char* gone : {"Ix", "Iy", "Ixx", "Iyy", "Ixy"}) EXPECT_NE(t.name, gone) << c.explained();
  }
}

// A chain of stencils: the middle stage is itself a consumer with fusion
// tiles, and is then recomputed, with its own producer, in the last stage's
// tiles; its own nest (left with no instances to run) loses its tiles.
TEST(Basteln, StencilChainRecomputesBothProducers) {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  for (auto [h, w] : {std::pair{131, 1031}, {263, 517}}) {
    CheckedProgram c = compileAndCheck("# sizes: H=" + std::to_string(h) + " W=" + std::to_string(w) +
                                           "\n"
                                           "def chain(float(H, W) I) -> (C) {\n"
                                           "  A(h, w) = I(h, w) * 2\n"
                                           "  B(h, w) = A(h, w) + A(h + 1, w)\n"
                                           "  C(h, w) = B(h, w) + B(h + 1, w)\n}\n",
                                       o);
    EXPECT_TRUE(c.check.pass) << h << "x" << w << "\n" << c.check.failures;
    EXPECT_FALSE(decisions(c, RemarkKind::Applied, "",
                           {{"action", "recomputed"}, {"consumer", "S2"}, {"place", "tiles"}})
                     .empty())
        << c.explained();
    for (const auto& t : c.program.kernel.temporaries) EXPECT_NE(t.name, "B") << c.explained();
  }
}

// Tiles made only for a fusion that the redundancy limit then refuses (a
// blur's row tiles recompute two rows of the horizontal pass each, more than
// a 5% limit) are taken out again: the consumer runs as without basteln.
TEST(Basteln, FusionTilesWithoutFusionAreRemoved) {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  o.bastelnRedundancy = 0.05;
  o.dumpAfter = "basteln";
  CheckedProgram c = compileAndCheck(
      "# sizes: H=131 W=1031\n"
      "def blur(float(H, W) I) -> (B) {\n"
      "  BX(h, w) = (I(h, w) + I(h, w + 1) + I(h, w + 2)) / 3\n"
      "  B(h, w) = (BX(h, w) + BX(h + 1, w) + BX(h + 2, w)) / 3\n}\n",
      o);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_TRUE(fusionTiled(c)) << c.explained();
  std::vector<Remark> refused = decisions(
      c, RemarkKind::Missed, "S0", {{"action", "not-recomputed"}, {"consumer", "S1"}, {"place", "tiles"}});
  ASSERT_FALSE(refused.empty()) << c.explained();
  EXPECT_TRUE(refused[0].has("redundancy")) << c.explained();
  EXPECT_FALSE(decisions(c, RemarkKind::Applied, "S1", {{"action", "tiles-removed"}}).empty())
      << c.explained();
  EXPECT_EQ(c.program.dump.find("fusion_tiles"), std::string::npos) << c.program.dump;
  EXPECT_EQ(c.program.dump.find("tile_L2"), std::string::npos) << c.program.dump;
}

// The equake case: a consumer without tiles (tiling off here; in the paper a
// nest whose loops cannot be tiled) gets its producers through an extension
// with no tile loops, under its outer loop: each iteration recomputes the
// slice it reads, and the intermediate lives per iteration.
TEST(Basteln, UntiledConsumerRecomputesProducersAtItsOuterLoop) {
  auto transposeThenMatmul = [](int b, int s, int nh, int d) {
    return "# sizes: B=" + std::to_string(b) + " S=" + std::to_string(s) + " NH=" + std::to_string(nh) +
           " D=" + std::to_string(d) +
           "\n"
           "def transbmm(float(B, S, NH, D) Q, float(B, NH, S, D) K) -> (O) {\n"
           "  T(b, n, i, d) = Q(b, i, n, d)\n"
           "  O(b, n, i, j) +=! T(b, n, i, d) * K(b, n, j, d)\n}\n";
  };
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  o.bastelnRedundancy = 1.0;  // these small transposes would stay in the caches anyway
  o.autoTiling = false;
  o.dumpAfter = "basteln";
  for (auto [b, s, nh, d] : {std::array{1, 7, 2, 1}, {3, 7, 5, 13}, {2, 13, 3, 127}}) {
    CheckedProgram c = compileAndCheck(transposeThenMatmul(b, s, nh, d), o);
    std::string shape =
        std::to_string(b) + "x" + std::to_string(s) + "x" + std::to_string(nh) + "x" + std::to_string(d);
    EXPECT_TRUE(c.check.pass) << shape << "\n" << c.check.failures;
    if (d == 1) continue;  // one-element rows: the matmul's loops are distributed apart
    std::vector<Remark> fused =
        decisions(c, RemarkKind::Applied, "S0",
                  {{"action", "recomputed"}, {"consumer", "S2 S1"}, {"place", "untiled-outer-loop"}});
    ASSERT_FALSE(fused.empty()) << shape << "\n" << c.explained();
    EXPECT_EQ(fused[0].value("slice"), "1x1x1x" + std::to_string(d)) << shape << "\n" << c.explained();
    // "about 0% recomputation"
    EXPECT_LT(std::stod(fused[0].value("redundancy")), 0.005) << shape << "\n" << c.explained();
    EXPECT_NE(c.program.dump.find("extension:"), std::string::npos) << c.program.dump;
    EXPECT_EQ(c.program.dump.find("tile_"), std::string::npos) << c.program.dump;
    for (const auto& t : c.program.kernel.temporaries) EXPECT_NE(t.name, "T") << c.explained();
  }
}

// The interpolate pyramid (bench/programs/interpolate.tc) with a 32 MiB L3:
// the output's tiles stop at the L2 level, where its producers' slices stay
// in the cache (whole-height L3 tiles left them 1 MiB each, none fused), and
// keep the four channels whole, split along the rows instead: every channel
// reads the alpha channel's slice of each level, which tiles of two channels
// each recomputed (57% of the first level's executions). The slices that
// floor divisions of several readers make have no fixed box: their buffers
// are sized by their widest span and placed at their least elements.
TEST(Basteln, PyramidOutputTilesKeepTheChannelsTheLevelsShare) {
  const std::string tc = benchProgramBody("interpolate");
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  target::Hardware withL3 = fixedCaches();
  target::MemoryLevel l3;
  l3.name = "L3";
  l3.capacityBytes = 32 << 20;
  l3.sharedBy = 2;
  l3.source = "configured";
  withL3.memory.insert(withL3.memory.end() - 1, l3);
  for (auto [h, w] : {std::array{1031, 997}, {1024, 1024}}) {
    CheckedProgram c = compileAndCheck(
        "# sizes: C=4 H=" + std::to_string(h) + " W=" + std::to_string(w) + "\n" + tc, o, withL3);
    std::string shape = std::to_string(h) + "x" + std::to_string(w);
    EXPECT_TRUE(c.check.pass) << shape << "\n" << c.check.failures;
    std::vector<Remark> dropped = remarksOf(c, "tile", RemarkKind::Applied, "", {{"dropped_above", "L2"}});
    ASSERT_EQ(dropped.size(), 1u) << shape << "\n" << c.explained();
    EXPECT_EQ(dropped[0].value("tiles").rfind("S_8: *, ", 0), 0u) << shape << "\n" << c.explained();
    std::vector<Remark> fused = decisions(
        c, RemarkKind::Applied, "S0", {{"action", "recomputed"}, {"consumer", "S9 S8"}, {"place", "tiles"}});
    ASSERT_FALSE(fused.empty()) << shape << "\n" << c.explained();
    EXPECT_EQ(fused[0].value("slice").rfind("4x", 0), 0u) << shape << "\n" << c.explained();
    // Without the spans D0x stayed a full array ("no loop keeps each of its values within one iteration").
    bool contractedD0x = false;
    for (const Remark& r : c.program.remarks.find("contract", RemarkKind::Applied, "D0x"))
      contractedD0x = contractedD0x || r.value("shape").rfind("4x" + std::to_string(h) + "x", 0) == 0;
    EXPECT_TRUE(contractedD0x) << shape << "\n" << c.explained();
    for (const auto& t : c.program.kernel.temporaries)
      EXPECT_NE(t.name, "D0x") << shape << "\n" << c.explained();
  }
}

// Harris: a tile needs the derivatives' slice as a union with a disjunct per
// read of each product. Kept so, isl split every row of the copy into loop
// pieces under an `if` and the copy ran scalar (3x slower); merged into one
// box it is one vector loop per row.
TEST(Basteln, SliceNeededByManyReadsIsOneBox) {
  std::string harris =
      "# sizes: H=45 W=70\n"
      "def harris(float(H, W) I) -> (R) {\n"
      "  Iy(h, w) = (I(h + 2, w) - I(h, w)) + (I(h + 2, w + 2) - I(h, w + 2))\n"
      "  Ix(h, w) = (I(h, w + 2) - I(h, w)) + (I(h + 2, w + 2) - I(h + 2, w))\n"
      "  Ixx(h, w) = Ix(h, w) * Ix(h, w)\n"
      "  Iyy(h, w) = Iy(h, w) * Iy(h, w)\n"
      "  Ixy(h, w) = Ix(h, w) * Iy(h, w)\n"
      "  Sxx(h, w) = Ixx(h, w) + Ixx(h, w + 1) + Ixx(h, w + 2) + Ixx(h + 1, w) + Ixx(h + 1, w + 1)"
      " + Ixx(h + 1, w + 2) + Ixx(h + 2, w) + Ixx(h + 2, w + 1) + Ixx(h + 2, w + 2)\n"
      "  Syy(h, w) = Iyy(h, w) + Iyy(h, w + 1) + Iyy(h, w + 2) + Iyy(h + 1, w) + Iyy(h + 1, w + 1)"
      " + Iyy(h + 1, w + 2) + Iyy(h + 2, w) + Iyy(h + 2, w + 1) + Iyy(h + 2, w + 2)\n"
      "  Sxy(h, w) = Ixy(h, w) + Ixy(h, w + 1) + Ixy(h, w + 2) + Ixy(h + 1, w) + Ixy(h + 1, w + 1)"
      " + Ixy(h + 1, w + 2) + Ixy(h + 2, w) + Ixy(h + 2, w + 1) + Ixy(h + 2, w + 2)\n"
      "  R(h, w) = Sxx(h, w) * Syy(h, w) - Sxy(h, w) * Sxy(h, w)\n}\n";
  driver::CompileOptions o = basteln(8, 0.4);
  o.tiles = tile::parseTilePolicy("*: 8@L2, 2048@L2", "test");
  CheckedProgram c = compileAndCheck(harris, o);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_FALSE(decisions(c, RemarkKind::Applied, "", {{"action", "recomputed"}, {"place", "tiles"}}).empty())
      << c.explained();
  std::string lir = lir::toString(c.program.kernel);
  EXPECT_EQ(lir.find("if ("), std::string::npos) << lir;
  std::istringstream lines(lir);
  for (std::string line; std::getline(lines, line);)  // every column loop is a vector loop
    if (line.find("for c3") != std::string::npos) {
      EXPECT_NE(line.find("vector<"), std::string::npos) << lir;
    }
}

// A reduction keeps its own nest: recomputed one row of its consumer at a
// time it would read its operands again for every row.
TEST(Basteln, UntiledConsumerDoesNotTakeAReductionPerIteration) {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  o.bastelnRedundancy = 1.0;  // not even at 100%
  o.autoTiling = false;
  CheckedProgram c = compileAndCheck(
      "# sizes: B=2 NH=3 S=13 D=7\n"
      "def bmmtrans(float(B, NH, S, S) P, float(B, NH, S, D) V) -> (O) {\n"
      "  C(b, n, i, d) +=! P(b, n, i, j) * V(b, n, j, d)\n"
      "  O(b, i, n, d) = C(b, n, i, d)\n}\n",
      o);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  EXPECT_FALSE(
      decisions(c, RemarkKind::Missed, "",
                {{"action", "not-recomputed"},
                 {"consumer", "S2"},
                 {"place", "untiled-outer-loop"},
                 {"reason", "it is a reduction, whose slices of one iteration would lose its tiles' reuse"}})
          .empty())
      << c.explained();
}

// A producer that already shares loops with its reader, whose values for one
// iteration of them fit in the caches (a contracted buffer), is not sliced:
// transbmm's transpose per batch and head (32 KiB) ran 24% slower recomputed
// per tile. At 100% it is sliced all the same.
TEST(Basteln, ProducersWhoseValuesStayInTheCachesAroundTheirReadersAreNotRecomputed) {
  const std::string tc = "# sizes: B=2 S=127 NH=3 D=64\n" + benchProgramBody("sg_transbmm");
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  CheckedProgram c = compileAndCheck(tc, o);
  EXPECT_TRUE(c.check.pass) << c.check.failures;
  std::vector<Remark> refused = decisions(
      c, RemarkKind::Missed, "S0",
      {{"action", "not-recomputed"},
       {"consumer", "S2 S1"},
       {"place", "tiles"},
       {"reason",
        "its values for one iteration of the loops around it and its readers (32 KiB) already stay in "
        "the caches"}});
  ASSERT_FALSE(refused.empty()) << c.explained();
  EXPECT_NEAR(std::stod(refused[0].value("bytes")) / 1024, 32, 0.5) << c.explained();
  o.bastelnRedundancy = 1.0;
  CheckedProgram all = compileAndCheck(tc, o);
  EXPECT_TRUE(all.check.pass) << all.check.failures;
  EXPECT_TRUE(recomputedInTiles(all, "S0", "S2 S1")) << all.explained();
}

TEST(Basteln, OptionsParseAndPrint) {
  EXPECT_DOUBLE_EQ(driver::parsePercent("25%", "x"), 0.25);
  EXPECT_DOUBLE_EQ(driver::parsePercent("100", "x"), 1.0);
  for (const char* bad : {"", "%", "101%", "-1%", "abc", "5%%"})
    EXPECT_THROW(driver::parsePercent(bad, "x"), UserError) << bad;
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  o.bastelnRedundancy = 0.5;
  EXPECT_EQ(o.toString(), "basteln-redundancy=50%");
}

}  // namespace
}  // namespace tessel::fuse
