// The vectorizer and the vector code it emits: elementwise loops, the four
// reductions, per-lane selects (on f32 and on index values), the vector math
// functions and broadcasts, f16 and bf16 loads, stores and casts, on
// AVX-512 (16 lanes) and AVX2 (8 lanes), at sizes that leave partial vectors,
// each checked against the reference interpreter.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/VectorIsa.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/Runner.h"
#include "support/Remarks.h"

namespace tessel::lir {
namespace {

using testing::hostHas;
using testing::machineWith;

struct VectorCase {
  const char* name;
  const char* tc;  // with a size N
};

const VectorCase kCases[] = {
    {"elementwise",
     "def f(float(N,N) A, float(N) b) -> (C) {\n  C(i,j) = fmax(A(i,j) * 2 + b(j), 0) - b(i)\n}\n"},
    {"row_sum", "def f(float(N,N) A) -> (S) {\n  S(i) +=! A(i,j) * A(i,j)\n}\n"},
    {"row_max", "def f(float(N,N) A) -> (S) {\n  S(i) max=! A(i,j)\n}\n"},
    {"row_min", "def f(float(N,N) A) -> (S) {\n  S(i) min=! A(i,j) - 1\n}\n"},
    {"row_product", "def f(float(N,N) A) -> (S) {\n  S(i) *=! 1 + 0.01 * A(i,j)\n}\n"},
    {"select",
     "def f(float(N,N) A, float(N,N) B) -> (C) {\n  C(i,j) = A(i,j) > B(i,j) ? A(i,j) : -B(i,j)\n}\n"},
    {"math",
     "def f(float(N,N) A) -> (C) {\n  C(i,j) = exp(A(i,j)) + tanh(A(i,j)) * sigmoid(A(i,j)) + erf(A(i,j)) + "
     "log(fabs(A(i,j)) + 1) + sqrt(fabs(A(i,j))) + rsqrt(fabs(A(i,j)) + 1)\n}\n"},
    {"matmul", "def f(float(N,N) A, float(N,N) B) -> (C) {\n  C(i,j) +=! A(i,k) * B(k,j)\n}\n"},
    // Integer comparisons per lane: data against the loop index, and guards on the index (the
    // guarded reads are masked, so the lanes past the edge never load).
    {"one_hot", "def f(int32(N) Idx) -> (O) {\n  O(i,j) = Idx(i) == j ? 1.0 : 0.0 where j in 0:N\n}\n"},
    {"index_guards",
     "def f(float(N,N) A) -> (C) {\n  C(i,j) = (j + 1 < N && j != i) ? A(i,j+1) : (j >= 2 ? A(i,j-2) : -1) "
     "where j in 0:N\n}\n"},
    // Stride-2 reads (a downsampling): deinterleaving loads, masked on the tail and under the guard.
    {"stride2",
     "def f(float(N,N) A) -> (C) {\n  C(i,j) = A(i, 2 * j) - 3 * (j < (N - 1) / 2 ? A(i, 2 * j + 1) : 0) "
     "where j in 0:(N + 1) / 2\n}\n"},
    // Quotient reads (an upsampling): lanes share elements, numerators may be negative (trunc).
    {"quotient",
     "def f(float(N,N) A) -> (C) {\n  C(i,j) = A(i, j / 2) + 2 * A(i, (j + 1) / 2) - A(i, (j + 3) / 4) + "
     "A(i, (j - 1) / 2) * (j >= 2 ? A(i, (j - 3) / 2) : 0.5) where j in 0:2 * N - 1\n}\n"},
    // 16-bit floats: converted as loaded (masked on the tail and under a guard), rounded as
    // stored and where cast; a row sum of half values accumulates in f32 lanes.
    {"half_bf16",
     "def f(half(N,N) A, bfloat16(N) b) -> (half(N,N) C, bfloat16(N,N) D, S) {\n"
     "  C(i,j) = half(fmax(A(i,j) * 2 + b(j), 0)) + (j >= 1 ? A(i, j - 1) : 0) where j in 0:N\n"
     "  D(i,j) = bfloat16(A(i,j) * 3) - b(i) * b(j)\n  S(i) +=! A(i,j) * float(half(b(j)))\n}\n"},
    {"softmax",
     "def f(float(N,N) X) -> (Y) {\n  m(i) max=! X(i,j)\n  e(i,j) = exp(X(i,j) - m(i))\n  s(i) +=! e(i,j)\n"
     "  Y(i,j) = e(i,j) / s(i)\n}\n"},
};

class Vectorize : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(Vectorize, MatchesTheInterpreter) {
  auto [index, isa] = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const VectorCase& c = kCases[index];
  for (int n : {1, 7, 13, 16, 17, 33, 127}) {
    te::Program p = front::testing::lowerText("# sizes: N=" + std::to_string(n) + "\n" + c.tc);
    driver::CompileOptions o;
    driver::CompiledProgram cp = testing::compileFor(p, o, machineWith(isa));
    // (At N=1 every loop has one iteration and disappears.)
    if (n > 1) {
      EXPECT_EQ(cp.kernel.vectorIsa, isa) << c.name << " N=" << n << "\n" << cp.remarks.text();
    }
    runtime::RunOptions ro;
    ro.check = true;
    ro.threads = 2;
    auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
    for (const auto& out : r.outputs) EXPECT_TRUE(out.pass) << c.name << " N=" << n << ": " << out.message;
  }
}

INSTANTIATE_TEST_SUITE_P(All, Vectorize,
                         ::testing::Combine(::testing::Range(0, static_cast<int>(std::size(kCases))),
                                            ::testing::Values("avx512", "avx2")),
                         [](const auto& info) {
                           return std::string(kCases[std::get<0>(info.param)].name) + "_" +
                                  std::get<1>(info.param);
                         });

// The reasons the vectorizer gave for loops it left scalar (not those it
// did not run in transpose blocks).
std::vector<std::string> scalarReasons(const driver::CompiledProgram& cp) {
  std::vector<std::string> reasons;
  for (const Remark& r : cp.remarks.find("vectorize", RemarkKind::Missed))
    if (!r.has("vector_loop")) reasons.push_back(r.value("reason"));
  return reasons;
}

TEST(Vectorize, ExplainsWhatStaysScalar) {
  // An indirect read (a gather) has no vector form yet.
  te::Program p = front::testing::lowerText(
      "# sizes: N=64\ndef f(float(N) A, int32(N) I) -> (C) {\n  C(i) = A(I(i))\n}\n");
  driver::CompiledProgram cp = testing::compileFor(p, {});
  std::vector<std::string> reasons = scalarReasons(cp);
  EXPECT_FALSE(reasons.empty()) << cp.remarks.text();
  for (const auto& reason : reasons) EXPECT_FALSE(reason.empty()) << cp.remarks.text();
  // A 2-wide window: two active lanes of 16 cost more than two scalar iterations.
  te::Program window = front::testing::lowerText(
      "# sizes: N=64\ndef f(float(N,2) A) -> (C) {\n  C(i) +=! A(i, k) where k in 0:2\n}\n");
  driver::CompiledProgram w = testing::compileFor(window, {});
  if (!w.kernel.vectorIsa.empty() || w.remarks.text().find("vector") != std::string::npos) {
    std::vector<std::string> windowReasons = scalarReasons(w);
    EXPECT_NE(std::find(windowReasons.begin(), windowReasons.end(), "it runs only 2 iterations"),
              windowReasons.end())
        << w.remarks.text();
  }
}

// Compiles `tc` at sizes M = N = n, expects `load` in its C, and checks the
// kernel against the interpreter on two threads.
void expectLoadAndMatch(const char* tc, int n, const std::string& load) {
  te::Program p =
      front::testing::lowerText("# sizes: M=" + std::to_string(n) + " N=" + std::to_string(n) + "\n" + tc);
  driver::CompiledProgram cp = testing::compileFor(p, {});
  EXPECT_NE(cp.cSource.find(load), std::string::npos) << tc << " N=" << n << cp.remarks.text();
  runtime::RunOptions ro;
  ro.check = true;
  ro.threads = 2;
  auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
  for (const auto& out : r.outputs) EXPECT_TRUE(out.pass) << tc << " N=" << n << ": " << out.message;
}

// Stride-2 reads in an elementwise loop, a reduction and a matmul with two
// columns (B(k, n) along k) use the deinterleaving loads, at odd and even sizes.
TEST(Vectorize, Stride2ReadsUseDeinterleavingLoads) {
  const char* const programs[] = {
      "def f(float(N,N) A) -> (C) {\n  C(i,j) = A(i, 2 * j) * 2 where j in 0:(N + 1) / 2\n}\n",
      "def f(float(N,N) A) -> (S) {\n  S(i) +=! A(i, 2 * k) where k in 0:(N + 1) / 2\n}\n",
      "def f(float(M,N) A, float(N,2) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n"};
  for (const char* tc : programs)
    for (int n : {16, 32, 33, 64}) expectLoadAndMatch(tc, n, "_load_stride2(&");
}

// Reads through a quotient of the vector loop's variable (upsampling's
// in(w / 2), in(w / 4)) in an elementwise loop and a reduction use the
// quotient loads, at odd and even sizes.
TEST(Vectorize, QuotientReadsUseUpsamplingLoads) {
  const char* const programs[] = {
      "def f(float(N,N) A) -> (C) {\n  C(i,j) = (A(i, j / 2) + A(i, (j + 1) / 2)) / 2 where j in 0:2 * N - "
      "1\n}\n",
      "def f(float(N,N) A) -> (S) {\n  S(i) +=! A(i, k / 4) where k in 0:4 * N\n}\n"};
  for (const char* tc : programs)
    for (int n : {16, 33, 64}) expectLoadAndMatch(tc, n, "_load_quotient(&");
}

// Whole vectors load and store unmasked (AVX2's masked stores are slow on
// AMD's cores); only the last, partial vector is masked. A stride-2 read of
// a whole vector stops at its last lane's element: C(j) = A(2j) over an odd
// N ends on A's last element.
TEST(Vectorize, WholeVectorsAreUnmasked) {
  const char* elementwise = "def f(float(M,N) A) -> (C) {\n  C(i,j) = A(i,j) * 2 + 1\n}\n";
  for (int n : {16, 37}) {
    expectLoadAndMatch(elementwise, n, "_load_full(&");
    expectLoadAndMatch(elementwise, n, "_store_full(&");
  }
  expectLoadAndMatch(elementwise, 37, "_store(&");  // the partial vector
  const char* downsample =
      "def f(float(M,N) A) -> (C) {\n  C(i,j) = A(i, 2 * j) where j in 0:(N + 1) / 2\n}\n";
  for (int n : {31, 33, 63}) expectLoadAndMatch(downsample, n, "_load_stride2_full(&");
}

// A read under a guard that keeps it inside its array (a padded stencil's
// border) may start its vector outside: the address is computed on integers
// (TESSEL_ADDRESS), never as an element of the buffer out of its bounds,
// which UBSan reports on local buffers (make test-asan).
TEST(Vectorize, GuardedLoadsTakeTheirAddressOnIntegers) {
  const char* tc = "def f(float(N,N) A) -> (C) {\n  C(i,j) = j >= 1 ? A(i, j - 1) : 0 where j in 0:N\n}\n";
  for (int n : {7, 16, 33}) expectLoadAndMatch(tc, n, "_load(TESSEL_ADDRESS(");
}

TEST(Vectorize, OffMeansScalarCode) {
  te::Program p =
      front::testing::lowerText("# sizes: N=64\ndef f(float(N) A) -> (C) {\n  C(i) = A(i) * 2\n}\n");
  driver::CompileOptions o;
  o.vectorize = false;
  driver::CompiledProgram cp = testing::compileFor(p, o);
  EXPECT_EQ(cp.kernel.vectorIsa, "");
  EXPECT_EQ(cp.cSource.find("tessel_v16_"), std::string::npos);
}

}  // namespace
}  // namespace tessel::lir
