// Numerical semantics shared by kernels and the interpreter: f32 arithmetic
// happens in float operation by operation, low-precision reductions
// accumulate in f32, long f32 reductions stay within tolerance.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/Checker.h"
#include "runtime/Runner.h"
#include "te/WidenAccumulators.h"
#include "tessel/builder.h"

namespace tessel {
namespace {

runtime::RunReport check(const std::string& tc, const std::map<std::string, int64_t>& sizes = {}) {
  front::Source src{"", tc};
  auto m = front::parse(src);
  auto all = front::defaultSizes(src);
  for (const auto& [n, v] : sizes) all[n] = v;
  te::Program p = front::lower(*m, "", all);
  driver::CompiledProgram cp = testing::compileFor(p, driver::CompileOptions{});
  runtime::RunOptions ro;
  ro.check = true;
  ro.seed = 2;
  return runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
}

TEST(Numerics, FloatArithmeticIsFloatEvenWhenWidenedAfterwards) {
  auto r = check(
      "# sizes: N=13\ndef f(float(N) A) -> (double(N) P, int32(N) Q) {\n"
      "  P(i) = double(A(i) * 100)\n  Q(i) = int32((A(i) + A(i)) * 1000)\n}\n");
  EXPECT_EQ(r.check, "pass");
  EXPECT_EQ(r.maxAbsErr, 0);  // bit-exact: no transcendental functions involved
}

TEST(Numerics, IntegersFromLibmMayDifferByOne) {
  te::Program p = front::testing::lowerText(
      "# sizes: N=4\ndef f(float(N) A) -> (int32(N) Q, int32(N) R) {\n"
      "  Q(i) = int32(exp(A(i)) * 1000)\n  R(i) = int32(A(i) * 1000)\n}\n");
  // One step of truncation, plus the float's own (tiny) error scaled by 1000.
  EXPECT_GE(runtime::toleranceFor(p, "Q").abs, 1);
  EXPECT_LT(runtime::toleranceFor(p, "Q").abs, 1.1);
  EXPECT_EQ(runtime::toleranceFor(p, "R").abs, 0);
  // A float reduction accumulates in double in the interpreter, f32 in kernels.
  te::Program r = front::testing::lowerText(
      "# sizes: N=4 K=9\ndef f(float(N, K) A) -> (int32(N) Q) {\n  T(i) +=! A(i, k)\n  Q(i) = int32(T(i) * "
      "1000)\n}\n");
  EXPECT_GE(runtime::toleranceFor(r, "Q").abs, 1);
  EXPECT_LT(runtime::toleranceFor(r, "Q").abs, 1.1);
}

TEST(Numerics, IndexRangesStayWithinInt32) {
  // The TC front end rejects such ranges itself; programs built in C++ meet range inference's check.
  te::builder::ProgramBuilder b("big");
  auto A = b.input("A", te::DType::F32, {4});
  auto O = b.output("O", te::DType::F32);
  auto i = b.index("i");
  b.define(O(i), A(0)).where(i, 0, int64_t{3} << 31);
  try {
    b.build();
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_NE(e.reason().find("beyond 32-bit integers"), std::string::npos) << e.reason();
  }
}

TEST(Numerics, LowPrecisionReductionsAccumulateInF32) {
  for (const char* type : {"bfloat16", "half"}) {
    auto r = check(std::string("# sizes: N=4 M=4000\ndef f(float(N, M) A) -> (") + type + "(N) O, " + type +
                   "(N) P) {\n  O(i) +=! " + type + "(A(i, j))\n  P(i) +=! " + type + "(A(i, j)) * " + type +
                   "(A(i, j))\n}\n");
    EXPECT_EQ(r.check, "pass") << type;
    for (const auto& o : r.outputs) EXPECT_TRUE(o.pass) << type << " " << o.tensor << ": " << o.message;
  }
  // Without `!` the widened accumulator starts from the tensor's values.
  auto r = check(
      "# sizes: N=3 M=500\ndef f(float(N, M) A) -> (bfloat16(N) O) {\n"
      "  O(i) = bfloat16(A(i, 0))\n  O(i) += bfloat16(A(i, j))\n}\n");
  EXPECT_EQ(r.check, "pass");
}

TEST(Numerics, WidenedProgramText) {
  te::Program p = front::testing::lowerText(
      "# sizes: N=2 M=3\ndef f(float(N, M) A) -> (half(N) O) {\n  O(i) +=! half(A(i, j))\n}\n");
  EXPECT_EQ(te::toString(te::widenLowPrecisionAccumulators(p)),
            "program f\n  input f32 A(2,3)\n  output f16 O(2)\n  temp f32 O_acc(2)\n"
            "  O_acc(i) +=! f16(A(i, j))   {i in 0:2, j in 0:3}\n"
            "  O(i) = f16(O_acc(i))   {i in 0:2}\n");
}

TEST(Numerics, LongF32ReductionWithinTolerance) {
  auto r = check("# sizes: N=1000000\ndef f(float(N) A) -> (O) {\n  O() +=! A(i) * A(i)\n}\n");
  EXPECT_EQ(r.check, "pass");
}

}  // namespace
}  // namespace tessel
