// FLOP and byte counts of programs, and the compute/memory-bound decision.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "bench/Metrics.h"

namespace tessel::bench {
namespace {

using front::testing::lowerText;

TEST(BenchMetrics, MatmulIsTwoFlopsPerMultiplyAdd) {
  te::Program p = lowerText(
      "# sizes: M=13 N=7 K=5\n"
      "def matmul(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }\n");
  EXPECT_EQ(countFlops(p), 2 * 13 * 7 * 5);
  EXPECT_EQ(compulsoryBytes(p), 4 * (13 * 5 + 5 * 7 + 13 * 7));
  EXPECT_EQ(domainPoints(p), 13 * 7 * 5);
}

TEST(BenchMetrics, ConvolutionIgnoresPaddingGuardsAndIndexArithmetic) {
  // examples/conv2d.tc: stride 2, padding 1; the guard and the index
  // arithmetic are not floating-point work.
  te::Program p = lowerText(
      "# sizes: N=2 C=3 H=13 W=11 K=5 KH=3 KW=3\n"
      "def conv2d(float(N, C, H, W) I, float(K, C, KH, KW) Wt) -> (O) {\n"
      "    O(n, k, h, w) +=!\n"
      "        (h * 2 + kh - 1 >= 0 && h * 2 + kh - 1 < H && w * 2 + kw - 1 >= 0 && w * 2 + kw - 1 < W\n"
      "            ? I(n, c, h * 2 + kh - 1, w * 2 + kw - 1) : 0) * Wt(k, c, kh, kw)\n"
      "        where n in 0:N, h in 0:(H + 2 - KH) / 2 + 1, w in 0:(W + 2 - KW) / 2 + 1\n"
      "}\n");
  int64_t oh = (13 + 2 - 3) / 2 + 1, ow = (11 + 2 - 3) / 2 + 1;
  EXPECT_EQ(countFlops(p), 2 * 2 * 5 * oh * ow * 3 * 3 * 3);
}

TEST(BenchMetrics, ElementwiseCountsEachOperationOnData) {
  EXPECT_EQ(countFlops(lowerText("# sizes: M=7 N=13\n"
                                 "def relu(float(M, N) I) -> (O) { O(m, n) = fmax(I(m, n), 0) }\n")),
            7 * 13);
  EXPECT_EQ(countFlops(lowerText("# sizes: M=7 N=13\n"
                                 "def f(float(M, N) A, float(M, N) B, float(M, N) C) -> (O) {\n"
                                 "  O(m, n) = fmax(A(m, n) + B(m, n), 0) * C(m, n)\n"
                                 "}\n")),
            3 * 7 * 13);
  // Constant sub-expressions fold; a cast and a copy are no arithmetic.
  EXPECT_EQ(countFlops(lowerText("# sizes: N=7\n"
                                 "def g(float(N) A) -> (O) { O(i) = A(i) * (2.0 * 3.0) + float(i) }\n")),
            2 * 7);
  EXPECT_EQ(countFlops(lowerText("# sizes: M=7 N=13\n"
                                 "def t(float(M, N) I) -> (O) { O(n, m) = I(m, n) }\n")),
            0);
}

TEST(BenchMetrics, MultiStageProgramsAddTheirStages) {
  // softmax: max (1 per element), exp(x - max) (2), sum (1), divide (1).
  te::Program p = lowerText(
      "# sizes: N=7 D=13\n"
      "def softmax(float(N, D) X) -> (Y) {\n"
      "    mx(n) max=! X(n, d)\n"
      "    e(n, d) = exp(X(n, d) - mx(n))\n"
      "    s(n) +=! e(n, d)\n"
      "    Y(n, d) = e(n, d) / s(n)\n"
      "}\n");
  EXPECT_EQ(countFlops(p), 5 * 7 * 13);
  EXPECT_EQ(compulsoryBytes(p), 2 * 4 * 7 * 13);  // temporaries are not compulsory traffic
}

TEST(BenchMetrics, BoundFollowsIntensityAgainstBalance) {
  Roofline gemm = classify(2'000'000'000, 12'000'000, 200e9, 20e9);  // 167 FLOP/B vs 10
  EXPECT_EQ(gemm.bound, Bound::Compute);
  EXPECT_FALSE(gemm.balanceAssumed);
  EXPECT_DOUBLE_EQ(gemm.balance, 10.0);
  Roofline add = classify(1'000'000, 12'000'000, 200e9, 20e9);
  EXPECT_EQ(add.bound, Bound::Memory);
  Roofline unknown = classify(2'000'000'000, 12'000'000, 200e9, 0);
  EXPECT_TRUE(unknown.balanceAssumed);
  EXPECT_EQ(unknown.bound, Bound::Compute);
  EXPECT_STREQ(boundName(Bound::Memory), "memory");
}

TEST(BenchMetrics, ThreadsReachPerCoreFiguresTimesThreadsAtMostTheMachines) {
  EXPECT_EQ(reachableWith(1, 4, 10, 30), 10);  // one thread: one core's figure
  EXPECT_EQ(reachableWith(2, 4, 10, 30), 20);
  EXPECT_EQ(reachableWith(4, 4, 10, 30), 30);  // capped by the all-core figure
  EXPECT_EQ(reachableWith(8, 4, 10, 0), 40);   // no more cores than the machine has
  EXPECT_EQ(reachableWith(1, 4, 0, 30), 30);   // per core unknown: the whole machine's
  EXPECT_EQ(reachableWith(2, 4, 0, 0), 0);     // unknown
}

}  // namespace
}  // namespace tessel::bench
