// Micro-kernel classes: from measurements, from the register model, as JSON, stored.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "microkernel/MicroKernelTable.h"
#include "tune/MicroKernelStore.h"

namespace tessel::microkernel {
namespace {

using tune::storeTable;

TEST(MicroKernelTable, ClassesAreRunsOfBetasWithinTheThresholdOfTheFamilysBest) {
  std::vector<MeasuredMicroKernel> k = {
      {"A", 2, 6, 80, 0},  {"A", 2, 7, 90, 0},  {"A", 2, 8, 100, 0}, {"A", 2, 9, 70, 0},
      {"A", 2, 10, 95, 0}, {"A", 1, 12, 86, 0}, {"C", 1, 4, 40, 0},  {"C", 1, 5, 50, 0},
  };
  std::vector<MicroKernelClass> c = classesFrom(k);
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c[0].family, "A");
  EXPECT_EQ(c[0].alpha, 1);
  EXPECT_EQ(c[0].betaMin, 12);
  EXPECT_EQ(c[1].alpha, 2);
  EXPECT_EQ(c[1].betaMin, 7);  // 80 < 0.85 x 100
  EXPECT_EQ(c[1].betaMax, 8);
  EXPECT_DOUBLE_EQ(c[1].bestShare, 1);
  EXPECT_EQ(c[2].betaMin, 10);  // 9 breaks the run
  EXPECT_EQ(c[3].family, "C");
  EXPECT_EQ(c[3].betaMin, 5);
}

TEST(MicroKernelTable, TheRegisterModelKeepsTilesThatFitAndHideTheFmaLatency) {
  MicroKernelTable t = modelledTable(microkernel::vectorIsaNamed("avx512"));
  auto find = [&](const std::string& family, int alpha) -> const MicroKernelClass* {
    for (const auto& c : t.classes)
      if (c.family == family && c.alpha == alpha) return &c;
    return nullptr;
  };
  ASSERT_TRUE(find("A", 2));
  EXPECT_EQ(find("A", 2)->betaMin, 4);   // 8 accumulators
  EXPECT_EQ(find("A", 2)->betaMax, 14);  // 28 + 2 + the broadcast <= 32 (15: 30 + 2 + 1 spills)
  EXPECT_EQ(find("D", 4)->betaMax, 6);   // 24 + 4 + 1
  EXPECT_EQ(find("A", 31)->betaMax, 1);  // 31 + 1, the broadcast an FMA's memory operand
  EXPECT_FALSE(find("A", 32));
  MicroKernelTable avx2 = modelledTable(microkernel::vectorIsaNamed("avx2"));
  for (const auto& c : avx2.classes) EXPECT_LE(c.alpha * c.betaMax + std::min(c.alpha, c.betaMax) + 1, 16);
}

TEST(MicroKernelTable, JsonRoundTripAndLocatedErrors) {
  MicroKernelTable t;
  t.machine = "m";
  t.isa = "avx512";
  t.source = "measured";
  t.kernels = {{"B", 2, 8, 150.5, 0.7}};
  t.classes = {{"B", 2, 8, 9, 1}};
  MicroKernelTable back = tableFromJson(toJson(t), "t.json");
  EXPECT_EQ(toJson(back), toJson(t));
  auto error = [](const std::string& text) {
    try {
      tableFromJson(text, "t.json");
    } catch (const UserError& e) {
      return e.render();
    }
    return std::string();
  };
  EXPECT_NE(error("{\n  \"machine\": }").find("t.json:2:14: error: invalid JSON"), std::string::npos);
  EXPECT_NE(error("{\"machine\": \"m\", \"isa\": \"avx512\", \"source\": \"x\", \"kernels\": []}")
                .find("bad micro-kernel table: the table has no \"classes\""),
            std::string::npos);
  EXPECT_NE(error("{\"machine\": \"m\", \"isa\": \"\", \"source\": \"x\", \"kernels\": [], \"classes\": "
                  "[{\"family\": \"Q\", \"alpha\": 1, \"betaMin\": 1, \"betaMax\": 2}]}")
                .find("a class: \"family\" is not one of A, B, C, D"),
            std::string::npos);
  EXPECT_NE(error("{\"machine\": \"m\", \"isa\": \"\", \"source\": \"x\", \"kernels\": [], \"classes\": "
                  "[{\"family\": \"A\", \"alpha\": 1, \"betaMin\": 3, \"betaMax\": 2}]}")
                .find("a class has betaMax < betaMin"),
            std::string::npos);
}

// A table measured family by family accumulates: the families measured again
// replace theirs, the others stay; a stored table is read back whole.
TEST(MicroKernelTable, FamiliesMeasuredLaterJoinTheStoredOnes) {
  MicroKernelTable stored;
  stored.machine = "m";
  stored.isa = "avx2";
  stored.source = "measured";
  stored.kernels = {{"A", 2, 6, 80, 0.9}, {"B", 2, 5, 70, 0.8}};
  stored.classes = classesFrom(stored.kernels);
  EXPECT_EQ(unmeasuredFamilies(stored, {"A", "B", "C", "D"}), (std::vector<std::string>{"C", "D"}));
  MicroKernelTable fresh = stored;
  fresh.kernels = {{"B", 3, 4, 75, 0.85}, {"C", 2, 5, 60, 0.7}};
  fresh.classes = classesFrom(fresh.kernels);
  MicroKernelTable merged = mergedTable(stored, fresh);
  EXPECT_TRUE(unmeasuredFamilies(merged, {"A", "B", "C"}).empty());
  EXPECT_EQ(unmeasuredFamilies(merged, {"A", "D"}), (std::vector<std::string>{"D"}));
  ASSERT_EQ(merged.kernels.size(), 3u);
  for (const auto& k : merged.kernels) EXPECT_FALSE(k.family == "B" && k.alpha == 2) << "B measured again";
  ASSERT_EQ(merged.classes.size(), 3u);
  std::string dir = ::testing::TempDir() + "tessel-table-" + std::to_string(::getpid());
  std::string path = dir + "/table.json";
  storeTable(merged, path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(toJson(tableFromJson(text.str(), path)), toJson(merged));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp" + std::to_string(::getpid())));
  // A path under a file cannot be written: said, not ignored.
  try {
    storeTable(merged, path + "/inside.json");
    ADD_FAILURE() << "a table stored under a file";
  } catch (const UserError& e) {
    EXPECT_NE(e.render().find("cannot write the micro-kernel table"), std::string::npos) << e.render();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessel::microkernel
