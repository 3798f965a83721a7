// Extraction: domains, accesses and dependences against expected isl text.
#include <gtest/gtest.h>

#include "poly/Dependences.h"
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
  scop.deps = poly::computeDependences(scop);
  isl::union_map flow(isl.ctx(),
                      "{ S0[m, n] -> S1[m, n, 0] : 0 <= m < 4 and 0 <= n < 5;"
                      "  S1[m, n, k] -> S1[m, n, k + 1] : 0 <= m < 4 and 0 <= n < 5 and 0 <= k < 2 }");
  EXPECT_TRUE(scop.deps.flow.is_equal(flow)) << scop.deps.flow;
}

}  // namespace
}  // namespace tessel
