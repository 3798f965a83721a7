// Promotion (packing): reused, strided tiles of kernel inputs are copied into
// per-thread buffers under the innermost tile loops, and the statements read
// the copies. Every kernel is checked against the interpreter on two threads,
// with partial tiles, boxes that reach past a tensor's edges (padding, strided
// windows), and with the cost model on (auto) and off (all).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "../support/KernelCheck.h"
#include "driver/Compile.h"
#include "driver/OptionTable.h"
#include "tile/TilePolicy.h"

namespace tessel::target::cpu {
namespace {

using Promotion = driver::CompileOptions::Promotion;

struct Checked {
  driver::CompiledProgram cp;
  bool pass = true;
  std::string failures;
};

Checked compileAndCheck(const std::string& tc, const std::string& tiles, Promotion promotion,
                        bool vectorize = true) {
  Checked c;
  driver::CompileOptions o;
  if (!tiles.empty()) o.tiles = tile::parseTilePolicy(tiles, "test");
  o.autoTiling = tiles.empty();
  o.promotion = promotion;
  o.vectorize = vectorize;
  o.scheme.text = "none";  // promotion of the compiler's own code, not a micro-kernel (scheme auto)
  c.cp = testing::compileFor(front::testing::lowerText(tc), o);
  testing::KernelCheck k = testing::checkAgainstInterpreter(c.cp);
  c.pass = k.pass;
  c.failures = k.failures;
  return c;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The promote pass's remarks about `tensor` (copied or kept), at every site.
std::vector<Remark> promotionsOf(const Checked& c, const std::string& tensor) {
  std::vector<Remark> out;
  for (const Remark& r : c.cp.remarks.find("promote"))
    if (r.has(tensor + ".box") || r.has(tensor + ".reason")) out.push_back(r);
  return out;
}

// Reads per element of `tensor`'s footprint at the site of `r`, -1 if it has none.
double reuseOf(const Remark& r, const std::string& tensor) {
  return r.has(tensor + ".reuse") ? std::stod(r.value(tensor + ".reuse")) : -1;
}

// Whether some site keeps `tensor` in place for `reason`.
bool kept(const Checked& c, const std::string& tensor, const std::string& reason) {
  std::vector<Remark> sites = promotionsOf(c, tensor);
  return std::any_of(sites.begin(), sites.end(),
                     [&](const Remark& r) { return r.value(tensor + ".reason") == reason; });
}

// Whether some site copies `tensor` into a buffer of `box` (`bytes`), read
// about `reuse` times per element (as --explain rounds it), `transposed` or not.
bool copied(const Checked& c, const std::string& tensor, const std::string& box, int64_t bytes, double reuse,
            bool transposed) {
  std::vector<Remark> sites = promotionsOf(c, tensor);
  return std::any_of(sites.begin(), sites.end(), [&](const Remark& r) {
    return r.kind == RemarkKind::Applied && r.value(tensor + ".box") == box &&
           r.value(tensor + ".bytes") == std::to_string(bytes) &&
           std::abs(reuseOf(r, tensor) - reuse) < 0.05 &&
           r.value(tensor + ".transposed") == (transposed ? "true" : "false");
  });
}

// Whether promotion decided at a site under the tiles of `level`.
bool promotedUnder(const Checked& c, const std::string& level) {
  std::vector<Remark> sites = c.cp.remarks.find("promote");
  return std::any_of(sites.begin(), sites.end(), [&](const Remark& r) { return r.value("level") == level; });
}

// Whether mark-vector marked the innermost loop of the band over `statements` with `mark`.
bool markedVector(const Checked& c, const std::string& statements, const std::string& mark) {
  std::vector<Remark> marked = c.cp.remarks.find("mark-vector", RemarkKind::Applied, statements);
  return std::any_of(marked.begin(), marked.end(), [&](const Remark& r) { return r.value("mark") == mark; });
}

// Whether a read is transposed: into a promoted copy, or through registers
// (a transpose block, which the vectorizer's register transposes need).
bool transposes(const Checked& c) {
  for (const Remark& r : c.cp.remarks.find("promote", RemarkKind::Applied))
    for (const RemarkValue& v : r.values)
      if (v.name().ends_with(".transposed") && v.text() == "true") return true;
  for (const Remark& r : c.cp.remarks.find("mark-vector", RemarkKind::Applied))
    if (r.value("mark") == "transpose_block") return true;
  return false;
}

std::string sizes(std::initializer_list<std::pair<const char*, int>> bindings) {
  std::string s = "# sizes:";
  for (auto [name, value] : bindings) s += std::string(" ") + name + "=" + std::to_string(value);
  return s + "\n";
}

const char* const kMatmul = "def f(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n";
const char* const kMatmulTiles = "S_0: 16@L1, 24@L1; S_1: 16@L1, 24@L1, 8@L1";

TEST(PromoteOperands, MatmulTilesAreCopiedAndReadFromTheCopies) {
  for (auto [m, n, k] : {std::tuple{16, 48, 16}, {13, 29, 7}, {127, 50, 13}, {1, 24, 1}, {64, 72, 33}}) {
    std::string tc = sizes({{"M", m}, {"N", n}, {"K", k}}) + kMatmul;
    for (bool vectorize : {true, false}) {
      Checked c = compileAndCheck(tc, kMatmulTiles, Promotion::Auto, vectorize);
      EXPECT_TRUE(c.pass) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.failures;
      if (m >= 16 && n > 24 && k > 8) {
        // B's 8x24 tile is read 16 times per element along the vector loop, and its rows are
        // apart; A is read one element at a time (a broadcast per vector iteration).
        std::vector<Remark> site = c.cp.remarks.find("promote", RemarkKind::Applied, "S0 S1");
        ASSERT_EQ(site.size(), 1u) << c.cp.remarks.text();
        EXPECT_EQ(site[0].value("level"), "L1");
        EXPECT_EQ(site[0].value("kept"), "A");
        EXPECT_EQ(site[0].value("A.reason"), "no vector loop reads it along its rows");
        EXPECT_EQ(site[0].value("promoted"), "B");
        EXPECT_EQ(site[0].value("B.box"), "8x24");
        EXPECT_EQ(site[0].value("B.bytes"), "768");  // 0.8 KiB
        EXPECT_NEAR(reuseOf(site[0], "B"), 16.0, 0.05) << c.cp.remarks.text();
        EXPECT_EQ(site[0].value("B.transposed"), "false");
        EXPECT_TRUE(contains(c.cp.cSource, "float tessel_p0_B_t[192] __attribute__((aligned(64)));"))
            << c.cp.cSource;
        EXPECT_TRUE(contains(c.cp.astC, "// promote_0")) << c.cp.astC;
      }
    }
  }
}

TEST(PromoteOperands, OffLeavesTheKernelAsItWas) {
  std::string tc = sizes({{"M", 64}, {"N", 72}, {"K", 33}}) + kMatmul;
  Checked c = compileAndCheck(tc, kMatmulTiles, Promotion::Off);
  EXPECT_TRUE(c.pass) << c.failures;
  EXPECT_FALSE(contains(c.cp.cSource, "tessel_p0_")) << c.cp.cSource;
  EXPECT_TRUE(c.cp.remarks.find("promote").empty()) << c.cp.remarks.text();
}

// The cost model keeps contiguous footprints and footprints read once in place.
TEST(PromoteOperands, ContiguousOrUnreusedFootprintsStay) {
  Checked rows =
      compileAndCheck(sizes({{"M", 64}, {"N", 24}, {"K", 64}}) + kMatmul, kMatmulTiles, Promotion::Auto);
  EXPECT_TRUE(rows.pass) << rows.failures;
  EXPECT_TRUE(kept(rows, "B", "its footprint 8x24 is contiguous")) << rows.cp.remarks.text();

  const char* add = "def f(float(M,N) A, float(M,N) B) -> (C) {\n  C(m,n) = A(m,n) + B(m,n)\n}\n";
  Checked once = compileAndCheck(sizes({{"M", 40}, {"N", 40}}) + add, "S_0: 8@L1, 8@L1", Promotion::Auto);
  EXPECT_TRUE(once.pass) << once.failures;
  EXPECT_TRUE(kept(once, "A", "1.0 reads per element")) << once.cp.remarks.text();
  EXPECT_FALSE(contains(once.cp.cSource, "tessel_p0_")) << once.cp.cSource;
}

// Reads through another tensor cannot be shifted into a box: they stay on
// the tensor, and the kernel is still right.
TEST(PromoteOperands, IndirectReadsStay) {
  const char* gather =
      "def f(float(M,L) A, int32(K) I, float(K,N) B) -> (C) {\n"
      "  C(m,n) +=! A(m, I(k)) * B(k,n) where k in 0:K\n}\n";
  std::string tc = sizes({{"M", 37}, {"L", 11}, {"K", 19}, {"N", 53}}) + gather;
  for (Promotion p : {Promotion::Auto, Promotion::All}) {
    Checked c = compileAndCheck(tc, kMatmulTiles, p);
    EXPECT_TRUE(c.pass) << c.failures;
    EXPECT_TRUE(kept(c, "A", "a read's index is data-dependent or not proven in range"))
        << c.cp.remarks.text();
  }
}

// Guarded (padded) reads and strided windows: boxes reach past the input's
// edges, where the copy stops and nothing is read.
TEST(PromoteOperands, PaddedAndStridedWindows) {
  const char* conv =
      "def f(float(N,C,H,W) I, float(K,C,KH,KW) Wt) -> (O) {\n"
      "  O(n,k,h,w) +=! (h*2+kh-1 >= 0 && h*2+kh-1 < H && w*2+kw-1 >= 0 && w*2+kw-1 < W\n"
      "      ? I(n,c,h*2+kh-1,w*2+kw-1) : 0) * Wt(k,c,kh,kw)\n"
      "    where n in 0:N, h in 0:(H+2-KH)/2+1, w in 0:(W+2-KW)/2+1\n}\n";
  const char* depthwise =
      "def f(float(N,C,H,W) I, float(C,KH,KW) Wt) -> (O) {\n  O(n,c,h,w) +=! I(n,c,h+kh,w+kw) * "
      "Wt(c,kh,kw)\n}\n";
  for (Promotion p : {Promotion::Auto, Promotion::All}) {
    Checked a = compileAndCheck(
        sizes({{"N", 1}, {"C", 3}, {"H", 13}, {"W", 7}, {"K", 5}, {"KH", 3}, {"KW", 3}}) + conv,
        "*: 2@L1, 3@L1, 4@L1, 5@L1, 2@L1, 3@L1, 2@L1", p);
    EXPECT_TRUE(a.pass) << a.failures << a.cp.cSource;
    Checked b =
        compileAndCheck(sizes({{"N", 2}, {"C", 7}, {"H", 17}, {"W", 19}, {"KH", 3}, {"KW", 2}}) + depthwise,
                        "*: 1@L1, 3@L1, 5@L1, 8@L1", p);
    EXPECT_TRUE(b.pass) << b.failures << b.cp.cSource;
    if (p == Promotion::All) {
      EXPECT_TRUE(contains(a.cp.cSource, "tessel_p0_I_t[")) << a.cp.remarks.text();
      EXPECT_TRUE(contains(b.cp.cSource, "tessel_p0_I_t[")) << b.cp.remarks.text();
    }
  }
}

// A transposed operand (C = A Bᵀ) and half-precision inputs: copies keep the
// element type, and two tile levels put the copies under the L1 tiles only.
TEST(PromoteOperands, TransposedHalfPrecisionTwoLevels) {
  const char* nt =
      "def f(float16(M,K) A, float16(N,K) B) -> (C) {\n  C(m,n) +=! float(A(m,k)) * float(B(n,k))\n}\n";
  std::string tc = sizes({{"M", 29}, {"N", 31}, {"K", 37}}) + nt;
  for (Promotion p : {Promotion::Auto, Promotion::All}) {
    Checked c = compileAndCheck(tc, "*: 16@L2/8@L1, 16@L2/8@L1, 16@L2/8@L1", p);
    EXPECT_TRUE(c.pass) << c.failures;
    EXPECT_TRUE(promotedUnder(c, "L1")) << c.cp.remarks.text();
    EXPECT_FALSE(promotedUnder(c, "L2")) << c.cp.remarks.text();
  }
}

// A B^T: the vector loop runs along B's rows' index n, so the copy transposes
// B's tile (its columns become rows) and the kernel is an outer-product
// register tile instead of dot products; partial tiles at every edge.
TEST(PromoteOperands, ColumnsReadAlongTheVectorLoopAreTransposed) {
  const char* nt = "def f(float(M,K) A, float(N,K) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(n,k)\n}\n";
  for (auto [m, n, k] : {std::tuple{64, 96, 40}, {37, 51, 29}, {1, 127, 13}, {13, 7, 97}}) {
    std::string tc = sizes({{"M", m}, {"N", n}, {"K", k}}) + nt;
    for (Promotion p : {Promotion::Auto, Promotion::All}) {
      Checked c = compileAndCheck(tc, "S_0: 16@L1, 32@L1; S_1: 16@L1, 32@L1, 16@L1", p);
      EXPECT_TRUE(c.pass) << "M=" << m << " N=" << n << " K=" << k << "\n" << c.failures;
      if (m >= 16 && n >= 32 && k >= 16) {
        EXPECT_TRUE(copied(c, "B", "32x16", 2048, 16.0, /*transposed=*/true)) << c.cp.remarks.text();
        std::vector<Remark> tiles = c.cp.remarks.find("register-tile", RemarkKind::Applied);
        EXPECT_TRUE(std::any_of(tiles.begin(), tiles.end(), [](const Remark& r) {
          return r.has("accumulators_per_row");
        })) << c.cp.remarks.text();
      }
    }
  }
  // Promotion off: nothing would transpose B, so the dot products stay.
  Checked off = compileAndCheck(sizes({{"M", 64}, {"N", 96}, {"K", 40}}) + nt,
                                "S_0: 16@L1, 32@L1; S_1: 16@L1, 32@L1, 16@L1", Promotion::Off);
  EXPECT_TRUE(off.pass) << off.failures;
  EXPECT_TRUE(markedVector(off, "S1", "vector_reduction")) << off.cp.remarks.text();
  // Both operands strided along n (C(m,n) += A(n,k) * B(n,k) read by rows of
  // n): a transposed B alone would leave A strided, so neither is copied.
  const char* both =
      "def f(float(M) S, float(N,K) A, float(N,K) B) -> (C) {\n  C(m,n) +=! S(m) * A(n,k) * B(n,k)\n}\n";
  Checked two = compileAndCheck(sizes({{"M", 64}, {"N", 96}, {"K", 40}}) + both,
                                "S_0: 16@L1, 32@L1; S_1: 16@L1, 32@L1, 16@L1", Promotion::Auto);
  EXPECT_TRUE(two.pass) << two.failures;
  EXPECT_FALSE(transposes(two)) << two.cp.remarks.text();
  EXPECT_TRUE(markedVector(two, "S1", "vector_reduction")) << two.cp.remarks.text();
  // Without L1 tiles nothing is copied, and the dot products stay.
  Checked untiled =
      compileAndCheck(sizes({{"M", 20}, {"N", 30}, {"K", 40}}) + nt, "S_1: *, *, *", Promotion::Auto);
  EXPECT_TRUE(untiled.pass) << untiled.failures;
  EXPECT_FALSE(transposes(untiled)) << untiled.cp.remarks.text();
}

TEST(PromoteOperands, PromotionNames) {
  const driver::OptionRow* row = driver::compileOptionRow("promote");
  ASSERT_TRUE(row);
  for (Promotion p : {Promotion::Auto, Promotion::All, Promotion::Off}) {
    driver::CompileOptions o, back;
    o.promotion = p;
    row->parse(back, row->print(o).value_or("auto"), "test");
    EXPECT_EQ(back.promotion, p);
  }
  driver::CompileOptions o;
  EXPECT_THROW(row->parse(o, "on", "test"), UserError);
}

}  // namespace
}  // namespace tessel::target::cpu
