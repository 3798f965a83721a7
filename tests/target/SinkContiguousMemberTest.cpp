// sink-contiguous picks the innermost member by the cache lines an iteration
// touches: unit-stride accesses beat strided ones whatever the array sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "../support/VectorIsa.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "runtime/Runner.h"

namespace tessel::target::cpu {
namespace {

Remarks explained(const std::string& tc) {
  driver::CompileOptions o;
  o.autoTiling = false;
  return testing::compileFor(front::testing::lowerText(tc), o).remarks;
}

// Whether sink-contiguous made `member` the innermost of a band.
bool madeInnermost(const Remarks& e, int member) {
  std::vector<Remark> sunk = e.find("sink-contiguous", RemarkKind::Applied);
  return std::any_of(sunk.begin(), sunk.end(),
                     [&](const Remark& r) { return r.value("member") == std::to_string(member); });
}

// Whether mark-vector marked a loop over `statements` ("" for any) with `mark`.
bool markedVector(const Remarks& e, const std::string& mark, const std::string& statements = "") {
  std::vector<Remark> marked = e.find("mark-vector", RemarkKind::Applied, statements);
  return std::any_of(marked.begin(), marked.end(), [&](const Remark& r) { return r.value("mark") == mark; });
}

TEST(SinkContiguousMember, MatmulWithALargeAKeepsTheOutputColumnInnermost) {
  // A (3072 x 1024) is the largest array, but k innermost would read B[k, n] with a stride.
  Remarks e = explained(
      "# sizes: M=3072 N=128 K=1024\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(k,n)\n}\n");
  std::vector<Remark> sunk = e.find("sink-contiguous", RemarkKind::Applied);
  EXPECT_TRUE(std::any_of(sunk.begin(), sunk.end(), [](const Remark& r) {
    return r.value("member") == "1" && r.value("cache_lines") == "0.250122";
  })) << e.text();
  EXPECT_TRUE(markedVector(e, "vector", "S1")) << e.text();
}

TEST(SinkContiguousMember, AFewColumnsBeatAReductionThatWouldStayScalar) {
  // k innermost reads B[k, n] 3 elements apart: no vector load takes that, the
  // loop would stay scalar; n innermost fills 3 of 16 lanes.
  auto matmul = [](int x) {
    return "# sizes: M=" + std::to_string(x) + " N=" + std::to_string(x) +
           " K=1024\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n";
  };
  Remarks narrow = explained(matmul(3));
  EXPECT_TRUE(madeInnermost(narrow, 1)) << narrow.text();
  EXPECT_TRUE(markedVector(narrow, "vector", "S1")) << narrow.text();
  // 2 elements apart, deinterleaving loads vectorize k: the dot products stay.
  Remarks two = explained(matmul(2));
  EXPECT_FALSE(madeInnermost(two, 1)) << two.text();
  EXPECT_TRUE(markedVector(two, "vector_reduction", "S1")) << two.text();
}

TEST(SinkContiguousMember, DotProductFormStaysWhenBothOperandsAreRows) {
  // C(m, n) += A(m, k) * B(n, k): k innermost reads both rows with unit stride.
  Remarks e = explained(
      "# sizes: M=64 N=64 K=256\ndef f(float(M,K) A, float(N,K) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(n,k)\n}\n");
  EXPECT_TRUE(e.find("sink-contiguous").empty()) << e.text();
  EXPECT_TRUE(markedVector(e, "vector_reduction")) << e.text();
}

TEST(SinkContiguousMember, RowReductionReadsRows) {
  // S(i) += A(i, j): j innermost streams A; i innermost would stride through it.
  Remarks e = explained("# sizes: N=512\ndef f(float(N,N) A) -> (S) {\n  S(i) +=! A(i,j)\n}\n");
  EXPECT_TRUE(e.find("sink-contiguous").empty()) << e.text();
  EXPECT_TRUE(markedVector(e, "vector_reduction")) << e.text();
}

// A 1x1 NHWC convolution under the L1 tiles of AVX-512 register tiles with a
// 48 KiB L1: k (contiguous in O and Wt) and c (the reduction, contiguous in I,
// Wt packed by promotion) touch as many lines per iteration. With c innermost
// the kernel was dot products 27x slower; the parallel member wins the tie.
TEST(SinkContiguousMember, OnATieAParallelMemberBeatsTheReduction) {
  const char* conv =
      "def f(float(N, HI, WI, CI) I, float(1, 1, CI, K) Wt) -> (O) {\n"
      "  O(n, h, w, k) +=! I(n, h + r, w + s, c) * Wt(r, s, c, k) where h in 0:HI, w in 0:WI\n}\n";
  driver::CompileOptions o;
  o.scheme.text = "none";  // the compiler's own code, not a micro-kernel (scheme auto)
  target::Hardware machine = target::withCaches(target::detectHost(), 48 * 1024, 1024 * 1024, 2);
  for (const char* feature : {"avx512f", "avx512bw", "avx512vl", "avx512dq"})
    if (std::find(machine.isa.begin(), machine.isa.end(), feature) == machine.isa.end())
      machine.isa.push_back(feature);
  Remarks e = testing::compileFor(
                  front::testing::lowerText("# sizes: N=1 HI=17 WI=17 CI=1024 K=512\n" + std::string(conv)),
                  o, machine)
                  .remarks;
  EXPECT_TRUE(madeInnermost(e, 0)) << e.text();
  EXPECT_TRUE(markedVector(e, "vector", "S1")) << e.text();
  if (!testing::hostHas("avx512")) GTEST_SKIP() << "this CPU has no avx512: the kernels are not run";
  for (const char* sizes :
       {"# sizes: N=1 HI=17 WI=17 CI=1024 K=512\n", "# sizes: N=2 HI=7 WI=13 CI=131 K=37\n"}) {
    testing::KernelCheck k = testing::checkAgainstInterpreter(
        testing::compileFor(front::testing::lowerText(sizes + std::string(conv)), o, machine));
    EXPECT_TRUE(k.pass) << sizes << k.failures;
  }
}

// A member that moves outward can carry what its inner neighbour carried:
// with the band [j, i] (i coincident: the dependence (1, 1) is carried by j),
// sinking j makes i outermost, where it carries the dependence. Copied flags
// marked it parallel (a race: wrong results on 2 threads); they are recomputed.
TEST(SinkContiguousMember, CoincidenceIsRecomputedAfterThePermutation) {
  te::Program p = front::testing::lowerText(
      "# sizes: N=64\ndef f(float(N,N) A) -> (T, U) {\n  T(i, j) = A(i, j)\n  U(i, j) = (i >= 1 && j >= 1) ? "
      "T(i - 1, j - 1) : 0 where i in 0:N, j in 0:N\n}\n");
  driver::CompileOptions o;
  o.autoTiling = false;
  o.schedule = driver::CompileOptions::ScheduleFile{
      "test",
      R"(domain: "{ S0[i, j] : 0 <= i <= 63 and 0 <= j <= 63; S1[i, j] : 0 <= i <= 63 and 0 <= j <= 63 }"
child:
  schedule: "[{ S0[i, j] -> [(j)]; S1[i, j] -> [(j)] }, { S0[i, j] -> [(i)]; S1[i, j] -> [(i)] }]"
  permutable: 1
  child:
    sequence:
    - filter: "{ S0[i, j] }"
    - filter: "{ S1[i, j] }"
)"};
  driver::CompiledProgram cp = testing::compileFor(p, o);
  EXPECT_TRUE(madeInnermost(cp.remarks, 0)) << cp.remarks.text();
  std::string lir = lir::toString(cp.kernel);
  EXPECT_EQ(lir.find("parallel for c0"), std::string::npos) << lir;
  runtime::RunOptions ro;
  ro.check = true;
  ro.threads = 2;
  auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
  for (const auto& out : r.outputs) EXPECT_TRUE(out.pass) << out.tensor << ": " << out.message;
}

}  // namespace
}  // namespace tessel::target::cpu
