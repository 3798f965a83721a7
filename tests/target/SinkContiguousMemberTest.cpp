// sink-contiguous picks the innermost member by the cache lines an iteration
// touches: unit-stride accesses beat strided ones whatever the array sizes.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "driver/Compile.h"

namespace tessel::target::cpu {
namespace {

std::string explained(const std::string& tc) {
  driver::CompileOptions o;
  o.autoTiling = false;
  return driver::compile(front::testing::lowerText(tc), o).explanation;
}

TEST(SinkContiguousMember, MatmulWithALargeAKeepsTheOutputColumnInnermost) {
  // A (3072 x 1024) is the largest array, but k innermost would read B[k, n] with a stride.
  std::string e = explained(
      "# sizes: M=3072 N=128 K=1024\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(k,n)\n}\n");
  EXPECT_NE(e.find("member 1 made innermost (contiguous accesses, 0.375 cache lines per iteration)"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("innermost loop of the band over S1: vector\n"), std::string::npos) << e;
}

TEST(SinkContiguousMember, DotProductFormStaysWhenBothOperandsAreRows) {
  // C(m, n) += A(m, k) * B(n, k): k innermost reads both rows with unit stride.
  std::string e = explained(
      "# sizes: M=64 N=64 K=256\ndef f(float(M,K) A, float(N,K) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(n,k)\n}\n");
  EXPECT_EQ(e.find("made innermost"), std::string::npos) << e;
  EXPECT_NE(e.find("vector_reduction"), std::string::npos) << e;
}

TEST(SinkContiguousMember, RowReductionReadsRows) {
  // S(i) += A(i, j): j innermost streams A; i innermost would stride through it.
  std::string e = explained("# sizes: N=512\ndef f(float(N,N) A) -> (S) {\n  S(i) +=! A(i,j)\n}\n");
  EXPECT_EQ(e.find("made innermost"), std::string::npos) << e;
  EXPECT_NE(e.find("vector_reduction"), std::string::npos) << e;
}

}  // namespace
}  // namespace tessel::target::cpu
