#include <gtest/gtest.h>

#include <limits>

#include "runtime/Checker.h"
#include "tessel/builder.h"

namespace tessel::runtime {
namespace {

using namespace te;
using namespace te::builder;

Buffer buffer(DType t, std::vector<int64_t> shape, std::vector<double> values) {
  Buffer b(t, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) b.set(static_cast<int64_t>(i), values[i]);
  return b;
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(CheckerTest, IntegersAreExact) {
  Buffer want = buffer(DType::I32, {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(compareBuffers(want, want, {}).pass);
  Buffer got = buffer(DType::I32, {2, 3}, {1, 2, 3, 4, 6, 7});
  CheckResult r = compareBuffers(got, want, {});
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.firstBadIndex, 4);
  EXPECT_EQ(r.maxAbsErr, 1);
  EXPECT_NE(r.message.find("2 of 6"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("[1, 1]"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("got 6, want 5"), std::string::npos) << r.message;
}

TEST(CheckerTest, FloatsWithinTolerance) {
  Buffer want = buffer(DType::F32, {3}, {1, 100, 0});
  Tolerance tol{1e-5, 1e-4};
  EXPECT_TRUE(compareBuffers(buffer(DType::F32, {3}, {1.00005, 100.005, 5e-6}), want, tol).pass);
  CheckResult r = compareBuffers(buffer(DType::F32, {3}, {1, 100.02, 0}), want, tol);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.firstBadIndex, 1);
  EXPECT_NEAR(r.maxRelErr, 2e-4, 1e-6);
  EXPECT_FALSE(compareBuffers(buffer(DType::F32, {3}, {1, 100, 2e-5}), want, tol).pass);
}

TEST(CheckerTest, NaNAndInfinities) {
  Tolerance tol{1e-3, 1e-3};
  Buffer want = buffer(DType::F32, {3}, {kNaN, kInf, -kInf});
  EXPECT_TRUE(compareBuffers(buffer(DType::F32, {3}, {kNaN, kInf, -kInf}), want, tol).pass);
  EXPECT_FALSE(compareBuffers(buffer(DType::F32, {3}, {0, kInf, -kInf}), want, tol).pass);
  EXPECT_FALSE(compareBuffers(buffer(DType::F32, {3}, {kNaN, -kInf, -kInf}), want, tol).pass);
  EXPECT_FALSE(compareBuffers(buffer(DType::F32, {3}, {kNaN, 3e38, -kInf}), want, tol).pass);
  EXPECT_FALSE(compareBuffers(buffer(DType::F32, {1}, {kNaN}), buffer(DType::F32, {1}, {0}), tol).pass);
}

TEST(CheckerTest, MismatchedBuffers) {
  Buffer want(DType::F32, {2, 3});
  CheckResult r = compareBuffers(Buffer(DType::F32, {3, 2}), want, {1, 1});
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.message.find("f32(3,2)"), std::string::npos) << r.message;
  EXPECT_FALSE(compareBuffers(Buffer(DType::F64, {2, 3}), want, {1, 1}).pass);
}

// C(m, n) +=! A(m, k) * B(k, n) with the given K, ranges filled by hand; plus a
// temporary chain D = relu(C), E(m) +=! D(m, n).
Program chain(int64_t k, DType t) {
  ProgramBuilder b("chain");
  auto A = b.input("A", t, {4, k});
  auto B = b.input("B", t, {k, 8});
  auto C = b.temporary("C", t, {4, 8});
  auto D = b.output("D", t, {4, 8});
  auto E = b.output("E", t, {4});
  auto I = b.output("I", DType::I32, {4});
  auto J = b.output("J", DType::I32, {4});
  auto m = b.index("m"), n = b.index("n"), r = b.index("r");
  b.define(C(m, n), Reduction::Sum, true, A(m, r) * B(r, n));
  b.define(D(m, n), max(C(m, n), 0));
  b.define(E(m), Reduction::Sum, true, D(m, n));
  b.define(I(m), cast(DType::I32, E(m)));
  b.define(J(m), cast(DType::I32, A(m, 0) * 2));
  Program p = b.unchecked();
  p.stages[0].ranges = {{"m", {0, 4}}, {"n", {0, 8}}, {"r", {0, k}}};
  p.stages[0].reductionVars = {"r"};
  p.stages[1].ranges = {{"m", {0, 4}}, {"n", {0, 8}}};
  p.stages[2].ranges = {{"m", {0, 4}}, {"n", {0, 8}}};
  p.stages[2].reductionVars = {"n"};
  p.stages[3].ranges = {{"m", {0, 4}}};
  p.stages[4].ranges = {{"m", {0, 4}}};
  return p;
}

TEST(CheckerTest, ToleranceFollowsDTypeAndReductionLength) {
  Tolerance small = toleranceFor(chain(16, DType::F32), "D");
  Tolerance large = toleranceFor(chain(4096, DType::F32), "D");
  EXPECT_GT(large.abs, small.abs);
  EXPECT_GT(large.rel, small.rel);  // worst-case accumulation error is relative too
  // E accumulates 8 more terms on top of D's.
  EXPECT_GT(toleranceFor(chain(16, DType::F32), "E").abs, small.abs);
  // Integer results are exact, unless a float reduction feeds them (it
  // accumulates in double in the interpreter, in f32 in kernels).
  EXPECT_NEAR(toleranceFor(chain(16, DType::F32), "I").abs, 1, 1e-2);
  Tolerance exact = toleranceFor(chain(16, DType::F32), "J");
  EXPECT_EQ(exact.abs, 0);
  EXPECT_EQ(exact.rel, 0);
  EXPECT_EQ(toString(exact), "exact");
  // Narrower floats are looser.
  Tolerance f64 = toleranceFor(chain(16, DType::F64), "D");
  Tolerance f16 = toleranceFor(chain(16, DType::F16), "D");
  Tolerance bf16 = toleranceFor(chain(16, DType::BF16), "D");
  EXPECT_LT(f64.rel, small.rel);
  EXPECT_LT(f64.abs, small.abs);
  EXPECT_LT(small.rel, f16.rel);
  EXPECT_LT(f16.rel, bf16.rel);
  EXPECT_LT(f16.abs, bf16.abs);
}

// The absolute tolerance follows the magnitude of the terms, not of the
// result: terms of ~1e6 that cancel to 0 still carry their rounding error
// (fuzz seed 15164081789967802329).
TEST(CheckerTest, ToleranceScalesWithTheMagnitudeOfTheTerms) {
  Program p = chain(16, DType::F32);
  Tolerance assumed = toleranceFor(p, "D");  // magnitudes not given: ~1
  Tolerance unit = toleranceFor(p, "D", {{"A", 1}, {"B", 1}, {"C", 1}, {"D", 1}});
  EXPECT_DOUBLE_EQ(unit.abs, assumed.abs);
  Tolerance cancelling = toleranceFor(p, "D", {{"A", 1000}, {"B", 1000}, {"C", 0}, {"D", 0}});
  EXPECT_GT(cancelling.abs, 1e5 * unit.abs);
  EXPECT_EQ(cancelling.rel, unit.rel);
  // E sums 8 elements of D: its error carries D's.
  EXPECT_GT(toleranceFor(p, "E", {{"A", 1000}, {"B", 1000}}).abs, cancelling.abs);
}

}  // namespace
}  // namespace tessel::runtime
