// The tiling pass: policies checked against the program and the machine,
// Auto Tiling's choices on matmul, and tiled kernels that match the
// interpreter on awkward shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "backend/CEmitter.h"
#include "driver/Compile.h"
#include "lir/Lir.h"
#include "runtime/Runner.h"
#include "support/Remarks.h"

namespace tessel::tile {
namespace {

target::Hardware machine(int64_t l1, int64_t l2, int cores) {
  target::Hardware h;
  h.name = "test";
  h.cores = cores;
  for (auto [name, bytes] : {std::pair<const char*, int64_t>{"L1", l1}, {"L2", l2}, {"DRAM", 0}}) {
    target::MemoryLevel level;
    level.name = name;
    level.capacityBytes = bytes;
    h.memory.push_back(level);
  }
  return h;
}

te::Program matmul(int m, int n, int k) {
  return front::testing::lowerText(
      "# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k) +
      "\ndef matmul(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * B(k,n)\n}\n");
}

driver::CompiledProgram compileWith(const te::Program& p, const std::string& tiles,
                                    const target::Hardware& hw) {
  driver::CompileOptions o;
  if (!tiles.empty()) o.tiles = parseTilePolicy(tiles, "--tiles");
  return testing::compileFor(p, o, hw);
}

// The "tile" stage's remark for a band it tiled, whose tiles (as policy
// text, "S_0: 256@L2, 256@L2") start with `tiles`.
std::optional<Remark> tiledBand(const driver::CompiledProgram& cp, const std::string& tiles) {
  for (const Remark& r : cp.remarks.find("tile", RemarkKind::Applied))
    if (r.value("tiles").compare(0, tiles.size(), tiles) == 0) return r;
  return std::nullopt;
}

// Why the "tile" stage left bands untiled.
std::vector<std::string> untiledReasons(const driver::CompiledProgram& cp) {
  std::vector<std::string> reasons;
  for (const Remark& r : cp.remarks.find("tile", RemarkKind::Missed)) reasons.push_back(r.value("reason"));
  return reasons;
}

bool untiledFor(const driver::CompiledProgram& cp, const std::string& reason) {
  std::vector<std::string> reasons = untiledReasons(cp);
  return std::find(reasons.begin(), reasons.end(), reason) != reasons.end();
}

// Whether `reason` says that all of a band's data fits in L1 ("all the
// band's data (1.2 KiB) fits in L1").
bool fitsInL1(const std::string& reason) {
  const std::string start = "all the band's data (", end = ") fits in L1";
  return reason.size() > start.size() + end.size() && reason.compare(0, start.size(), start) == 0 &&
         reason.compare(reason.size() - end.size(), end.size(), end) == 0;
}

void expectPolicyError(const std::string& tiles, const std::string& what) {
  try {
    compileWith(matmul(8, 8, 8), tiles, machine(48 << 10, 2 << 20, 2));
    FAIL() << "accepted " << tiles;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--tiles:1:"), std::string::npos) << e.what();
  }
}

TEST(TileBands, PolicyMistakesAreLocatedErrors) {
  expectPolicyError("S_9: 4@L1", "no statement S9");
  expectPolicyError("S_1: 4@L9", "unknown buffer 'L9' (this machine's caches: L1, L2)");
  expectPolicyError("S_1: 4@L1, 4@L1, 4@L1, 4@L1", "S1 has 3 loop dimensions but the policy gives 4");
  expectPolicyError("S_1: 8@L1/4@L2", "L1 cannot contain L2");
  expectPolicyError("S_1: 4@L2/8@L1", "is larger than the L2 tile");
}

TEST(TileBands, AutoTilingFitsHalfOfEachLevelAndExplains) {
  driver::CompiledProgram cp = compileWith(matmul(512, 512, 512), "", machine(48 << 10, 2 << 20, 2));
  // The model's numbers, as --explain prints them.
  const std::string e = cp.remarks.text();
  EXPECT_NE(e.find("Auto Tiling"), std::string::npos) << e;
  EXPECT_NE(e.find("L1 (48.0 KiB, limit 24.0 KiB)"), std::string::npos) << e;
  EXPECT_NE(e.find("L2 (2.0 MiB, limit 1.0 MiB)"), std::string::npos) << e;
  std::optional<Remark> band = tiledBand(cp, "S_0: ");
  EXPECT_TRUE(band.has_value()) << e;
  if (band) {
    EXPECT_EQ(band->value("source"), "auto") << e;
  }
  EXPECT_NE(cp.scheduleYaml.find("tile_L1"), std::string::npos);
  EXPECT_NE(cp.scheduleYaml.find("tile_L2"), std::string::npos);
}

TEST(TileBands, SmallBandsAndStreamingBandsAreNotTiled) {
  auto small = compileWith(matmul(4, 5, 3), "", machine(48 << 10, 2 << 20, 2));
  std::vector<std::string> smallReasons = untiledReasons(small);
  EXPECT_TRUE(std::any_of(smallReasons.begin(), smallReasons.end(), fitsInL1)) << small.remarks.text();
  te::Program add = front::testing::lowerText(
      "# sizes: N=1024 D=1024\ndef add(float(N,D) A, float(N,D) B) -> (C) {\n  C(n,d) = A(n,d) + "
      "B(n,d)\n}\n");
  auto streaming = compileWith(add, "", machine(48 << 10, 2 << 20, 2));
  EXPECT_TRUE(untiledFor(streaming, "tiles save less than 20% of the data movement"))
      << streaming.remarks.text();
  EXPECT_EQ(streaming.scheduleYaml.find("tile_L1"), std::string::npos);
  // A bias row is reused by every row, but stays cached while rows stream: no tiles.
  te::Program bias = front::testing::lowerText(
      "# sizes: M=1024 N=2048\ndef f(float(M,N) X, float(N) B) -> (O) {\n  O(m,n) = fmax(X(m,n) + B(n), "
      "0)\n}\n");
  auto biased = compileWith(bias, "", machine(48 << 10, 2 << 20, 2));
  EXPECT_NE(biased.remarks.text().find("B/instance weighted (L2 8, L1 "), std::string::npos)
      << biased.remarks.text();
  EXPECT_EQ(biased.scheduleYaml.find("tile_L1"), std::string::npos) << biased.remarks.text();
}

// Pooling reads each input element once: tiles only save L1 bytes that
// rows round to whole lines (measured 2-4x slower tiled). A transpose beyond
// the caches reads a line per element at memory latency: tiles pay.
TEST(TileBands, TilesMustSaveMemoryTrafficNotJustRowRounding) {
  te::Program pool = front::testing::lowerText(
      "# sizes: N=4 C=64 H=56 W=56\ndef f(float(N,C,H,W) I) -> (O) {\n  O(n,c,h,w) max=! "
      "I(n,c,2*h+kh,2*w+kw) "
      "where kh in 0:2, kw in 0:2\n}\n");
  auto pooled = compileWith(pool, "", machine(48 << 10, 2 << 20, 2));
  EXPECT_TRUE(untiledFor(pooled, "tiles save less than 20% of the data movement")) << pooled.remarks.text();
  te::Program transpose = front::testing::lowerText(
      "# sizes: M=2048 N=2048\ndef f(float(M,N) A) -> (B) {\n  B(n,m) = A(m,n)\n}\n");
  auto transposed = compileWith(transpose, "", machine(48 << 10, 2 << 20, 2));
  EXPECT_NE(transposed.scheduleYaml.find("tile_L2"), std::string::npos) << transposed.remarks.text();
  EXPECT_NE(transposed.remarks.text().find("rows from memory shorter than 16 lines: 64 untiled, 0 tiled"),
            std::string::npos)
      << transposed.remarks.text();
}

te::Program transposeOf(int m, int n) {
  return front::testing::lowerText("# sizes: M=" + std::to_string(m) + " N=" + std::to_string(n) +
                                   "\ndef f(float(M,N) A) -> (B) {\n  B(n,m) = A(m,n)\n}\n");
}

// Beyond the caches, the prefetchers follow rows: a transpose's tiles start
// at rows of 16 lines of both arrays (its input's along one member, its
// output's along the other), skipping the levels too small for them and
// shrinking the rows where even the largest level is.
TEST(TileBands, TransposesFromMemoryGetTilesOfLongRows) {
  auto big = compileWith(transposeOf(4096, 4096), "", machine(32 << 10, 1 << 20, 2));
  EXPECT_NE(big.remarks.text().find("L1 (32.0 KiB, limit 16.0 KiB): skipped, the tile with rows of 16 lines "
                                    "(256x256)"),
            std::string::npos)
      << big.remarks.text();
  EXPECT_TRUE(tiledBand(big, "S_0: 256@L2, 256@L2").has_value()) << big.remarks.text();
  // With AVX-512 its output streams past the caches (non-temporal stores):
  // the tiles need no room for it and grow along the input's rows.
  target::Hardware avx512 = machine(32 << 10, 1 << 20, 2);
  avx512.isa = {"avx2", "fma", "avx512f"};
  auto streamed = compileWith(transposeOf(4096, 4096), "", avx512);
  EXPECT_TRUE(tiledBand(streamed, "S_0: 512@L2, 256@L2").has_value()) << streamed.remarks.text();
  EXPECT_NE(lir::toString(streamed.kernel).find("stream B["), std::string::npos)
      << lir::toString(streamed.kernel);
  // Data within the last level: no such rule, the transpose keeps its L1 tiles.
  auto cached = compileWith(transposeOf(256, 256), "", machine(32 << 10, 1 << 20, 2));
  EXPECT_EQ(cached.remarks.text().find("rows from memory"), std::string::npos) << cached.remarks.text();
  for (auto [m, n] : {std::pair{300, 520}, {127, 131}, {1031, 7}, {13, 1031}, {1, 4099}}) {
    // A 64 KiB last level: rows of 16 lines would not fit it.
    driver::CompiledProgram cp = compileWith(transposeOf(m, n), "", machine(2 << 10, 64 << 10, 2));
    runtime::RunOptions ro;
    ro.check = true;
    ro.threads = 2;
    auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
    EXPECT_EQ(r.check, "pass") << m << "x" << n << "\n" << cp.remarks.text();
    if (m == 300) {
      EXPECT_TRUE(tiledBand(cp, "S_0: 64@L2, 64@L2").has_value()) << cp.remarks.text();
    }
  }
}

TEST(TileBands, TilingOffLeavesBandsAlone) {
  driver::CompileOptions o;
  o.autoTiling = false;
  driver::CompiledProgram cp = testing::compileFor(matmul(512, 512, 512), o, machine(48 << 10, 2 << 20, 2));
  EXPECT_EQ(cp.scheduleYaml.find("tile_L1"), std::string::npos);
  EXPECT_TRUE(untiledFor(cp, "tiling is off")) << cp.remarks.text();
}

TEST(TileBands, TiledKernelsMatchTheInterpreterOnAwkwardShapes) {
  for (int size : {1, 7, 13, 127}) {
    for (const char* tiles : {"", "S_1: 5@L2/2@L1, 3@L1, 4@L2", "*: 2@L1, 2@L1, 2@L1"}) {
      // Tiny caches so Auto Tiling tiles even the small shapes.
      driver::CompiledProgram cp = compileWith(matmul(size, size + 2, size), tiles, machine(256, 4096, 2));
      runtime::RunOptions ro;
      ro.check = true;
      ro.threads = 2;
      auto r = runtime::runKernel(cp.program, cp.cSource, backend::packedEntryName(cp.kernel), ro);
      EXPECT_EQ(r.check, "pass") << "size " << size << " tiles '" << tiles << "'\n" << cp.remarks.text();
    }
  }
}

}  // namespace
}  // namespace tessel::tile
