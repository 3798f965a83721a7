// Every matmul size from 1 to 64 in both M and N (each size once per
// dimension: N runs through a permutation of 1..64 as M goes up), and prime
// sizes up to 1009, under Auto Tiling: the partial tiles' register tiles
// (vector loops bounded at run time, row loops bounded at run time, rows in
// two heights, scalar chains of one column jammed) checked against the
// reference interpreter, with PolyBench's gemm (a scaled initialization in
// the tile) at the primes. Correctness only: docs/performance.md has the
// speed (bench/suites/sizes.suite).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"

namespace tessel {
namespace {

const char* const kMatmul = "def f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n";
const char* const kGemm =
    "def gemm(float(M,K) A, float(K,N) B, float(M,N) C0) -> (C) {\n"
    "  C(m,n) = 1.2 * C0(m,n)\n  C(m,n) += 1.5 * A(m,k) * B(k,n)\n}\n";

std::string sized(int m, int n, int k, const char* body) {
  return "# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) + "\n" +
         body;
}

void expectMatches(const std::string& tc) {
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(tc), driver::CompileOptions{});
  testing::KernelCheck check = testing::checkAgainstInterpreter(cp);
  EXPECT_TRUE(check.pass) << tc << "\n" << check.failures << cp.remarks.text();
}

class RemainderSweep : public ::testing::TestWithParam<int> {};

TEST_P(RemainderSweep, MatmulMatchesTheInterpreter) {
  int m = GetParam();
  int n = (m * 37) % 64 + 1;  // 37 is prime to 64: every N from 1 to 64 once
  expectMatches(sized(m, n, 67, kMatmul));
}

INSTANTIATE_TEST_SUITE_P(Sizes, RemainderSweep, ::testing::Range(1, 65));

// Narrow and deep: one masked vector per row over a 1024-long reduction (the
// contraction's shape), or the dot products at 1 and 2 columns.
class NarrowDeep : public ::testing::TestWithParam<int> {};

TEST_P(NarrowDeep, MatmulAndGemmMatchTheInterpreter) {
  int x = GetParam();
  expectMatches(sized(x, x, 1024, kMatmul));
  expectMatches(sized(x, x + 2, 1024, kGemm));
}

INSTANTIATE_TEST_SUITE_P(Sizes, NarrowDeep, ::testing::Values(1, 2, 3, 5, 11, 12, 13));

class PrimeSizes : public ::testing::TestWithParam<std::tuple<int, int, int>> {};

TEST_P(PrimeSizes, MatmulAndGemmMatchTheInterpreter) {
  auto [m, n, k] = GetParam();
  expectMatches(sized(m, n, k, kMatmul));
  expectMatches(sized(m, n, k, kGemm));
}

INSTANTIATE_TEST_SUITE_P(Primes, PrimeSizes,
                         ::testing::Values(std::tuple{67, 127, 131}, std::tuple{131, 67, 257},
                                           std::tuple{193, 251, 13}, std::tuple{257, 129, 64},
                                           std::tuple{1009, 37, 61}));

}  // namespace
}  // namespace tessel
