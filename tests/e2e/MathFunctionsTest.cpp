// Every math builtin, in f32 and f64, compiled and checked against the
// interpreter (inputs in [-1, 1); shifted where a function needs it).
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/Runner.h"

namespace tessel {
namespace {

void expectMatches(const std::string& tc) {
  te::Program p = front::testing::lowerText(tc);
  driver::CompiledProgram cp = testing::compileFor(p, driver::CompileOptions{});
  runtime::RunOptions ro;
  ro.check = true;
  auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
  for (const auto& o : r.outputs) EXPECT_TRUE(o.pass) << o.tensor << ": " << o.message;
}

std::string mathProgram(const std::string& type) {
  return "# sizes: N=37\n"
         "def math(" +
         type + "(N) A, " + type +
         "(N) B) -> (O) {\n"
         "  O(i) = exp(A(i)) + log(2 + A(i)) + sqrt(1 + A(i)) + rsqrt(1.5 + A(i)) + tanh(A(i)) + "
         "sigmoid(A(i))\n"
         "    + erf(A(i)) + floor(4 * A(i)) + ceil(4 * A(i)) + fabs(A(i)) + sin(A(i)) + cos(A(i)) + "
         "tan(A(i))\n"
         "    + asin(A(i)) + acos(A(i)) + atan(A(i)) + sinh(A(i)) + cosh(A(i)) + asinh(A(i)) + acosh(2 + "
         "A(i))\n"
         "    + atanh(0.5 * A(i)) + exp2(A(i)) + expm1(A(i)) + log2(2 + A(i)) + log10(2 + A(i))\n"
         "    + log1p(A(i)) + cbrt(A(i)) + erfc(A(i)) + lgamma(2 + A(i)) + tgamma(2 + A(i)) + round(4 * "
         "A(i))\n"
         "    + trunc(4 * A(i)) + atan2(A(i), B(i)) + hypot(A(i), B(i)) + copysign(A(i), B(i))\n"
         "    + fdim(A(i), B(i)) + remainder(A(i), 0.3) + fmod(A(i), 0.3) + pow(2 + A(i), B(i))\n"
         "    + fmax(A(i), B(i)) + fmin(A(i), B(i)) + expf(A(i)) + fmaxf(A(i), B(i))\n"
         "}\n";
}

TEST(MathFunctions, F32) { expectMatches(mathProgram("float")); }
TEST(MathFunctions, F64) { expectMatches(mathProgram("double")); }
TEST(MathFunctions, OnIntegersComputeInFloat) {
  expectMatches(
      "# sizes: N=9\ndef f(int32(N) A) -> (O) {\n  O(i) = sin(A(i)) + hypot(A(i), 3) + cbrt(A(i))\n}\n");
}

}  // namespace
}  // namespace tessel
