// `tessel target`: the summary, the JSON (which --load reads back), and exit
// code 2 with file:line:col for a bad description file.
#include <gtest/gtest.h>

#include "../support/RunTool.h"
#include "target/HardwareJson.h"

namespace tessel::testing {
namespace {

class TargetCli : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = makeTempDir("tessel-target-"); }
  void TearDown() override { runCommand("rm -rf " + dir_); }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(TargetCli, SummaryOfThisMachine) {
  auto r = runTessel("target");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* part : {"isa:", "cores:", "memory", "DRAM", "units", "scalar", "peak f32:"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << " in\n" << r.out;
}

TEST_F(TargetCli, JsonLoadsBackUnchanged) {
  auto r = runTessel("target --json");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  target::Hardware hw = target::hardwareFromJson(r.out, "stdout");
  EXPECT_EQ(target::toJson(hw) + "\n", r.out);

  writeText(file("host.json"), r.out);
  auto loaded = runTessel("target --json --load " + file("host.json"));
  ASSERT_EQ(loaded.exitCode, 0) << loaded.err;
  EXPECT_EQ(loaded.out, r.out);
  auto printed = runTessel("target --load " + file("host.json"));
  ASSERT_EQ(printed.exitCode, 0) << printed.err;
  EXPECT_NE(printed.out.find(hw.name), std::string::npos);
}

TEST_F(TargetCli, BadFileIsAUserErrorWithItsLocation) {
  writeText(file("bad.json"), "{\n  \"name\": \"m\",\n  \"cores\": 2,,\n}\n");
  auto r = runTessel("target --load " + file("bad.json"));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(file("bad.json") + ":3:14: error: invalid JSON"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\"cores\": 2,,"), std::string::npos) << r.err;  // the line, under the message

  writeText(file("typo.json"),
            "{\"name\": \"m\", \"cores\": 2,\n \"memory\": [{\"name\": \"DRAM\", \"capacity\": 0}]}\n");
  auto typo = runTessel("target --load " + file("typo.json"));
  EXPECT_EQ(typo.exitCode, 2);
  EXPECT_NE(typo.err.find(file("typo.json") + ":2:30: error: memory[0].capacity: unknown field"),
            std::string::npos)
      << typo.err;

  auto missing = runTessel("target --load " + file("absent.json"));
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("cannot read"), std::string::npos) << missing.err;
}

TEST_F(TargetCli, MeasureDescribesOnlyThisMachine) {
  auto r = runTessel("target --measure --load " + file("host.json"));
  EXPECT_EQ(r.exitCode, 2);
}

}  // namespace
}  // namespace tessel::testing
