// Extraction: domains, accesses and dependences against expected isl text.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "poly/ExtractScop.h"
#include "poly/IslContext.h"

namespace tessel {
namespace {

te::Program matmul(int64_t M, int64_t N, int64_t K) {
  te::Program p;
  p.name = "matmul";
  p.tensors = {{"A", te::DType::F32, {M, K}, true, te::TensorRole::Input, {}},
               {"B", te::DType::F32, {K, N}, true, te::TensorRole::Input, {}},
               {"C", te::DType::F32, {M, N}, true, te::TensorRole::Output, {}}};
  te::Stage s;
  s.output = "C";
  s.indices = {"m", "n"};
  s.reduction = te::Reduction::Sum;
  s.init = true;
  s.rhs = te::binary(te::BinaryOp::Mul, te::access("A", te::DType::F32, {te::var("m"), te::var("k")}),
                     te::access("B", te::DType::F32, {te::var("k"), te::var("n")}));
  s.reductionVars = {"k"};
  s.ranges = {{"m", {0, M}}, {"n", {0, N}}, {"k", {0, K}}};
  p.stages = {s};
  return p;
}

TEST(ExtractScop, MatmulDomainsAccessesAndDependences) {
  poly::IslContext isl;
  te::Program p = matmul(4, 5, 3);
  poly::Scop scop = poly::extractScop(isl.ctx(), p);
  ASSERT_EQ(scop.statements.size(), 2u);
  EXPECT_EQ(scop.statements[0].kind, poly::StatementKind::Init);
  EXPECT_EQ(scop.statements[1].kind, poly::StatementKind::Update);
  EXPECT_TRUE(
      scop.statements[0].domain.is_equal(isl::set(isl.ctx(), "{ S0[m, n] : 0 <= m < 4 and 0 <= n < 5 }")));
  EXPECT_TRUE(scop.statements[1].domain.is_equal(
      isl::set(isl.ctx(), "{ S1[m, n, k] : 0 <= m < 4 and 0 <= n < 5 and 0 <= k < 3 }")));
  isl::union_map reads(isl.ctx(),
                       "{ S1[m, n, k] -> A[m, k] : 0 <= m < 4 and 0 <= n < 5 and 0 <= k < 3;"
                       "  S1[m, n, k] -> B[k, n] : 0 <= m < 4 and 0 <= n < 5 and 0 <= k < 3;"
                       "  S1[m, n, k] -> C[m, n] : 0 <= m < 4 and 0 <= n < 5 and 0 <= k < 3 }");
  EXPECT_TRUE(scop.reads.is_equal(reads));
  isl::union_map flow(isl.ctx(),
                      "{ S0[m, n] -> S1[m, n, 0] : 0 <= m < 4 and 0 <= n < 5;"
                      "  S1[m, n, k] -> S1[m, n, k + 1] : 0 <= m < 4 and 0 <= n < 5 and 0 <= k < 2 }");
  EXPECT_TRUE(scop.deps.flow.is_equal(flow)) << scop.deps.flow;
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

struct Extracted {
  poly::IslContext isl;
  te::Program program;
  poly::Scop scop;
};

std::unique_ptr<Extracted> extract(const std::string& tc) {
  auto e = std::make_unique<Extracted>();
  e->program = front::testing::lowerText(tc);
  e->scop = poly::extractScop(e->isl.ctx(), e->program);
  return e;
}

isl::union_map umap(const Extracted& e, const std::string& text) { return isl::union_map(e.isl.ctx(), text); }

TEST(ExtractScop, StridedWindowReads) {
  auto e = extract("# sizes: W=9\ndef f(float(W) I) -> (O) {\n  O(h) +=! I(2 * h + k) where k in 0:3\n}\n");
  // h is inferred so that 2h + k stays below 9 for every k: 0 <= h <= 3.
  EXPECT_TRUE(e->scop.reads.is_equal(umap(*e,
                                          "{ S1[h, k] -> I[2h + k] : 0 <= h <= 3 and 0 <= k <= 2;"
                                          "  S1[h, k] -> O[h] : 0 <= h <= 3 and 0 <= k <= 2 }")))
      << e->scop.reads;
  EXPECT_TRUE(e->scop.writes.is_equal(
      umap(*e, "{ S0[h] -> O[h] : 0 <= h <= 3; S1[h, k] -> O[h] : 0 <= h <= 3 and 0 <= k <= 2 }")))
      << e->scop.writes;
}

TEST(ExtractScop, GuardedReadIsClippedToTheTensor) {
  auto e = extract(
      "# sizes: H=5\ndef f(float(H) I) -> (O) {\n"
      "  O(h) +=! (h + k - 1 >= 0 && h + k - 1 < H) ? I(h + k - 1) : 0 where h in 0:H, k in 0:3\n}\n");
  isl::union_map readsOfI = e->scop.reads.intersect_range(isl::union_set(e->isl.ctx(), "{ I[x] }"));
  EXPECT_TRUE(readsOfI.is_equal(
      umap(*e, "{ S1[h, k] -> I[h + k - 1] : 0 <= h <= 4 and 0 <= k <= 2 and 1 <= h + k <= 5 }")))
      << readsOfI;
  EXPECT_TRUE(e->scop.checkedReads.empty());
}

TEST(ExtractScop, IndirectReadIsOverApproximated) {
  auto e = extract(
      "# sizes: B=2 R=3 N=4\ndef lut(float(B, R) LUT, int32(B, N) I) -> (O) {\n  O(b, n) +=! LUT(I(b, n), "
      "r)\n}\n");
  isl::union_map readsOfLut = e->scop.reads.intersect_range(isl::union_set(e->isl.ctx(), "{ LUT[x, y] }"));
  EXPECT_TRUE(readsOfLut.is_equal(
      umap(*e, "{ S1[b, n, r] -> LUT[x, r] : 0 <= b <= 1 and 0 <= n <= 3 and 0 <= r <= 2 and 0 <= x <= 1 }")))
      << readsOfLut;
  EXPECT_EQ(e->scop.checkedReads.size(), 1u);  // the kernel checks what isl cannot follow
}

// Quotients and remainders of index expressions by constants are exact in
// the read relation, truncating toward zero as kernels compute them: at
// i = 4, (i - 5) / 2 is 0, not floor(-1/2) = -1.
TEST(ExtractScop, QuasiAffineReadsAreExactAndTruncate) {
  auto e = extract(
      "# sizes: N=9\ndef f(float(N) X) -> (O, P) {\n"
      "  O(i) = X((i - 5) / 2 + 3) where i in 0:N\n  P(i) = X(i % 4) + X(2 * (i / 3)) where i in 0:N\n}\n");
  isl::union_set x(e->isl.ctx(), "{ X[x] }");
  isl::union_map reads = e->scop.reads.intersect_range(x);
  EXPECT_TRUE(reads.intersect_domain(isl::union_set(e->isl.ctx(), "{ S0[4] }"))
                  .is_equal(umap(*e, "{ S0[4] -> X[3] }")))
      << reads;
  EXPECT_TRUE(reads.intersect_domain(isl::union_set(e->isl.ctx(), "{ S0[0] }"))
                  .is_equal(umap(*e, "{ S0[0] -> X[1] }")))
      << reads;
  EXPECT_TRUE(reads.intersect_domain(isl::union_set(e->isl.ctx(), "{ S1[i] }"))
                  .is_equal(umap(*e,
                                 "{ S1[i] -> X[i mod 4] : 0 <= i < 9; "
                                 "  S1[i] -> X[2 * floor(i / 3)] : 0 <= i < 9 }")))
      << reads;
  EXPECT_TRUE(e->scop.checkedReads.empty());
}

// Remainders of negative numerators keep their sign (C), nested quotients
// truncate at each step, quotients scale, and dividing by 1 is the identity.
// Index variables named like the quotients isl sees do not clash with them.
TEST(ExtractScop, QuasiAffineCornerCases) {
  auto e = extract(
      "# sizes: N=9\ndef f(float(N) X) -> (O) {\n"
      "  O(q0_) = X((q0_ - 5) % 4 + 3) + X((q0_ - 5) / 2 / 2 + 1) + X(-3 * (q0_ / 4) + 6) + X(q0_ % 1) + "
      "X(q0_ / 1) where q0_ in 0:N\n}\n");
  isl::union_map reads = e->scop.reads.intersect_range(isl::union_set(e->isl.ctx(), "{ X[x] }"));
  // At q0_ = 0: -5 % 4 = -1 -> 2; -5 / 2 = -2, / 2 = -1 -> 0; 0 -> 6; 0; 0.
  EXPECT_TRUE(reads.intersect_domain(isl::union_set(e->isl.ctx(), "{ S0[0] }"))
                  .is_equal(umap(*e, "{ S0[0] -> X[2]; S0[0] -> X[0]; S0[0] -> X[6] }")))
      << reads;
  // At q0_ = 2: -3 % 4 = -3 -> 0; -3 / 2 = -1, / 2 = 0 -> 1; 6; 0; 2.
  EXPECT_TRUE(reads.intersect_domain(isl::union_set(e->isl.ctx(), "{ S0[2] }"))
                  .is_equal(umap(*e, "{ S0[2] -> X[0]; S0[2] -> X[1]; S0[2] -> X[6]; S0[2] -> X[2] }")))
      << reads;
  // At q0_ = 8: 3 % 4 = 3 -> 6; 3 / 2 = 1, / 2 = 0 -> 1; -6 + 6 = 0; 0; 8.
  EXPECT_TRUE(reads.intersect_domain(isl::union_set(e->isl.ctx(), "{ S0[8] }"))
                  .is_equal(umap(*e, "{ S0[8] -> X[6]; S0[8] -> X[1]; S0[8] -> X[0]; S0[8] -> X[8] }")))
      << reads;
  EXPECT_TRUE(e->scop.checkedReads.empty());
}

// A quotient whose int32 evaluation might wrap stays over-approximated.
TEST(ExtractScop, QuasiAffineReadThatMightWrapIsOverApproximated) {
  auto e = extract(
      "# sizes: N=4\ndef f(float(N) X) -> (O) {\n  O(i) = X((i * 1073741824 * 4) / 2 + i) where i in "
      "0:N\n}\n");
  isl::union_map reads = e->scop.reads.intersect_range(isl::union_set(e->isl.ctx(), "{ X[x] }"));
  EXPECT_TRUE(reads.is_equal(umap(*e, "{ S0[i] -> X[x] : 0 <= i < 4 and 0 <= x < 4 }"))) << reads;
  EXPECT_EQ(e->scop.checkedReads.size(), 1u);
}

TEST(ExtractScop, ProducerConsumerAndFalseDependences) {
  auto e = extract(
      "# sizes: N=4\ndef f(float(N) A) -> (O) {\n"
      "  T(i) = A(i) * 2\n  O(i) = T(3 - i)\n  O(i) = O(i) + 1\n}\n");
  ASSERT_EQ(e->scop.statements.size(), 3u);
  EXPECT_TRUE(e->scop.deps.flow.is_equal(
      umap(*e, "{ S0[i] -> S1[3 - i] : 0 <= i <= 3; S1[i] -> S2[i] : 0 <= i <= 3 }")))
      << e->scop.deps.flow;
  // S2 rewrites what S1 wrote (output) after S2's own read (anti within S2 is the same instance: none).
  EXPECT_TRUE(e->scop.deps.output.is_equal(umap(*e, "{ S1[i] -> S2[i] : 0 <= i <= 3 }")))
      << e->scop.deps.output;
  EXPECT_TRUE(e->scop.deps.anti.is_empty()) << e->scop.deps.anti;
}

TEST(ExtractScop, TemporaryIsAnArrayLikeAnyOther) {
  auto e = extract("# sizes: N=3\ndef f(float(N) A) -> (O) {\n  T(i) = exp(A(i))\n  O(i) = T(i) / 2\n}\n");
  EXPECT_EQ(e->program.temporaries().size(), 1u);
  EXPECT_TRUE(e->scop.deps.flow.is_equal(umap(*e, "{ S0[i] -> S1[i] : 0 <= i <= 2 }")));
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// Index variables named like the dimensions extraction adds, or like isl
// keywords, must not change the relations.
TEST(ExtractScop, IndexNamesCannotCaptureIslNames) {
  auto e = extract("# sizes: N=4\ndef f(float(N) A) -> (O) {\n  O(a0_) = A(a0_) where a0_ in 0:3\n}\n");
  EXPECT_TRUE(e->scop.reads.is_equal(umap(*e, "{ S0[x] -> A[x] : 0 <= x <= 2 }"))) << e->scop.reads;
  auto k = extract(
      "# sizes: N=4\ndef f(float(N) A) -> (O) {\n  O(floord) +=! A(i0_) where i0_ in 0:N, floord in "
      "0:2\n}\n");
  EXPECT_TRUE(k->scop.reads.intersect_range(isl::union_set(k->isl.ctx(), "{ A[x] }"))
                  .is_equal(umap(*k, "{ S1[a, b] -> A[b] : 0 <= a <= 1 and 0 <= b <= 3 }")))
      << k->scop.reads;
}

}  // namespace
}  // namespace tessel
