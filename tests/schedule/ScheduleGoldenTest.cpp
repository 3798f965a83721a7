// Golden schedule trees after each pass for matmul, the way LLVM tests print
// IR after a pass: any change to extraction, scheduling or marking shows here.
#include <gtest/gtest.h>

#include "../front/FrontTestUtil.h"
#include "../support/Compile.h"
#include "driver/Compile.h"
#include "tile/TilePolicy.h"

namespace tessel {
namespace {

// A fixed machine, so the trees do not depend on the host's caches.
target::Hardware goldenMachine() {
  target::Hardware h;
  h.name = "golden";
  h.cores = 2;
  for (auto [name, bytes] : {std::pair<const char*, int64_t>{"L1", 4096}, {"L2", 65536}, {"DRAM", 0}}) {
    target::MemoryLevel level;
    level.name = name;
    level.capacityBytes = bytes;
    h.memory.push_back(level);
  }
  return h;
}

std::string treeAfter(const std::string& pass, const std::string& tiles = "") {
  te::Program p = front::testing::lowerText(
      "# sizes: M=4 N=5 K=3\ndef matmul(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(k,n)\n}\n");
  driver::CompileOptions o;
  o.dumpAfter = pass;
  if (!tiles.empty()) o.tiles = tile::parseTilePolicy(tiles, "test");
  return testing::compileFor(p, o, goldenMachine()).dump;
}

// The sink sees the dump when the pass has run (the CLI prints it there, so
// that a later stage's error does not hide it): here the schedule file that
// replaces the scheduler's tree, after extraction, is unreadable.
TEST(ScheduleGolden, DumpGoesToTheSinkToo) {
  te::Program p = front::testing::lowerText(
      "# sizes: M=4 N=5 K=3\ndef matmul(float(M,K) A, float(K,N) B) -> (C) {\n  C(m,n) +=! A(m,k) * "
      "B(k,n)\n}\n");
  driver::CompileOptions o;
  o.dumpAfter = "tile";
  std::vector<std::string> sunk;
  o.dumpSink = [&sunk](const std::string& text) { sunk.push_back(text); };
  std::string dump = testing::compileFor(p, o, goldenMachine()).dump;
  ASSERT_EQ(sunk.size(), 1u);
  EXPECT_EQ(sunk[0], dump);
  EXPECT_NE(dump.find("schedule:"), std::string::npos);
  sunk.clear();
  o.dumpAfter = "extract";
  o.schedule = driver::CompileOptions::ScheduleFile{"tree.yaml", "not a tree"};
  EXPECT_THROW(testing::compileFor(p, o, goldenMachine()), UserError);
  ASSERT_EQ(sunk.size(), 1u);
  EXPECT_NE(sunk[0].find("domain:"), std::string::npos) << sunk[0];
}

TEST(ScheduleGolden, MatmulAfterExtract) {
  EXPECT_EQ(
      treeAfter("extract"),
      R"(domain: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
child:
  sequence:
  - filter: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
    child:
      schedule: "[{ S0[m, n] -> [(m)]; S1[m, n, k] -> [(m)] }, { S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }]"
      child:
        sequence:
        - filter: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4 }"
        - filter: "{ S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
          child:
            schedule: "[{ S1[m, n, k] -> [(k)] }]"
)");
}

// Every tile band carries isl's isolate option: its full tiles (here the k tiles of 2 of 3
// under L1, the one L2 tile) get code of their own.
TEST(ScheduleGolden, MatmulAfterTileWithAPolicy) {
  EXPECT_EQ(
      treeAfter("tile", "S_1: 4@L2/2@L1, *, 2@L1"),
      R"(domain: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
child:
  mark: "tile_L2"
  child:
    schedule: "[{ S0[m, n] -> [(m - (m) mod 4)]; S1[m, n, k] -> [(m - (m) mod 4)] }, { S0[m, n] -> [(n - (n) mod 5)]; S1[m, n, k] -> [(n - (n) mod 5)] }, { S0[m, n] -> [(0)]; S1[m, n, k] -> [(k - (k) mod 3)] }]"
    permutable: 1
    coincident: [ 1, 1, 0 ]
    options: "{ isolate[[] -> [0, 0, 0]] }"
    child:
      mark: "tile_L1"
      child:
        schedule: "[{ S0[m, n] -> [(m - (m) mod 2)]; S1[m, n, k] -> [(m - (m) mod 2)] }, { S0[m, n] -> [(n - (n) mod 5)]; S1[m, n, k] -> [(n - (n) mod 5)] }, { S0[m, n] -> [(0)]; S1[m, n, k] -> [(k - (k) mod 2)] }]"
        permutable: 1
        coincident: [ 1, 1, 0 ]
        options: "{ isolate[[0, 0, i2] -> [i3, 0, 0]] : (i2) mod 3 = 0 and (i3) mod 2 = 0 and 0 <= i2 <= 1 and 0 <= i3 <= 2 }"
        child:
          schedule: "[{ S0[m, n] -> [(m)]; S1[m, n, k] -> [(m)] }, { S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }, { S0[m, n] -> [(0)]; S1[m, n, k] -> [(k)] }]"
          permutable: 1
          coincident: [ 1, 1, 0 ]
          child:
            sequence:
            - filter: "{ S0[m, n] }"
            - filter: "{ S1[m, n, k] }"
)");
}

TEST(ScheduleGolden, MatmulAfterSinkContiguous) {
  // n, along which C and B are contiguous, becomes the innermost point loop.
  EXPECT_EQ(
      treeAfter("sink-contiguous"),
      R"(domain: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
child:
  schedule: "[{ S0[m, n] -> [(m)]; S1[m, n, k] -> [(m)] }, { S0[m, n] -> [(0)]; S1[m, n, k] -> [(k)] }, { S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }]"
  permutable: 1
  coincident: [ 1, 0, 1 ]
  child:
    sequence:
    - filter: "{ S0[m, n] }"
    - filter: "{ S1[m, n, k] }"
)");
}

TEST(ScheduleGolden, MatmulAfterDistributeInner) {
  // The initialization leaves the reduction loop k: each statement gets its own inner loops.
  EXPECT_EQ(
      treeAfter("distribute-inner"),
      R"(domain: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
child:
  schedule: "[{ S0[m, n] -> [(m)]; S1[m, n, k] -> [(m)] }]"
  permutable: 1
  coincident: [ 1 ]
  child:
    sequence:
    - filter: "{ S0[m, n] }"
      child:
        schedule: "[{ S0[m, n] -> [(0)]; S1[m, n, k] -> [(k)] }, { S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }]"
        permutable: 1
        coincident: [ 0, 1 ]
    - filter: "{ S1[m, n, k] }"
      child:
        schedule: "[{ S0[m, n] -> [(0)]; S1[m, n, k] -> [(k)] }, { S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }]"
        permutable: 1
        coincident: [ 0, 1 ]
)");
}

TEST(ScheduleGolden, MatmulAfterMarkParallel) {
  // Vector marks over the innermost loops (n: independent iterations), the unroll-jam mark over
  // the loop right above them (m: a register tile), and no parallel mark: 4 x 5 x 3 is too little
  // work to share among threads (schedule/MarkParallel.h).
  EXPECT_EQ(
      treeAfter("mark-parallel"),
      R"(domain: "{ S0[m, n] : 0 <= m <= 3 and 0 <= n <= 4; S1[m, n, k] : 0 <= m <= 3 and 0 <= n <= 4 and 0 <= k <= 2 }"
child:
  mark: "unroll_jam"
  child:
    schedule: "[{ S0[m, n] -> [(m)]; S1[m, n, k] -> [(m)] }]"
    permutable: 1
    coincident: [ 1 ]
    child:
      sequence:
      - filter: "{ S0[m, n] }"
        child:
          schedule: "[{ S0[m, n] -> [(0)]; S1[m, n, k] -> [(k)] }]"
          permutable: 1
          child:
            mark: "vector"
            child:
              schedule: "[{ S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }]"
              permutable: 1
              coincident: [ 1 ]
      - filter: "{ S1[m, n, k] }"
        child:
          schedule: "[{ S0[m, n] -> [(0)]; S1[m, n, k] -> [(k)] }]"
          permutable: 1
          child:
            mark: "vector"
            child:
              schedule: "[{ S0[m, n] -> [(n)]; S1[m, n, k] -> [(n)] }]"
              permutable: 1
              coincident: [ 1 ]
)");
}

}  // namespace
}  // namespace tessel
