// Conditions in vector code: a select's conjuncts that hold on every lane of
// a vector (from the ranges of the loops around it) are dropped, the ones
// that do not vary over the lanes become a scalar branch, and a guarded load
// whose other branch is zero is one masked load. The kernels match the
// reference interpreter at sizes that leave partial vectors and tiles.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "../support/VectorIsa.h"
#include "driver/Compile.h"
#include "lir/IndexRanges.h"
#include "support/Remarks.h"

namespace tessel::backend {
namespace {

using testing::hostHas;
using testing::machineWith;

// basteln's add+conv+ReLU sub-graph: a 3x3 convolution with zero padding 1.
const char* const kPaddedConv =
    "def f(float(N, C, H, W) X, float(N, C, H, W) Y, float(K, C, 3, 3) Wt) -> (O) {\n"
    "  A(n, c, h, w) = X(n, c, h, w) + Y(n, c, h, w)\n"
    "  Cv(n, k, h, w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W\n"
    "      ? A(n, c, h + kh - 1, w + kw - 1) : 0) * Wt(k, c, kh, kw)\n"
    "    where n in 0:N, h in 0:H, w in 0:W\n"
    "  O(n, k, h, w) = fmax(Cv(n, k, h, w), 0)\n"
    "}\n";

std::string sizes(int n, int c, int h, int w, int k) {
  return "# sizes: N=" + std::to_string(n) + " C=" + std::to_string(c) + " H=" + std::to_string(h) +
         " W=" + std::to_string(w) + " K=" + std::to_string(k) + "\n";
}

driver::CompiledProgram compileAndCheck(const std::string& tc, const std::string& isa) {
  driver::CompileOptions o;
  o.scheme.text = "none";  // the compiler's own vector code, not a micro-kernel (scheme auto)
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(tc), o, machineWith(isa));
  testing::KernelCheck k = testing::checkAgainstInterpreter(cp);
  EXPECT_TRUE(k.pass) << isa << "\n" << tc << k.failures;
  return cp;
}

class VectorConditions : public ::testing::TestWithParam<std::string> {};

// The row's interior vectors load without a mask under one scalar test of
// the row (h + kh - 1 in range); the first and last vectors keep the column
// test as their load's mask.
TEST_P(VectorConditions, PaddedConvolutionInteriorLoadsUnmasked) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  std::string v = isa == "avx512" ? "tessel_v16" : "tessel_v8";
  driver::CompiledProgram cp = compileAndCheck(sizes(2, 5, 13, 56, 4) + kPaddedConv, isa);
  // A register tile (not rows jammed into a vector reduction loop).
  bool registerTiled = false;
  for (const Remark& r : cp.remarks.find("register-tile", RemarkKind::Applied))
    registerTiled = registerTiled || r.has("accumulators_per_row");
  EXPECT_TRUE(registerTiled) << cp.remarks.text();
  EXPECT_NE(cp.cSource.find(") ? " + v + "_load_full(&"), std::string::npos) << cp.cSource;
  // The masked loads of the border vectors are not followed by a select on the same condition.
  EXPECT_EQ(cp.cSource.find(v + "_select(" + v + "_mask_and(" + v + "_cmp_i32"), std::string::npos);
  for (auto [n, c, h, w, k] :
       {std::tuple{1, 1, 1, 1, 1}, {1, 3, 7, 13, 2}, {2, 2, 5, 127, 3}, {1, 7, 3, 17, 5}})
    compileAndCheck(sizes(n, c, h, w, k) + kPaddedConv, isa);
}

// Conditions a vector loop's lanes decide differently, with else-branches
// that are not zero (the select stays), one that holds nowhere in a loop
// (the else-branch alone) and uniform ones (a scalar branch).
TEST_P(VectorConditions, MixedConditionsMatchTheInterpreter) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const char* program =
      "def f(float(M, N) A) -> (B, C, D) {\n"
      "  B(m, n) = (n >= 3 && m < 5 && n < N - 2) ? A(m, n) : 1.5\n"
      "  C(m, n) = (n >= N + 4) ? A(m, n) : -A(m, 0)\n"
      "  D(m, n) = (m >= 1 && m + 1 < M) ? A(m - 1, n) + A(m + 1, n) : 0 where m in 0:M\n"
      "}\n";
  for (auto [m, n] : {std::pair{1, 1}, {7, 13}, {13, 127}, {3, 64}, {2, 37}})
    compileAndCheck("# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) + "\n" + program, isa);
}

INSTANTIATE_TEST_SUITE_P(Isa, VectorConditions, ::testing::Values("avx512", "avx2"));

lir::Expr var(const std::string& name) { return lir::indexVar(name); }
lir::Expr num(int64_t v) { return lir::indexImm(v); }

TEST(IndexRanges, AffineExpressionsAndComparisons) {
  using te::BinaryOp;
  lir::IndexRanges r{{"w", {8, 15}}, {"kw", {0, 2}}};
  // w + kw - 1 takes 7..16.
  lir::Expr column =
      lir::indexBinary(BinaryOp::Sub, lir::indexBinary(BinaryOp::Add, var("w"), var("kw")), num(1));
  std::optional<lir::IndexRange> range = lir::rangeOf(column, r);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->lo, 7);
  EXPECT_EQ(range->hi, 16);
  EXPECT_EQ(lir::comparisonOutcome(lir::indexBinary(BinaryOp::Ge, column, num(0)), r),
            std::optional<bool>(true));
  EXPECT_EQ(lir::comparisonOutcome(lir::indexBinary(BinaryOp::Lt, column, num(7)), r),
            std::optional<bool>(false));
  EXPECT_EQ(lir::comparisonOutcome(lir::indexBinary(BinaryOp::Lt, column, num(16)), r), std::nullopt);
  // Products, min and floor division by a constant; an unknown name or a value past 32 bits says nothing.
  lir::Expr scaled = lir::indexFloorDiv(lir::indexBinary(BinaryOp::Mul, column, num(-3)), num(2));
  range = lir::rangeOf(scaled, r);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->lo, -24);
  EXPECT_EQ(range->hi, -11);
  EXPECT_FALSE(lir::rangeOf(lir::indexBinary(BinaryOp::Add, var("h"), num(1)), r).has_value());
  EXPECT_FALSE(lir::rangeOf(lir::indexBinary(BinaryOp::Mul, var("w"), num(int64_t{1} << 30)), r).has_value());
  // A loop from 0 while i < 3; one from w by 32 up to min(w + 96, 100); a negative step says nothing.
  auto loop = lir::forLoop("i", num(0), lir::indexBinary(BinaryOp::Lt, var("i"), num(3)), num(1),
                           lir::block({}), false);
  range = lir::loopRange(*loop, r);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->lo, 0);
  EXPECT_EQ(range->hi, 2);
  auto tiles = lir::forLoop(
      "t", var("w"),
      lir::indexBinary(
          BinaryOp::Le, var("t"),
          lir::indexBinary(BinaryOp::Min, lir::indexBinary(BinaryOp::Add, var("w"), num(96)), num(100))),
      num(32), lir::block({}), false);
  range = lir::loopRange(*tiles, r);
  ASSERT_TRUE(range.has_value());
  EXPECT_EQ(range->lo, 8);
  EXPECT_EQ(range->hi, 100);
  auto down = lir::forLoop("d", num(9), lir::indexBinary(BinaryOp::Ge, var("d"), num(0)), num(-1),
                           lir::block({}), false);
  EXPECT_FALSE(lir::loopRange(*down, r).has_value());
}

}  // namespace
}  // namespace tessel::backend
