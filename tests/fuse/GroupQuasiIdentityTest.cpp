// basteln-group (paper 001 Alg. 1): under --fusion basteln the nests of a
// schedule without fusion are grouped along quasi-identity dependences
// (Def. 4.1). The relation test on the paper's own examples, then programs:
// the conv pipeline of Fig. 1 gives ({S1}, {S2, S3, S4}), independent nests
// joined by a common consumer group together, a group never depends on
// itself through an outside nest, and a producer never loses its parallel
// outer loop to a consumer's reduction. Every kernel is checked against the
// interpreter at awkward shapes.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "../support/RowPrograms.h"
#include "fuse/GroupQuasiIdentity.h"
#include "poly/IslContext.h"

namespace tessel::fuse {
namespace {

using testing::CheckedProgram;
using testing::compileAndCheck;

bool quasi(isl::ctx ctx, const char* relation) { return isQuasiIdentity(isl::map(ctx, relation)); }

TEST(GroupQuasiIdentity, RelationTestFollowsDefinition41) {
  poly::IslContext isl;
  isl::ctx ctx = isl.ctx();
  // Eq. 7: a reduction's last iteration feeds its consumer.
  EXPECT_TRUE(quasi(ctx, "[KH, KW] -> { S3[h, w, KH - 1, KW - 1] -> S4[h, w] : KH > 0 and KW > 0 }"));
  // An init feeds the first update; the extra coordinate is on the right.
  EXPECT_TRUE(quasi(ctx, "{ S0[m, n] -> S1[m, n, 0] : 0 <= m < 8 and 0 <= n < 8 }"));
  EXPECT_TRUE(quasi(ctx, "{ A[i, j] -> B[i, j] : 0 <= i < 8 and 0 <= j < 8 }"));
  // Eq. 8: a stencil-like read.
  EXPECT_FALSE(quasi(ctx,
                     "{ S1[h, w] -> S3[hh, ww, h - hh, w - ww] : 0 <= hh < 8 and 0 <= ww < 8 and "
                     "0 <= h - hh < 3 and 0 <= w - ww < 3 }"));
  // A transpose, a shift, and an extra coordinate that is not a constant.
  EXPECT_FALSE(quasi(ctx, "{ A[i, j] -> B[j, i] : 0 <= i < 8 and 0 <= j < 8 }"));
  EXPECT_FALSE(quasi(ctx, "{ A[i] -> B[i - 1] : 1 <= i < 8 }"));
  EXPECT_FALSE(quasi(ctx, "{ A[i, j] -> B[i, j, k] : 0 <= i < 8 and 0 <= j < 8 and 0 <= k < 4 }"));
}

// Whether basteln-group made a remark of `kind` about `subject` (any when
// "") with all of `values`.
bool said(const CheckedProgram& c, RemarkKind kind, const std::string& subject,
          const std::vector<std::pair<std::string, std::string>>& values) {
  for (const Remark& r : c.program.remarks.find("basteln-group", kind, subject)) {
    bool all = true;
    for (const auto& [name, value] : values) all = all && r.value(name) == value;
    if (all) return true;
  }
  return false;
}

driver::CompileOptions basteln() {
  driver::CompileOptions o;
  o.fusion = driver::Fusion::Basteln;
  o.dumpAfter = "basteln-group";
  return o;
}

TEST(GroupQuasiIdentity, Fig1GroupsTheConvolutionWithItsReLU) {
  for (auto [h, w] : {std::pair{1, 1}, {7, 13}, {13, 7}, {127, 33}}) {
    const std::string tc = "# sizes: IH=" + std::to_string(h + 2) + " IW=" + std::to_string(w + 2) +
                           " KH=3 KW=3\n"
                           "def pipeline(float(IH,IW) X, float(KH,KW) K) -> (R) {\n"
                           "  A(h,w) = X(h,w) * 0.5\n"
                           "  C(h,w) +=! A(h+kh,w+kw) * K(kh,kw)\n"
                           "  R(h,w) = fmax(C(h,w), 0.0)\n}\n";
    CheckedProgram c = compileAndCheck(tc, basteln());
    EXPECT_TRUE(c.check.pass) << h << "x" << w << "\n" << c.check.failures;
    if (h == 1 && w == 1) continue;
    // (The init S1, the update S2 and the ReLU S3; statement names come in isl's order.)
    EXPECT_TRUE(said(c, RemarkKind::Applied, "S3 S2 S1",
                     {{"construction", "scheduler"}, {"scheduler", "isl"}, {"loops", "3"}}))
        << c.explained();
    EXPECT_TRUE(said(c, RemarkKind::Missed, "S0",
                     {{"group", "S1"}, {"reason", "a dependence is not quasi-identity"}}))
        << c.explained();
    // The dump shows the grouped tree: two children of the top sequence.
    EXPECT_NE(c.program.dump.find("sequence:"), std::string::npos) << c.program.dump;
  }
}

// Harris's three box sums do not depend on each other; their consumer joins
// them (isl orders such nests arbitrarily, so a skipped nest may join later).
TEST(GroupQuasiIdentity, IndependentNestsJoinThroughACommonConsumer) {
  for (int n : {1, 7, 13, 127}) {
    const std::string tc = "# sizes: N=" + std::to_string(n) + " M=" + std::to_string(n + 4) +
                           "\n"
                           "def f(float(N,M) X) -> (R) {\n"
                           "  A(i,j) = X(i,j) * 2.0\n"
                           "  B(i,j) = X(i,j) + 1.0\n"
                           "  C(i,j) = X(i,j) - 3.0\n"
                           "  R(i,j) = A(i,j) * B(i,j) + C(i,j)\n}\n";
    CheckedProgram c = compileAndCheck(tc, basteln());
    EXPECT_TRUE(c.check.pass) << n << "\n" << c.check.failures;
    if (n > 1) {
      EXPECT_FALSE(c.program.remarks.find("basteln-group", RemarkKind::Applied).empty()) << c.explained();
    }
    // One group: the band is the root's child.
    EXPECT_NE(c.program.dump.find("\nchild:\n  schedule:"), std::string::npos) << c.program.dump;
  }
}

// R reads A directly (identity) and through the stencil X: R joining A's
// group would put the group before and after X.
TEST(GroupQuasiIdentity, AGroupNeverDependsOnItselfThroughAnotherNest) {
  for (int n : {2, 7, 13, 127}) {
    const std::string tc = "# sizes: N=" + std::to_string(n) +
                           "\n"
                           "def f(float(N) I) -> (R) {\n"
                           "  A(i) = I(i) * 2.0\n"
                           "  X(i) = A(i) + A(i + 1) where i in 0:N-1\n"
                           "  R(i) = A(i) * X(i) where i in 0:N-1\n}\n";
    CheckedProgram c = compileAndCheck(tc, basteln());
    EXPECT_TRUE(c.check.pass) << n << "\n" << c.check.failures;
    EXPECT_TRUE(said(c, RemarkKind::Missed, "",
                     {{"reason", "it and the group depend on each other through other nests"}}))
        << c.explained();
  }
}

// Fusing the exponentials into the full sum would make their loop serial.
TEST(GroupQuasiIdentity, AParallelProducerStaysOutOfASerialReduction) {
  for (int n : {1, 13, 1031}) {
    const std::string tc = "# sizes: N=" + std::to_string(n) +
                           "\n"
                           "def f(float(N) X) -> (S) {\n"
                           "  E(i) = exp(X(i))\n"
                           "  S +=! E(i)\n}\n";
    CheckedProgram c = compileAndCheck(tc, basteln());
    EXPECT_TRUE(c.check.pass) << n << "\n" << c.check.failures;
    if (n > 1) {
      EXPECT_TRUE(
          said(c, RemarkKind::Missed, "", {{"reason", "the shared outer loop would carry a dependence"}}))
          << c.explained();
    }
  }
}

// A matmul with a bias: isl's band over the group keeps all three loops, the
// init and the bias placed at the ends of k, so tiling sees the whole nest.
TEST(GroupQuasiIdentity, MatmulWithBiasKeepsItsThreeLoopBand) {
  for (auto [m, n, k] : {std::tuple{1, 1, 1}, {7, 13, 5}, {33, 17, 64}}) {
    const std::string tc = "# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) +
                           " K=" + std::to_string(k) +
                           "\n"
                           "def f(float(M,K) A, float(K,N) B, float(N) C) -> (O) {\n"
                           "  P(i,j) +=! A(i,kk) * B(kk,j)\n"
                           "  O(i,j) = P(i,j) + C(j)\n}\n";
    CheckedProgram c = compileAndCheck(tc, basteln());
    EXPECT_TRUE(c.check.pass) << m << "x" << n << "x" << k << "\n" << c.check.failures;
    if (m > 1) {
      EXPECT_TRUE(said(c, RemarkKind::Applied, "",
                       {{"construction", "scheduler"}, {"scheduler", "isl"}, {"loops", "3"}}))
          << c.explained();
    }
  }
}

// Attention's scores are a matmul per head whose rows the row maximum
// shares: grouped over (b, n, i) or with the maximum's update over
// (b, n, i, j), each score would be a dot product; it stays apart, tiled in
// registers, and the maximum groups with its own init.
TEST(GroupQuasiIdentity, AContractionKeepsItsRegisterTilesOutOfARowGroup) {
  for (auto [s, d] : {std::pair{1, 1}, {7, 13}, {13, 5}, {127, 33}}) {
    const std::string tc = "# sizes: B=2 NH=1 S=" + std::to_string(s) + " D=" + std::to_string(d) +
                           "\n"
                           "def f(float(B,NH,S,D) Q, float(B,NH,S,D) K) -> (Mx) {\n"
                           "  Sc(b,n,i,j) +=! Q(b,n,i,dd) * K(b,n,j,dd)\n"
                           "  Mx(b,n,i) max=! Sc(b,n,i,j)\n}\n";
    CheckedProgram c = compileAndCheck(tc, basteln());
    EXPECT_TRUE(c.check.pass) << s << "x" << d << "\n" << c.check.failures;
    if (s < 7) continue;
    EXPECT_TRUE(said(
        c, RemarkKind::Missed, "",
        {{"reason", "contraction S1 would lose its register tiles in the group"}, {"contraction", "S1"}}))
        << c.explained();
    EXPECT_TRUE(said(c, RemarkKind::Applied, "S1 S0", {})) << c.explained();
    EXPECT_TRUE(said(c, RemarkKind::Applied, "S2 S3", {})) << c.explained();
  }
}

// Softmax's exponentials and row sum group over the rows only (the sum's
// init has one coordinate): isl schedules the three nests apart, so the band
// is the paper's, each statement's own loops below it without the row loop.
TEST(GroupQuasiIdentity, SharedCoordinatesBandDropsTheRepeatedLoops) {
  for (auto [n, d] : {std::pair{1, 1}, {7, 13}, {13, 127}, {3, 1031}}) {
    CheckedProgram c = compileAndCheck(testing::rowSizes(n, d) + testing::kRowSoftmax, basteln());
    EXPECT_TRUE(c.check.pass) << n << "x" << d << "\n" << c.check.failures;
    if (n == 1) continue;
    EXPECT_TRUE(said(c, RemarkKind::Applied, "", {{"construction", "shared-coordinates"}, {"loops", "1"}}))
        << c.explained();
    // Below the row band, e and the sum's update keep only their d loop.
    EXPECT_NE(c.program.dump.find("schedule: \"[{ S2[n, d] -> [(d)] }]\""), std::string::npos)
        << c.program.dump;
  }
}

}  // namespace
}  // namespace tessel::fuse
