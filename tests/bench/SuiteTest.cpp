// Suite files: the format, path lookup, and a located UserError for every mistake.
#include <gtest/gtest.h>

#include <filesystem>

#include "../support/RunTool.h"
#include "bench/CaseProgram.h"
#include "bench/OperatorShapes.h"
#include "bench/PeerRegistry.h"
#include "bench/Suite.h"

namespace tessel::bench {
namespace {

using tessel::testing::makeTempDir;
using tessel::testing::runCommand;
using tessel::testing::writeText;

const PeerCatalog kCatalog = {{"onednn", {"matmul", "relu"}}, {"openblas", {"sgemm"}}};

class SuiteFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = makeTempDir("tessel-suite-");
    runCommand("mkdir -p " + dir_ + "/suites " + dir_ + "/programs");
    writeText(dir_ + "/programs/mm.tc",
              "# sizes: M=8 N=4 K=2\n"
              "def matmul(float(M,K) A, float(K,N) B) -> (C) {\n"
              "  C(m, n) +=! A(m, k) * B(k, n)\n"
              "}\n");
    writeText(dir_ + "/programs/two.tc",
              "def first(float(N) A) -> (B) { B(i) = A(i) }\n"
              "def second(float(N) A) -> (B) { B(i) = A(i) * 2 }\n");
    writeText(dir_ + "/suites/local.tc", "def local(float(N) A) -> (B) { B(i) = A(i) }\n");
  }
  void TearDown() override { runCommand("rm -rf " + dir_); }
  std::string suiteFile() const { return dir_ + "/suites/s.suite"; }
  Suite parse(const std::string& text) const { return parseSuite(suiteFile(), text, kCatalog); }

  // The located error parsing (and, when `load`, loading the programs of) `text` raises.
  UserError errorOf(const std::string& text, bool load = false) const {
    try {
      Suite s = parse(text);
      if (load)
        for (const auto& c : s.cases) loadCaseProgram(c);
    } catch (const UserError& e) {
      return e;
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return UserError({}, "none");
  }
  std::string dir_;
};

TEST_F(SuiteFiles, ParsesCasesCommentsAndOptions) {
  Suite s = parse(
      "# a comment\n"
      "\n"
      "mm_small  programs/mm.tc  M=16 N=8  peers=onednn.matmul,openblas.sgemm  # trailing comment\n"
      "pick      programs/two.tc entry=second N=5\n"
      "local     local.tc N=3\n");
  ASSERT_EQ(s.cases.size(), 3u);
  const SuiteCase& mm = s.cases[0];
  EXPECT_EQ(mm.name, "mm_small");
  EXPECT_EQ(mm.loc.line, 3);
  EXPECT_EQ(mm.program, dir_ + "/programs/mm.tc");  // found in the folder above the suite
  ASSERT_EQ(mm.sizes.size(), 2u);
  EXPECT_EQ(mm.sizes[0].name, "M");
  EXPECT_EQ(mm.sizes[0].value, 16);
  ASSERT_EQ(mm.peers.size(), 2u);
  EXPECT_EQ(mm.peers[1].qualified(), "openblas.sgemm");
  EXPECT_EQ(mm.peers[1].loc.col, 57);
  EXPECT_EQ(s.cases[1].entry, "second");
  EXPECT_EQ(s.cases[2].program, dir_ + "/suites/local.tc");  // next to the suite first

  CaseProgram p = loadCaseProgram(mm);
  EXPECT_EQ(p.sizes.at("M"), 16);
  EXPECT_EQ(p.sizes.at("K"), 2);  // from the program's `# sizes:`
  EXPECT_EQ(p.program.tensor("C").shape, (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(loadCaseProgram(s.cases[1]).program.name, "second");
}

TEST_F(SuiteFiles, SweepNamesTheFamilyAndThePoint) {
  Suite s = parse(
      "mm_1009  programs/mm.tc  M=1009  sweep=mm_k2.v-1:1009  peers=onednn.matmul\n"
      "mm_8     programs/mm.tc  M=8\n");
  ASSERT_EQ(s.cases.size(), 2u);
  const SuiteCase& swept = s.cases[0];
  EXPECT_EQ(swept.sweep, "mm_k2.v-1");
  EXPECT_EQ(swept.sweepX, 1009);
  EXPECT_EQ(swept.sweepLoc.line, 1);
  EXPECT_EQ(swept.sweepLoc.col, 40);  // at the family
  ASSERT_EQ(swept.sizes.size(), 1u);  // not a size
  ASSERT_EQ(swept.peers.size(), 1u);
  EXPECT_EQ(swept.peers[0].loc.col, 62);  // parsed past the sweep
  EXPECT_EQ(s.cases[1].sweep, "");
  EXPECT_EQ(s.cases[1].sweepX, 0);
}

struct BadSuite {
  const char* text;
  bool load;  // found when the program is loaded rather than when the suite is parsed
  int line;
  int col;
  const char* reason;  // a substring of the message
};

TEST_F(SuiteFiles, EveryMistakeIsLocated) {
  const BadSuite cases[] = {
      {"mm programs/mm.tc peers=onednn.matmull\n", false, 1, 32, "unknown peer operator 'onednn.matmull'"},
      {"mm programs/mm.tc peers=mkl.gemm\n", false, 1, 25, "unknown peer family 'mkl'"},
      {"mm programs/mm.tc peers=onednn\n", false, 1, 25, "expected FAMILY.OP"},
      {"mm programs/mm.tc peers=onednn.matmul,\n", false, 1, 39, "bad peer ''"},
      {"mm programs/mm.tc peers=onednn.matmul,onednn.matmul\n", false, 1, 39, "listed twice"},
      {"# header\nmm programs/missing.tc M=3\n", false, 2, 4, "program 'programs/missing.tc' not found"},
      {"mm\n", false, 1, 3, "expected the program's path"},
      {"mm M=3 programs/mm.tc\n", false, 1, 4, "expected the program's path"},
      {"mm programs/mm.tc M=abc\n", false, 1, 21, "bad size M='abc'"},
      {"mm programs/mm.tc M=0\n", false, 1, 21, "sizes must be positive"},
      {"mm programs/mm.tc M=-4\n", false, 1, 21, "bad size M='-4'"},
      {"mm programs/mm.tc M=12x\n", false, 1, 21, "bad size M='12x'"},
      {"mm programs/mm.tc M=3 M=4\n", false, 1, 23, "size M is given twice"},
      {"mm programs/mm.tc fast\n", false, 1, 19, "expected SIZE=VALUE"},
      {"mm programs/mm.tc\nmm programs/mm.tc\n", false, 2, 1, "already defined on line 1"},
      {"m/m programs/mm.tc\n", false, 1, 1, "bad case name"},
      {"mm programs/mm.tc entry=\n", false, 1, 25, "expected a def name"},
      {"mm programs/mm.tc Q=3\n", true, 1, 19, "unknown size 'Q' for 'matmul' (its sizes: M, K, N)"},
      {"two programs/two.tc N=3\n", true, 1, 5, "holds several defs (first, second)"},
      {"two programs/two.tc entry=third N=3\n", true, 1, 27, "no def 'third'"},
      {"two programs/two.tc entry=first\n", true, 1, 5, "size N of 'first' has no value: add N=VALUE"},
      {"mm programs/mm.tc sweep=m/m:8\n", false, 1, 25, "bad sweep family 'm/m'"},
      {"mm programs/mm.tc sweep=mm:x:8\n", false, 1, 28, "bad sweep X 'x:8'"},
      {"mm programs/mm.tc sweep=\n", false, 1, 25, "expected FAMILY:X after 'sweep='"},
      {"mm programs/mm.tc sweep=:8\n", false, 1, 25, "expected FAMILY:X after 'sweep='"},
      {"mm programs/mm.tc sweep=mm M=3\n", false, 1, 27, "expected ':X' after the sweep family 'mm'"},
      {"mm programs/mm.tc sweep=mm:\n", false, 1, 28, "expected the sweep's X"},
      {"mm programs/mm.tc sweep=mm:0\n", false, 1, 28, "bad sweep X '0': expected a positive integer"},
      {"mm programs/mm.tc sweep=mm:-3\n", false, 1, 28, "bad sweep X '-3'"},
      {"mm programs/mm.tc sweep=mm:8x\n", false, 1, 28, "bad sweep X '8x'"},
      {"mm programs/mm.tc sweep=mm:8 sweep=mm:9\n", false, 1, 30, "sweep is given twice"},
  };
  for (const BadSuite& c : cases) {
    UserError e = errorOf(c.text, c.load);
    EXPECT_EQ(e.loc().file, suiteFile()) << c.text;
    EXPECT_EQ(e.loc().line, c.line) << c.text << e.render();
    EXPECT_EQ(e.loc().col, c.col) << c.text << e.render();
    EXPECT_NE(e.reason().find(c.reason), std::string::npos) << c.text << e.render();
    EXPECT_TRUE(e.hasSourceLine()) << c.text;  // rendered with the line and a caret
  }
}

TEST_F(SuiteFiles, ProgramErrorsPointIntoTheProgram) {
  writeText(dir_ + "/programs/bad.tc", "def bad(float(N) A) -> (B) {\n  B(i) = A(i) +\n}\n");
  Suite s = parse("bad programs/bad.tc N=3\n");
  try {
    loadCaseProgram(s.cases[0]);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(e.loc().file, dir_ + "/programs/bad.tc");
    EXPECT_GT(e.loc().line, 1);
  }
}

// The repository's suites load against the real peers, every sweep point
// named (bench/suites/sizes.suite: scripts/make-sizes-suite.py writes it).
TEST(RepositorySuites, LoadWithTheirPeersAndSweeps) {
  auto families = makePeerFamilies();
  PeerCatalog catalog = catalogOf(families);
  int sweepCases = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TESSEL_SOURCE_DIR) + "/bench/suites")) {
    if (entry.path().extension() != ".suite") continue;
    Suite suite = loadSuite(entry.path().string(), catalog);
    EXPECT_FALSE(suite.cases.empty()) << entry.path();
    for (const auto& c : suite.cases)
      if (!c.sweep.empty()) ++sweepCases;
  }
  EXPECT_GE(sweepCases, 200);
}

// bench/suites/conv-nets.suite (scripts/make-conv-nets-suite.py): ResNet-50's 23 and MobileNet-v2's
// 30 distinct convolutions, each in NHWC and NCHW. Every case's program binds its sizes, and the
// peers read it as the layer its name gives: layout, groups, stride and "same" padding.
TEST(RepositorySuites, ConvNetsCasesAreTheirNamedLayers) {
  auto families = makePeerFamilies();
  Suite suite =
      loadSuite(std::string(TESSEL_SOURCE_DIR) + "/bench/suites/conv-nets.suite", catalogOf(families));
  EXPECT_EQ(suite.cases.size(), 2u * (23 + 30));
  for (const auto& c : suite.cases) {
    bool depthwise = c.name.find("_dw_") != std::string::npos;
    ConvShape shape = convShape(loadCaseProgram(c).program, depthwise);
    EXPECT_EQ(shape.nhwc, c.name.ends_with("_nhwc")) << c.name;
    EXPECT_EQ(shape.groups, depthwise ? shape.c : 1) << c.name;
    EXPECT_EQ(shape.h.stride, c.name.find("s2_") != std::string::npos ? 2 : 1) << c.name;
    EXPECT_EQ(shape.h.padBefore, (shape.h.kernel - 1) / 2) << c.name;
    EXPECT_EQ(shape.w.padBefore, (shape.w.kernel - 1) / 2) << c.name;
  }
}

TEST_F(SuiteFiles, UnreadableSuiteIsAUserError) {
  EXPECT_THROW(loadSuite(dir_ + "/nothing.suite", kCatalog), UserError);
  EXPECT_THROW(loadSuite(dir_, kCatalog), UserError);
}

}  // namespace
}  // namespace tessel::bench
