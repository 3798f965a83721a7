// Small kernels keep a serial copy of each parallel loop for one thread
// (lir/ThreadVersions.h), and both copies match the interpreter; large
// kernels keep one copy.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "backend/CEmitter.h"
#include "lir/ThreadVersions.h"
#include "runtime/Runner.h"
#include "support/Remarks.h"

namespace tessel::lir {
namespace {

std::string matmul(int m, int n, int k) {
  return "# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) +
         "\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n";
}

bool matchesOn(const driver::CompiledProgram& cp, int threads) {
  runtime::RunOptions ro;
  ro.check = true;
  ro.threads = threads;
  auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
  bool pass = true;
  for (const auto& out : r.outputs) pass = pass && out.pass;
  return pass;
}

TEST(ThreadVersions, SmallKernelsGetASerialCopyOfTheirParallelLoops) {
  // 97 x 101 x 256: work 97 x 101 (x 256 / 8 + 1), between the thresholds.
  driver::CompiledProgram cp =
      testing::compileFor(front::testing::lowerText(matmul(97, 101, 256)), driver::CompileOptions{});
  ASSERT_GT(cp.kernel.work, 100000);
  ASSERT_LT(cp.kernel.work, kMaxWorkForThreadVersions);
  EXPECT_TRUE(cp.kernel.readsThreadCount);
  std::string lir = toString(cp.kernel);
  EXPECT_NE(lir.find("if (tessel_threads > 1)"), std::string::npos) << lir;
  EXPECT_NE(cp.cSource.find("omp_get_max_threads()"), std::string::npos);
  EXPECT_NE(cp.cSource.find("#pragma omp parallel for"), std::string::npos);
  std::vector<Remark> applied = cp.remarks.find("thread-versions", RemarkKind::Applied, "kernel");
  ASSERT_EQ(applied.size(), 1u) << cp.remarks.text();
  EXPECT_NE(applied[0].value("parallel_loops"), "0");
  for (int threads : {1, 2}) EXPECT_TRUE(matchesOn(cp, threads)) << threads << " thread(s)";
}

TEST(ThreadVersions, LargeKernelsKeepOneCopy) {
  driver::CompiledProgram cp =
      testing::compileFor(front::testing::lowerText(matmul(256, 256, 256)), driver::CompileOptions{});
  ASSERT_GE(cp.kernel.work, kMaxWorkForThreadVersions);
  EXPECT_FALSE(cp.kernel.readsThreadCount);
  EXPECT_EQ(cp.cSource.find("omp_get_max_threads()"), std::string::npos);
  EXPECT_TRUE(cp.remarks.find("thread-versions").empty()) << cp.remarks.text();
}

}  // namespace
}  // namespace tessel::lir
