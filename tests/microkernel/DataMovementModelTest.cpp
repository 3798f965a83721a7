// The data-movement model that ranks schemes.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "microkernel/DataMovementModel.h"

namespace tessel::microkernel {
namespace {

Contraction contractionOf(const std::string& tc) {
  Recognition r = recognizeContraction(front::testing::lowerText(tc), 0);
  EXPECT_TRUE(r.contraction) << r.whyNot;
  return *r.contraction;
}

BoundScheme bound(const Contraction& c, const std::string& scheme) {
  return bindScheme(c, parseScheme(scheme, "x"), vectorIsaNamed("avx512"));
}

TEST(DataMovementModel, FootprintsOfWindowsAndStrides) {
  Contraction c = contractionOf(
      "# sizes: HI=20 WI=41 C=8 K=16\n"
      "def f(float(HI, WI, C) I, float(3, 3, C, K) W) -> (O) {\n"
      "  O(h, w, k) +=! I(h + r, 2 * w + s, c) * W(r, s, c, k) where h in 0:18, w in 0:20\n}\n");
  Extents e = {{"h", 4}, {"w", 5}, {"k", 16}, {"r", 3}, {"s", 3}, {"c", 8}};
  EXPECT_DOUBLE_EQ(footprintElements(c.lhs, e), (4 + 3 - 1) * (2 * 4 + 3) * 8.0);
  EXPECT_DOUBLE_EQ(footprintElements(c.rhs, e), 3 * 3 * 8 * 16.0);
  EXPECT_DOUBLE_EQ(footprintElements(c.output, e), 4 * 5 * 16.0);
}

TEST(DataMovementModel, WhatFitsMovesOnceAndBlockingMovesLess) {
  Contraction c = contractionOf(
      "# sizes: M=64 N=256 K=512\n"
      "def mm(float(M, K) A, float(K, N) B) -> (C) {\n  C(m, n) +=! A(m, k) * B(k, n)\n}\n");
  std::vector<CacheLevel> huge = {{"L1", 1e9, 1}};
  DataMovement all = estimateDataMovement(bound(c, "R_m, R_n, T_{512,k}, U_{4,m}, U_{1,n}, V_n"), huge);
  EXPECT_DOUBLE_EQ(all.bytesPerLevel[0], 4.0 * (2 * 64 * 256 + 64 * 512 + 512 * 256));
  EXPECT_DOUBLE_EQ(all.accumulationLength, 512);
  // A 48 KiB cache: with k innermost over all of K, B's columns are fetched
  // again for every row block; with K blocked outside, a block of B stays.
  std::vector<CacheLevel> l1 = {{"L1", 48 * 1024, 1}};
  DataMovement streaming = estimateDataMovement(bound(c, "R_m, R_n, T_{512,k}, U_{4,m}, U_{1,n}, V_n"), l1);
  DataMovement blocked =
      estimateDataMovement(bound(c, "T_{8,k}, T_{16,n}, R_m, T_{64,k}, U_{4,m}, U_{1,n}, V_n"), l1);
  EXPECT_LT(blocked.bytesPerLevel[0], streaming.bytesPerLevel[0]);
  EXPECT_DOUBLE_EQ(blocked.accumulationLength, 64);
  // Compositions are averaged over their bindings.
  DataMovement composed = estimateDataMovement(
      bound(c, "R_n, lambda_m a.[(2,6),(4,13)], T_{512,k}, U_{a,m}, U_{1,n}, V_n"), huge);
  EXPECT_DOUBLE_EQ(composed.bytesPerLevel[0], all.bytesPerLevel[0]);
}

}  // namespace
}  // namespace tessel::microkernel
