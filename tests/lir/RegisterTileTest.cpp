// The register tiler: full tiles of matmul-like nests are unrolled and jammed
// with their accumulators kept in registers (AVX-512 and AVX2), partial tiles
// keep the plain vector code, and both match the reference interpreter at
// sizes that leave partial tiles and partial vectors.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "../support/VectorIsa.h"
#include "driver/Compile.h"
#include "support/Remarks.h"
#include "tile/TilePolicy.h"

namespace tessel::lir {
namespace {

using testing::hostHas;
using testing::machineWith;

struct Compiled {
  driver::CompiledProgram cp;
  bool pass = true;
  std::string failures;
};

Compiled compileAndCheck(const std::string& tc, const std::string& isa, const std::string& tiles) {
  Compiled c;
  driver::CompileOptions o;
  if (!tiles.empty()) o.tiles = tile::parseTilePolicy(tiles, "test");
  c.cp = testing::compileFor(front::testing::lowerText(tc), o, machineWith(isa));
  testing::KernelCheck k = testing::checkAgainstInterpreter(c.cp);
  c.pass = k.pass;
  c.failures = k.failures;
  return c;
}

const char* const kMatmul = "def f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n";

std::string sized(int m, int n, int k, const char* body) {
  return "# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + "\n" +
         body;
}

constexpr int kAny = -1;

// Whether the register tiler made a tile of `rows` rows x `perRow`
// accumulator vectors, its last `remainder` rows a tile of their own, its
// vector loop `vectorLoop` in pieces of `pieceVectors` vectors (0: whole);
// kAny (""): any.
bool madeTile(const driver::CompiledProgram& cp, int rows, int perRow = kAny, int remainder = kAny,
              int pieceVectors = kAny, const std::string& vectorLoop = "") {
  for (const Remark& r : cp.remarks.find("register-tile", RemarkKind::Applied)) {
    if (!r.has("accumulators_per_row")) continue;  // rows jammed into a vector reduction loop
    auto is = [&](const char* name, int expected) {
      return expected == kAny || r.value(name) == std::to_string(expected);
    };
    int pieces = r.has("piece_vectors") ? std::stoi(r.value("piece_vectors")) : 0;
    if (is("rows", rows) && is("accumulators_per_row", perRow) && is("remainder_rows", remainder) &&
        (pieceVectors == kAny || pieces == pieceVectors) &&
        (vectorLoop.empty() || r.value("vector_loop") == vectorLoop))
      return true;
  }
  return false;
}

// Whether `rows` iterations were jammed into a vector reduction loop.
bool jammed(const driver::CompiledProgram& cp, int rows) {
  for (const Remark& r : cp.remarks.find("register-tile", RemarkKind::Applied))
    if (r.has("reduction_loop") && r.value("rows") == std::to_string(rows)) return true;
  return false;
}

// Whether a loop was left untiled for `reason`.
bool refused(const driver::CompiledProgram& cp, const std::string& reason) {
  for (const Remark& r : cp.remarks.find("register-tile", RemarkKind::Missed))
    if (r.value("reason") == reason) return true;
  return false;
}

class RegisterTile : public ::testing::TestWithParam<std::string> {};

// Tiles of 8 x 24 x 8: a row is 2 vectors on AVX-512 (the second masked to 8
// lanes) and 3 on AVX2; 13, 29 and 127 leave partial tiles (their rows are
// register-tiled by what divides them).
TEST_P(RegisterTile, MatmulFullAndPartialTiles) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const char* tiles = "S_0: 8@L1, 24@L1; S_1: 8@L1, 24@L1, 8@L1";
  for (auto [m, n, k] : {std::tuple{16, 24, 8}, {13, 29, 7}, {127, 48, 13}, {1, 24, 1}, {64, 72, 33}}) {
    Compiled c = compileAndCheck(sized(m, n, k, kMatmul), isa, tiles);
    EXPECT_TRUE(c.pass) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.failures;
    // Full tiles are isolated from partial ones and get registers (8 rows x 2 vectors on
    // AVX-512; on AVX2 3 vectors a row leave room for 4 rows). With K < 8 no tile is full.
    if (m >= 8 && k >= 8) {
      EXPECT_TRUE(madeTile(c.cp, isa == "avx512" ? 8 : 4)) << "M=" << m << " N=" << n << " K=" << k << "\n"
                                                           << c.cp.remarks.text();
    }
  }
}

// Auto Tiling's tiles, a batch loop outside, and a row count that only 3 divides.
TEST_P(RegisterTile, AutoTiledAndBatchedNests) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  Compiled mm = compileAndCheck(sized(128, 128, 128, kMatmul), isa, "");
  EXPECT_TRUE(mm.pass) << mm.failures;
  EXPECT_TRUE(madeTile(mm.cp, kAny)) << mm.cp.remarks.text();
  Compiled bmm = compileAndCheck(
      "# sizes: B=3 M=24 N=40 K=17\ndef f(float(B,M,K) X, float(B,K,N) Y) -> (Z) {\n  Z(b,m,n) +=! X(b,m,k) "
      "* "
      "Y(b,k,n)\n}\n",
      isa, "");
  EXPECT_TRUE(bmm.pass) << bmm.failures;
  Compiled three = compileAndCheck(sized(9, 16, 5, kMatmul), isa, "S_0: 9@L1, 16@L1; S_1: 9@L1, 16@L1, 5@L1");
  EXPECT_TRUE(three.pass) << three.failures;
  // 3 rows would keep too few accumulators: the most rows that fit, the rest a tile of its own.
  if (isa == "avx512") {
    EXPECT_TRUE(madeTile(three.cp, 8, 1, 1)) << three.cp.remarks.text();
  } else {
    EXPECT_TRUE(madeTile(three.cp, 6, 2, 3)) << three.cp.remarks.text();
  }
}

// 16 rows of 4 vectors (AVX-512): tiles of 4 rows, which divide 16, would
// load 32 vectors per step of k; 6 rows twice and the last 4 as a tile of
// their own load 28. Partial tiles (37 rows, 70 columns) stay correct.
TEST_P(RegisterTile, MostRowsThatFitWhenTheyLoadLess) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const char* tiles = "S_0: 16@L1, 64@L1; S_1: 16@L1, 64@L1, 32@L1";
  for (auto [m, n, k] : {std::tuple{16, 64, 32}, {37, 70, 33}}) {
    Compiled c = compileAndCheck(sized(m, n, k, kMatmul), isa, tiles);
    EXPECT_TRUE(c.pass) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.failures;
    if (isa == "avx512") {
      EXPECT_TRUE(madeTile(c.cp, 6, 4, 4)) << c.cp.remarks.text();
    }
  }
}

// A depthwise convolution's rows load their own inputs (only the weight is
// shared): more rows save no loads, so the tiles keep a height that divides
// the 56 output rows (4 rows of 4 vectors on AVX-512), with no smaller tile.
TEST_P(RegisterTile, DepthwiseRowsKeepADividingHeight) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  Compiled c = compileAndCheck(
      "# sizes: N=1 C=4 H=58 W=58 KH=3 KW=3\ndef f(float(N,C,H,W) I, float(C,KH,KW) Wt) -> (O) {\n"
      "  O(n,c,h,w) +=! I(n,c,h+kh,w+kw) * Wt(c,kh,kw)\n}\n",
      isa, "");
  EXPECT_TRUE(c.pass) << c.failures;
  if (isa == "avx512") {
    EXPECT_TRUE(madeTile(c.cp, 4, 4, 0, 0)) << c.cp.remarks.text();
    for (const Remark& r : c.cp.remarks.find("register-tile", RemarkKind::Applied))
      EXPECT_TRUE(r.value("remainder_rows").empty() || r.value("remainder_rows") == "0") << r.message;
  }
}

// C(m, n) += A(m, k) * B(n, k) vectorizes along k (a dot product per
// element): rows of n are jammed into one vector reduction loop, one
// accumulator each; partial tiles and partial vectors at odd sizes.
TEST_P(RegisterTile, DotProductsJammedIntoOneVectorReduction) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const char* nt = "def f(float(M,K) A, float(N,K) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(n,k)\n}\n";
  const char* tiles = "S_0: 4@L1, 8@L1; S_1: 4@L1, 8@L1, 40@L1";
  for (auto [m, n, k] : {std::tuple{4, 8, 40}, {7, 13, 43}, {12, 24, 100}, {1, 1, 1}}) {
    Compiled c = compileAndCheck(sized(m, n, k, nt), isa, tiles);
    EXPECT_TRUE(c.pass) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.failures;
    if (n >= 8) {
      EXPECT_TRUE(jammed(c.cp, 8)) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.cp.remarks.text();
    }
  }
}

// Rows up to 64 elements keep their accumulators in registers: 7 vectors of 8
// lanes (a 56-wide convolution row on AVX2; two rows of them run in pieces of
// 6 vectors, one row of 7 would be too few accumulators) as 4 of 16; 72
// elements do not.
TEST_P(RegisterTile, RowsOfUpTo64Elements) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  for (auto [m, n, k] : {std::tuple{6, 56, 13}, {5, 56, 8}, {4, 72, 3}}) {
    std::string columns = std::to_string(n) + "@L1";
    Compiled c = compileAndCheck(sized(m, n, k, kMatmul), isa,
                                 "S_0: 2@L1, " + columns + "; S_1: 2@L1, " + columns + ", 8@L1");
    EXPECT_TRUE(c.pass) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.failures;
    bool expected = n > 64            ? refused(c.cp, "a vector loop is longer than 64 elements")
                    : isa == "avx512" ? madeTile(c.cp, 2, 4)
                                      : madeTile(c.cp, 2, 6, 0, 6, "c5");
    EXPECT_TRUE(expected) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.cp.remarks.text();
  }
}

// Too few accumulators in a whole row (one row of 7 vectors on AVX2): the
// vector loop runs in pieces of fewer vectors with more rows, the rest of the
// row in a last piece (a partial vector at 49 and 55 columns).
TEST_P(RegisterTile, LongRowsRunInPiecesWithMoreRows) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  for (auto [m, n, k] : {std::tuple{6, 56, 9}, {13, 56, 5}, {7, 49, 4}, {12, 55, 11}, {6, 56, 1}}) {
    std::string columns = std::to_string(n) + "@L1";
    Compiled c = compileAndCheck(sized(m, n, k, kMatmul), isa,
                                 "S_0: 6@L1, " + columns + "; S_1: 6@L1, " + columns + ", 4@L1");
    EXPECT_TRUE(c.pass) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.failures;
    if (isa == "avx2" && k >= 4) {  // (K < 4 leaves no full tile)
      EXPECT_TRUE(madeTile(c.cp, 6, 2, 0, 2, "c5")) << "M=" << m << " N=" << n << " K=" << k << "\n"
                                                    << c.cp.remarks.text();
    }
  }
}

// Tiles of a prime number of rows (and 35 = 5 x 7): as many rows as fit,
// the last rows a smaller register tile of their own; 35 rows of 2 vectors
// run as 7 tiles of 5 on AVX2 (enough accumulators, no rest), 7 rows as
// pieces of one vector.
TEST_P(RegisterTile, PrimeRowCountsKeepTheirLastRowsInASmallerTile) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  for (int m : {17, 13, 7, 35}) {
    std::string rows = std::to_string(m) + "@L1";
    Compiled c = compileAndCheck(sized(m, 16, 19, kMatmul), isa,
                                 "S_0: " + rows + ", 16@L1; S_1: " + rows + ", 16@L1, 8@L1");
    EXPECT_TRUE(c.pass) << "M=" << m << "\n" << c.failures;
    if (isa == "avx2") {
      // (7 rows take the row in pieces of one vector instead: 7 accumulators, no rest.)
      bool expected = m == 35  ? madeTile(c.cp, 5, 2, 0, 0)
                      : m == 7 ? madeTile(c.cp, 7, 1, 0, 1, "c5")
                               : madeTile(c.cp, 6, 2, m % 6);
      EXPECT_TRUE(expected) << "M=" << m << "\n" << c.cp.remarks.text();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, RegisterTile, ::testing::Values("avx512", "avx2"));

// PolyBench's gemm (an initialization scaled from C0, then the scaled
// product) in tiles of 8 rows x 2 (AVX-512) or 4 (AVX2) vectors: the
// partial row tile's column loops and the last column tile's are bounded by
// a minimum known at run time, and keep their register tiles, sized for
// their most columns, the vectors past the end masked; every size is
// checked on two threads (the partial row tile's column tiles run in
// parallel). A bias + ReLU epilogue after the product likewise.
TEST_P(RegisterTile, PartialTilesOfBothDimensionsKeepTheirRegisterTiles) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const char* gemm =
      "def gemm(float(M,K) A, float(K,N) B, float(M,N) C0) -> (C) {\n"
      "  C(m,n) = 1.2 * C0(m,n)\n  C(m,n) += 1.5 * A(m,k) * B(k,n)\n}\n";
  const char* biasRelu =
      "def f(float(M,K) A, float(K,N) B, float(N) Bias) -> (C) {\n"
      "  T(m,n) +=! A(m,k) * B(k,n)\n  C(m,n) = fmax(T(m,n) + Bias(n), 0.0)\n}\n";
  const char* tiles = "S_0: 8@L1, 32@L1; S_1: 8@L1, 32@L1, 8@L1";
  for (const char* body : {gemm, biasRelu})
    for (auto [m, n, k] : {std::tuple{13, 45, 9}, {21, 70, 17}, {31, 33, 8}, {127, 67, 5}, {7, 13, 11}}) {
      std::string tc = sized(m, n, k, body);
      Compiled c = compileAndCheck(tc, isa, tiles);
      EXPECT_TRUE(c.pass) << tc << "\n" << c.failures;
      // Left untiled only where there is nothing to keep in registers: a
      // last k tile of one step (the AST has no k loop). A last column tile
      // of one column (no vector loop) jams its rows' scalar chains.
      for (const Remark& r : c.cp.remarks.find("register-tile", RemarkKind::Missed))
        EXPECT_TRUE(k % 8 == 1 && r.value("reason") == "its body holds no sequential loop")
            << tc << "\n"
            << c.cp.remarks.text();
      bool scalarJam = false;
      for (const Remark& r : c.cp.remarks.find("register-tile", RemarkKind::Applied))
        scalarJam = scalarJam || r.has("scalar_loops");
      EXPECT_EQ(scalarJam, n % 32 == 1) << tc << "\n" << c.cp.remarks.text();
      // Columns past a whole number of 32-column tiles leave a last column
      // tile bounded at run time in the partial row tile.
      bool masked = false, boundedRows = false;
      for (const Remark& r : c.cp.remarks.find("register-tile", RemarkKind::Applied)) {
        masked = masked || r.has("masked_vector_loops");
        boundedRows = boundedRows || r.has("most_rows");
      }
      EXPECT_EQ(masked, n > 32 && n % 32 != 0 && (m % 8 != 0 || k < 8)) << tc << "\n" << c.cp.remarks.text();
      // Under 8-deep tiles, 5 of K leave no full tile: every row loop is bounded at run time.
      EXPECT_EQ(boundedRows, k < 8) << tc << "\n" << c.cp.remarks.text();
    }
}

TEST(RegisterTileExplain, IsolatedPartialTilesAndDumps) {
  // One row of N is one vector: 8 rows of accumulators fit AVX2's 16 registers as AVX-512's 32.
  int n = hostHas("avx512") ? 16 : 8;
  std::string columns = std::to_string(n) + "@L1";
  driver::CompileOptions o;
  o.tiles = tile::parseTilePolicy("S_0: 8@L1, " + columns + "; S_1: 8@L1, " + columns + ", 8@L1", "test");
  o.dumpAfter = "register-tile";
  auto cp = testing::compileFor(front::testing::lowerText(sized(12, n, 8, kMatmul)), o);
  if (cp.kernel.vectorIsa.empty()) GTEST_SKIP() << "no vector ISA on this CPU";
  // 12 rows in tiles of 8: the full tile by 8 rows, the partial one (isolated: 4 rows) by 4.
  EXPECT_TRUE(madeTile(cp, 8)) << cp.remarks.text();
  EXPECT_TRUE(madeTile(cp, 4)) << cp.remarks.text();
  EXPECT_NE(cp.dump.find("registers>"), std::string::npos) << cp.dump;
  EXPECT_NE(cp.dump.find("unroll-jam"), std::string::npos) << cp.dump;
}

}  // namespace
}  // namespace tessel::lir
