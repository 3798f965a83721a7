// A contraction that the register tiler keeps in registers gets the L1 tile
// its register tiles want (6 rows x 4 vectors of accumulators on AVX-512, x 2
// on AVX2; B's k-panel packed and read in order from L2, A's rows of the tile
// in L2) instead of Auto Tiling's cube; the register tile's rows run row by
// row in the C code. The kernels match the reference interpreter at sizes that
// leave partial vectors, partial register tiles and partial L1 tiles.
#include <gtest/gtest.h>

#include <regex>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "../support/VectorIsa.h"
#include "driver/Compile.h"
#include "target/cpu/ContractionTiles.h"
#include "target/cpu/PromoteOperands.h"

namespace tessel::target::cpu {
namespace {

using testing::hostHas;
using testing::machineWith;

const char* const kMatmulBias =
    "def f(float(M, K) X, float(K, N) Wt, float(N) Bias) -> (O) {\n"
    "  P(m, n) +=! X(m, k) * Wt(k, n)\n"
    "  O(m, n) = P(m, n) + Bias(n)\n"
    "}\n";

std::string sizes(int m, int k, int n) {
  return "# sizes: M=" + std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n) + "\n";
}

// The host's ISA on a fixed 2-core machine with 32 KiB L1 and 1 MiB L2, so
// that the tile heights below do not depend on the host's cores and caches.
target::Hardware twoCoreMachineWith(const std::string& isa) {
  target::Hardware h = machineWith(isa);
  h.cores = 2;
  for (auto& level : h.memory) {
    if (level.name == "L1") level.capacityBytes = 32 * 1024;
    if (level.name == "L2") level.capacityBytes = 1024 * 1024;
    if (level.name == "L1" || level.name == "L2") level.sharedBy = 1;
  }
  return h;
}

driver::CompiledProgram compile(const std::string& tc, const std::string& isa, bool check) {
  driver::CompileOptions o;
  driver::CompiledProgram cp = testing::compileFor(front::testing::lowerText(tc), o, twoCoreMachineWith(isa));
  if (check) {
    testing::KernelCheck k = testing::checkAgainstInterpreter(cp);
    EXPECT_TRUE(k.pass) << isa << "\n" << tc << k.failures;
  }
  return cp;
}

class ContractionTiles : public ::testing::TestWithParam<std::string> {};

TEST_P(ContractionTiles, MatmulGetsTheRegisterTilesShape) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  int lanes = isa == "avx512" ? 16 : 8, rows = 6, vectors = isa == "avx512" ? 4 : 2;
  std::string v = isa == "avx512" ? "tessel_v16" : "tessel_v8";
  driver::CompiledProgram cp = compile(sizes(512, 768, 768) + kMatmulBias, isa, /*check=*/false);
  std::string shape = "contraction S1: register tiles of " + std::to_string(rows) + " rows x " +
                      std::to_string(vectors) + " vectors; L1 tile ";
  size_t at = cp.explanation.find(shape);
  ASSERT_NE(at, std::string::npos) << cp.explanation;
  // At most as tall as A's rows fit L2, the whole reduction in one panel
  // (768 x 64 f32 fits a quarter of L2), the rows split evenly between the
  // cores with no partial tile: 2 tiles of 256 rows.
  int64_t tileRows = std::stoll(cp.explanation.substr(at + shape.size()));
  EXPECT_EQ(tileRows, 256) << cp.explanation;
  EXPECT_NE(cp.explanation.find("256x" + std::to_string(vectors * lanes) + "x768", at), std::string::npos)
      << cp.explanation;
  // B's panel is packed; P, contracted, keeps a row per register tile row
  // (a buffer per row would be one for all the rows the register tile jams).
  EXPECT_NE(cp.explanation.find("Wt 768x" + std::to_string(vectors * lanes) + " ("), std::string::npos)
      << cp.explanation;
  EXPECT_EQ(cp.explanation.find("becomes a 1x"), std::string::npos) << cp.explanation;
  // 256 = 42 x 6 + 4: the last 4 rows a register tile of their own.
  EXPECT_NE(cp.explanation.find("register tile of 6 rows x " + std::to_string(vectors) +
                                " accumulator vector(s) (the last 4 rows a tile of their own)"),
            std::string::npos)
      << cp.explanation;
  // A short reduction over many rows, or over rows that 4 vectors span,
  // keeps the wide tiles (one panel of 64 columns: B read in place).
  for (auto [m, k, n] : {std::tuple{128, 128, 128}, {16, 128, 64}}) {
    driver::CompiledProgram wide = compile(sizes(m, k, n) + kMatmulBias, isa, /*check=*/true);
    EXPECT_NE(wide.explanation.find("register tiles of 6 rows x " + std::to_string(vectors) + " vectors"),
              std::string::npos)
        << m << "x" << k << "x" << n << "\n"
        << wide.explanation;
  }
  // A small product with a short reduction keeps narrower tiles of more rows on AVX-512 (8 x 2).
  driver::CompiledProgram shallow = compile(sizes(16, 128, 128) + kMatmulBias, isa, /*check=*/true);
  EXPECT_NE(
      shallow.explanation.find(isa == "avx512" ? "register tiles of 8 rows x 2 vectors; L1 tile 16x32x128"
                                               : "register tiles of 6 rows x 2 vectors; L1 tile 16x16x128"),
      std::string::npos)
      << shallow.explanation;
  // Row by row: the first row's second vector is updated before the second row's first.
  size_t firstRowSecondVector = cp.cSource.find("tessel_racc0_1 = " + v + "_fma(");
  size_t secondRowFirstVector = cp.cSource.find("tessel_racc1_0 = " + v + "_fma(");
  ASSERT_NE(firstRowSecondVector, std::string::npos) << cp.cSource;
  ASSERT_NE(secondRowFirstVector, std::string::npos);
  EXPECT_LT(firstRowSecondVector, secondRowFirstVector);
  // 512 rows on 2 cores: the parallel tiles share out evenly (not 384 + 128).
  EXPECT_EQ(cp.explanation.find("384@L3"), std::string::npos) << cp.explanation;

  for (auto [m, k, n] :
       {std::tuple{1, 1, 1}, {7, 13, 17}, {13, 300, 40}, {127, 257, 33}, {97, 520, 16}, {50, 600, 2}})
    compile(sizes(m, k, n) + kMatmulBias, isa, /*check=*/true);

  // 35 rows stay whole (the register tiles' rows): the columns' outer tiles carry the parallel
  // loop and share out evenly too (the busiest core at most a tenth over an even share).
  driver::CompiledProgram wide = compile(sizes(35, 2048, 8457) + kMatmulBias, isa, /*check=*/false);
  std::smatch outer;
  std::string text = wide.explanation;
  if (std::regex_search(text, outer, std::regex(R"(tiles: S_\d: \*, (\d+)@)"))) {
    int64_t size = std::stoll(outer[1]);
    int64_t tiles = (8457 + size - 1) / size;
    int64_t busiest = (tiles + 1) / 2 * size;
    EXPECT_LE(10 * busiest * 2, 11 * 8457) << wide.explanation;
  }
}

// A·Bᵀ (B strided along the vector loop: promotion transposes its panel,
// through registers, partial blocks at 150 and 70) and
// a batched matmul get the shape too; a convolution (three reduction
// variables) keeps Auto Tiling's tiles.
TEST_P(ContractionTiles, TransposedAndBatchedOperandsAndConvolutions) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  const char* abt =
      "def f(float(B, M, K) A, float(B, N, K) Bt) -> (C) {\n"
      "  C(b, m, n) +=! A(b, m, k) * Bt(b, n, k)\n"
      "}\n";
  for (auto [b, m, k, n] : {std::tuple{2, 131, 150, 70}, {1, 7, 1, 9}, {3, 50, 257, 17}}) {
    std::string s = "# sizes: B=" + std::to_string(b) + " M=" + std::to_string(m) +
                    " K=" + std::to_string(k) + " N=" + std::to_string(n) + "\n";
    driver::CompiledProgram cp = compile(s + abt, isa, /*check=*/true);
    if (m == 131) {
      EXPECT_NE(cp.explanation.find("contraction S1: register tiles"), std::string::npos) << cp.explanation;
      // Bt's panel is copied transposed, 8x8 or 16x16 blocks through registers.
      EXPECT_NE(cp.explanation.find("around vector loop tessel_p0_Bt_"), std::string::npos) << cp.explanation;
    }
  }
  const char* conv =
      "def f(float(N, C, H, W) I, float(K, C, 3, 3) Wt) -> (O) {\n"
      "  O(n, k, h, w) +=! I(n, c, h + kh, w + kw) * Wt(k, c, kh, kw)\n"
      "}\n";
  driver::CompiledProgram cp =
      compile("# sizes: N=1 C=16 H=30 W=30 K=16\n" + std::string(conv), isa, /*check=*/true);
  EXPECT_EQ(cp.explanation.find("contraction S"), std::string::npos) << cp.explanation;
  // A 1x1 convolution's kh and kw run once: one reduction, the matmul's shape
  // (the compiler's own code: scheme auto would take it otherwise).
  const char* pointwise =
      "def f(float(N, H, W, C) I, float(1, 1, C, K) Wt) -> (O) {\n"
      "  O(n, h, w, k) +=! I(n, h + r, w + s, c) * Wt(r, s, c, k)\n"
      "}\n";
  driver::CompileOptions o;
  o.scheme.text = "none";
  for (auto [shape, shaped] :
       {std::pair{"# sizes: N=1 H=13 W=7 C=40 K=48\n", true}, {"# sizes: N=2 H=1 W=1 C=1 K=17\n", false}}) {
    driver::CompiledProgram pw =
        testing::compileFor(front::testing::lowerText(shape + std::string(pointwise)), o, machineWith(isa));
    EXPECT_TRUE(testing::checkAgainstInterpreter(pw).pass) << shape;
    if (shaped) {
      EXPECT_NE(pw.explanation.find("contraction S1: register tiles"), std::string::npos) << pw.explanation;
    }
  }
}

// B's panel may take a quarter of L2 (this core's share), and promotion
// packs it under the innermost tiles; without an L2 both stay at half of L1.
TEST(ContractionPanel, BudgetFromL2) {
  EXPECT_EQ(contractionPanelBytes(32 * 1024, 1024 * 1024), 256 * 1024);
  EXPECT_EQ(contractionPanelBytes(32 * 1024, 0), 16 * 1024);
  EXPECT_EQ(contractionPanelBytes(48 * 1024, 64 * 1024), 24 * 1024);
  PromotionOptions o;
  o.levels = {{"L1", 32 * 1024, 64, 1}, {"L2", 1024 * 1024, 64, 1}, {"L3", 32 * 1024 * 1024, 64, 2}};
  o.panelBytes = contractionPanelBytes(32 * 1024, 1024 * 1024);
  EXPECT_EQ(promotionBudget(o, "L1"), 256 * 1024);
  EXPECT_EQ(promotionBudget(o, "L2"), 256 * 1024);  // the stack limit
  o.panelBytes = contractionPanelBytes(32 * 1024, 0);
  EXPECT_EQ(promotionBudget(o, "L1"), 16 * 1024);
}

INSTANTIATE_TEST_SUITE_P(Isa, ContractionTiles, ::testing::Values("avx512", "avx2"));

}  // namespace
}  // namespace tessel::target::cpu
