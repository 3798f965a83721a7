// A contraction that the register tiler keeps in registers gets the L1 tile
// its register tiles want (6 rows x 4 vectors of accumulators on AVX-512, x 2
// on AVX2; B's k-panel packed and read in order from L2, A's rows of the tile
// in L2) instead of Auto Tiling's cube; the register tile's rows run row by
// row in the C code. The kernels match the reference interpreter at sizes that
// leave partial vectors, partial register tiles and partial L1 tiles.
#include <gtest/gtest.h>

#include <optional>
#include <regex>
#include <sstream>
#include <string>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "../support/VectorIsa.h"
#include "driver/Compile.h"
#include "support/Remarks.h"
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

// The "tile" stage's remark for the band of `statement` whose innermost tile
// the target shaped for register tiles (its "innermost_tile": the L1 tile).
std::optional<Remark> shapedBand(const driver::CompiledProgram& cp, const std::string& statement) {
  for (const Remark& r : cp.remarks.find("tile")) {
    if (!r.has("innermost_tile")) continue;
    std::istringstream statements(r.subject);
    for (std::string s; statements >> s;)
      if (s == statement) return r;
  }
  return std::nullopt;
}

// Whether the register tiler made a tile of `rows` rows x `vectors`
// accumulator vectors with its last `remainder` rows a tile of their own.
bool registerTiled(const driver::CompiledProgram& cp, int rows, int vectors, int remainder) {
  for (const Remark& r : cp.remarks.find("register-tile", RemarkKind::Applied))
    if (r.value("rows") == std::to_string(rows) &&
        r.value("accumulators_per_row") == std::to_string(vectors) &&
        r.value("remainder_rows") == std::to_string(remainder))
      return true;
  return false;
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
  std::optional<Remark> band = shapedBand(cp, "S1");
  ASSERT_TRUE(band.has_value()) << cp.remarks.text();
  EXPECT_NE(band->message.find(shape), std::string::npos) << cp.remarks.text();
  // At most as tall as A's rows fit L2, the whole reduction in one panel
  // (768 x 64 f32 fits a quarter of L2), the rows split evenly between the
  // cores with no partial tile: 2 tiles of 256 rows.
  EXPECT_EQ(band->value("innermost_tile"), "256x" + std::to_string(vectors * lanes) + "x768")
      << cp.remarks.text();
  // B's panel is packed; P, contracted, keeps a row per register tile row
  // (a buffer per row would be one for all the rows the register tile jams).
  bool panelPacked = false;
  for (const Remark& r : cp.remarks.find("promote", RemarkKind::Applied))
    panelPacked = panelPacked || r.value("Wt.box") == "768x" + std::to_string(vectors * lanes);
  EXPECT_TRUE(panelPacked) << cp.remarks.text();
  for (const Remark& r : cp.remarks.find("contract", RemarkKind::Applied))
    EXPECT_NE(r.value("buffer").rfind("1x", 0), 0u) << cp.remarks.text();
  // 256 = 42 x 6 + 4: the last 4 rows a register tile of their own.
  EXPECT_TRUE(registerTiled(cp, 6, vectors, 4)) << cp.remarks.text();
  // A short reduction over many rows, or over rows that 4 vectors span,
  // keeps the wide tiles (one panel of 64 columns: B read in place).
  for (auto [m, k, n] : {std::tuple{128, 128, 128}, {16, 128, 64}}) {
    driver::CompiledProgram wide = compile(sizes(m, k, n) + kMatmulBias, isa, /*check=*/true);
    std::optional<Remark> shaped = shapedBand(wide, "S1");
    EXPECT_TRUE(shaped.has_value() &&
                shaped->message.find("register tiles of 6 rows x " + std::to_string(vectors) + " vectors") !=
                    std::string::npos)
        << m << "x" << k << "x" << n << "\n"
        << wide.remarks.text();
  }
  // A small product with a short reduction keeps narrower tiles of more rows on AVX-512 (8 x 2).
  driver::CompiledProgram shallow = compile(sizes(16, 128, 128) + kMatmulBias, isa, /*check=*/true);
  std::optional<Remark> shallowBand = shapedBand(shallow, "S1");
  EXPECT_TRUE(shallowBand.has_value()) << shallow.remarks.text();
  if (shallowBand) {
    EXPECT_NE(shallowBand->message.find(isa == "avx512" ? "register tiles of 8 rows x 2 vectors; L1 tile "
                                                        : "register tiles of 6 rows x 2 vectors; L1 tile "),
              std::string::npos)
        << shallow.remarks.text();
    EXPECT_EQ(shallowBand->value("innermost_tile"), isa == "avx512" ? "16x32x128" : "16x16x128")
        << shallow.remarks.text();
  }
  // Row by row: the first row's second vector is updated before the second row's first.
  size_t firstRowSecondVector = cp.cSource.find("tessel_racc0_1 = " + v + "_fma(");
  size_t secondRowFirstVector = cp.cSource.find("tessel_racc1_0 = " + v + "_fma(");
  ASSERT_NE(firstRowSecondVector, std::string::npos) << cp.cSource;
  ASSERT_NE(secondRowFirstVector, std::string::npos);
  EXPECT_LT(firstRowSecondVector, secondRowFirstVector);
  // 512 rows on 2 cores: the parallel tiles share out evenly (not 384 + 128).
  for (const Remark& r : cp.remarks.find("tile", RemarkKind::Applied))
    EXPECT_EQ(r.value("tiles").find("384@L3"), std::string::npos) << cp.remarks.text();

  for (auto [m, k, n] :
       {std::tuple{1, 1, 1}, {7, 13, 17}, {13, 300, 40}, {127, 257, 33}, {97, 520, 16}, {50, 600, 2}})
    compile(sizes(m, k, n) + kMatmulBias, isa, /*check=*/true);

  // 35 rows stay whole (the register tiles' rows): the columns' outer tiles carry the parallel
  // loop and share out evenly too (the busiest core at most a tenth over an even share).
  driver::CompiledProgram wide = compile(sizes(35, 2048, 8457) + kMatmulBias, isa, /*check=*/false);
  for (const Remark& r : wide.remarks.find("tile", RemarkKind::Applied)) {
    std::smatch outer;
    std::string text = r.value("tiles");
    if (!std::regex_search(text, outer, std::regex(R"(^S_\d: \*, (\d+)@)"))) continue;
    int64_t size = std::stoll(outer[1]);
    int64_t tiles = (8457 + size - 1) / size;
    int64_t busiest = (tiles + 1) / 2 * size;
    EXPECT_LE(10 * busiest * 2, 11 * 8457) << wide.remarks.text();
    break;
  }
}

// Rows narrower than a vector still get the shape (one masked vector per row,
// the whole reduction in one panel), not Auto Tiling's generic cube of
// two-row register tiles (11x11x1024 ran 4x slower than oneDNN with those).
TEST_P(ContractionTiles, NarrowRowsKeepTheShape) {
  std::string isa = GetParam();
  if (!hostHas(isa)) GTEST_SKIP() << "this CPU has no " << isa;
  for (int x : {3, 5, 11, 13}) {
    driver::CompiledProgram cp = compile(sizes(x, 1024, x) + kMatmulBias, isa, /*check=*/true);
    std::optional<Remark> band = shapedBand(cp, "S1");
    ASSERT_TRUE(band.has_value()) << x << "\n" << cp.remarks.text();
    EXPECT_EQ(band->value("innermost_tile"), std::to_string(x) + "x" + std::to_string(x) + "x1024")
        << cp.remarks.text();
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
      EXPECT_TRUE(shapedBand(cp, "S1").has_value()) << cp.remarks.text();
      // Bt's panel is copied transposed, 8x8 or 16x16 blocks through registers.
      bool transposed = false;
      for (const Remark& r : cp.remarks.find("vectorize", RemarkKind::Applied))
        transposed =
            transposed || (r.has("transpose") && r.value("vector_loop").rfind("tessel_p0_Bt_", 0) == 0);
      EXPECT_TRUE(transposed) << cp.remarks.text();
    }
  }
  const char* conv =
      "def f(float(N, C, H, W) I, float(K, C, 3, 3) Wt) -> (O) {\n"
      "  O(n, k, h, w) +=! I(n, c, h + kh, w + kw) * Wt(k, c, kh, kw)\n"
      "}\n";
  driver::CompiledProgram cp =
      compile("# sizes: N=1 C=16 H=30 W=30 K=16\n" + std::string(conv), isa, /*check=*/true);
  for (const Remark& r : cp.remarks.find("tile")) EXPECT_FALSE(r.has("innermost_tile")) << cp.remarks.text();
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
      EXPECT_TRUE(shapedBand(pw, "S1").has_value()) << pw.remarks.text();
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
