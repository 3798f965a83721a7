// Packing copies whose rows lie a page or more apart start the read of a
// row ahead of the one they copy (a software prefetch, within the box): the
// kernels match the reference interpreter where the copies leave partial
// panels, and copies of rows closer than a page get no prefetch.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "../support/VectorIsa.h"
#include "driver/Compile.h"
#include "lir/Lir.h"

namespace tessel::lir {
namespace {

using testing::hostHas;
using testing::machineWith;

std::string matmul(int m, int n, int k) {
  return "# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) +
         "\ndef f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n";
}

driver::CompiledProgram compiled(const std::string& tc, const std::string& isa, int threads = 1) {
  driver::CompileOptions o;
  target::Hardware hw = machineWith(isa);
  hw.cores = threads;
  // The caches the panels were measured on (Zen 4), whatever the host's:
  // B's panel is packed at these sizes.
  for (auto& level : hw.memory) {
    if (level.name == "L1") level.capacityBytes = 32 << 10;
    if (level.name == "L2") level.capacityBytes = 1 << 20;
    if (level.name == "L3") level.capacityBytes = 32 << 20;
  }
  return testing::compileFor(front::testing::lowerText(tc), o, hw);
}

TEST(PackingPrefetch, RowsPagesApartArePrefetchedWithinThePanel) {
  for (const char* isa : {"avx512", "avx2"}) {
    if (!hostHas(isa)) continue;
    // B's rows 1031 floats apart (4124 bytes); K = 1100 leaves a partial
    // panel of 76 rows, N = 1031 a partial column tile: the prefetched row
    // stays within each.
    for (auto [m, n, k] : {std::tuple{35, 1031, 1100}, {40, 1100, 260}}) {
      driver::CompiledProgram cp = compiled(matmul(m, n, k), isa, 2);
      std::string what = std::string(isa) + " M=" + std::to_string(m) + " N=" + std::to_string(n) +
                         " K=" + std::to_string(k);
      EXPECT_NE(cp.cSource.find("__builtin_prefetch(&B["), std::string::npos) << what;
      EXPECT_NE(toString(cp.kernel).find("prefetch B["), std::string::npos) << what;
      testing::KernelCheck check = testing::checkAgainstInterpreter(cp);
      EXPECT_TRUE(check.pass) << what << "\n" << check.failures;
    }
  }
}

TEST(PackingPrefetch, NotWhereRowsShareAPage) {
  std::string isa = hostHas("avx512") ? "avx512" : "avx2";
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no AVX2";
  // B's rows 700 floats apart (2800 bytes): the hardware prefetchers follow them.
  driver::CompiledProgram cp = compiled(matmul(35, 700, 1100), isa);
  EXPECT_EQ(cp.cSource.find("__builtin_prefetch"), std::string::npos);
}

}  // namespace
}  // namespace tessel::lir
