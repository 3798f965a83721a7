// One table of compile options: printing any options and parsing the text
// back (as `tessel bench --options` does) gives the same options; every row
// parses its own example, prints it, and names a CLI flag.
#include <gtest/gtest.h>

#include <fstream>

#include "../support/RunTool.h"
#include "driver/OptionList.h"
#include "driver/OptionTable.h"

namespace tessel::driver {
namespace {

// Every field a user sets (CompileOptions less the dump sink and the search's thread count).
void expectSameOptions(const CompileOptions& a, const CompileOptions& b, const std::string& text) {
  EXPECT_EQ(a.fusion, b.fusion) << text;
  EXPECT_EQ(a.bastelnRedundancy, b.bastelnRedundancy) << text;
  EXPECT_EQ(a.scheduleTimeLimit, b.scheduleTimeLimit) << text;
  EXPECT_EQ(a.fusionCheckTimeLimit, b.fusionCheckTimeLimit) << text;
  EXPECT_EQ(a.scheduler, b.scheduler) << text;
  EXPECT_EQ(a.scheduleConstraints.has_value(), b.scheduleConstraints.has_value()) << text;
  if (a.scheduleConstraints && b.scheduleConstraints) {
    EXPECT_EQ(a.scheduleConstraints->automatic, b.scheduleConstraints->automatic) << text;
    EXPECT_EQ(a.scheduleConstraints->text, b.scheduleConstraints->text) << text;
  }
  EXPECT_EQ(a.dumpAfter, b.dumpAfter) << text;
  EXPECT_EQ(a.schedule.has_value(), b.schedule.has_value()) << text;
  if (a.schedule && b.schedule) {
    EXPECT_EQ(a.schedule->text, b.schedule->text) << text;
  }
  EXPECT_EQ(a.autoTiling, b.autoTiling) << text;
  EXPECT_EQ(a.tiles.toString(), b.tiles.toString()) << text;
  EXPECT_EQ(a.vectorize, b.vectorize) << text;
  EXPECT_EQ(a.registerTransposes, b.registerTransposes) << text;
  EXPECT_EQ(a.inlineElementwise, b.inlineElementwise) << text;
  EXPECT_EQ(a.recomputeCheap, b.recomputeCheap) << text;
  EXPECT_EQ(a.promotion, b.promotion) << text;
  EXPECT_EQ(a.streamingStores, b.streamingStores) << text;
  EXPECT_EQ(a.scheme.text, b.scheme.text) << text;
  EXPECT_EQ(a.schemeBudget, b.schemeBudget) << text;
  EXPECT_EQ(a.schemeClasses, b.schemeClasses) << text;
  EXPECT_EQ(a.constantInputs.all, b.constantInputs.all) << text;
  EXPECT_EQ(a.constantInputs.names, b.constantInputs.names) << text;
}

class OptionTable : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::makeTempDir("tessel-options-");
    treeFile_ = dir_ + "/tree.yaml";
    std::ofstream(treeFile_) << "domain: \"{ S0[i] : 0 <= i <= 3 }\"\n";
  }
  void TearDown() override { testing::runCommand("rm -rf " + dir_); }
  // A row's example, with a file where it names one.
  std::string exampleOf(const OptionRow& row) const {
    return row.example == "@" ? "@" + treeFile_ : row.example;
  }
  std::string dir_, treeFile_;
};

TEST_F(OptionTable, EveryRowParsesItsExamplePrintsItAndReadsItBack) {
  std::set<std::string> keys;
  CompileOptions everything;
  for (const auto& row : compileOptionRows()) {
    EXPECT_TRUE(keys.insert(row.key).second) << row.key;
    for (const auto& alias : row.aliases) EXPECT_TRUE(keys.insert(alias).second) << alias;
    EXPECT_EQ(compileOptionRow(row.key), &row);
    EXPECT_FALSE(row.help.empty()) << row.key;
    EXPECT_FALSE(row.print(CompileOptions{})) << row.key << " prints at its default";
    CompileOptions o;
    row.parse(o, exampleOf(row), "test");
    std::optional<std::string> printed = row.print(o);
    ASSERT_TRUE(printed) << row.key << "=" << exampleOf(row) << " left the default";
    std::string text = o.toString();
    EXPECT_EQ(text, row.key + "=" + *printed);
    expectSameOptions(o, parseOptionList(text), text);
    row.parse(everything, exampleOf(row), "test");
  }
  // All of them at once, in one --options text.
  std::string text = everything.toString();
  expectSameOptions(everything, parseOptionList(text), text);
  EXPECT_EQ(CompileOptions{}.toString(), "");
}

TEST_F(OptionTable, BadValuesAreUserErrors) {
  CompileOptions o;
  for (const auto& [key, bad] :
       std::vector<std::pair<std::string, std::string>>{{"fusion", "bastel"},
                                                        {"basteln-redundancy", "101%"},
                                                        {"scheduler", "pluto"},
                                                        {"tiling", "on"},
                                                        {"inline", "yes"},
                                                        {"tiles", "S_1: 0@L2"},
                                                        {"scheme", "R_k, Q_m"},
                                                        {"scheme-budget", "0"},
                                                        {"constant-inputs", "1x"},
                                                        {"schedule-time-limit", "-1"},
                                                        {"schedule", dir_ + "/none.yaml"}}) {
    const OptionRow* row = compileOptionRow(key);
    ASSERT_TRUE(row) << key;
    EXPECT_THROW(row->parse(o, bad, "test"), UserError) << key << "=" << bad;
  }
}

// The command line registers a flag per row: docs/cli.md is generated from both.
TEST_F(OptionTable, EveryRowIsACommandLineFlagAndTheReferenceIsCurrent) {
  auto help = testing::runTessel("compile --help");
  for (const auto& row : compileOptionRows())
    EXPECT_NE(help.out.find("--" + row.key + " "), std::string::npos) << row.key << "\n" << help.out;
  auto reference = testing::runTessel("cli-reference");
  ASSERT_EQ(reference.exitCode, 0) << reference.err;
  EXPECT_TRUE(reference.out == testing::readText(testing::sourcePath("docs/cli.md")))
      << "docs/cli.md is stale: build/tessel cli-reference > docs/cli.md";
}

}  // namespace
}  // namespace tessel::driver
