// The CLI contract: exit codes, --json fields, located errors for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "../support/RunTool.h"
#include "driver/Strategy.h"

namespace tessel::testing {
namespace {

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = makeTempDir("tessel-cli-");
    writeText(dir_ + "/mm.tc",
              "# sizes: M=13 N=7 K=5\n"
              "def matmul(float(M,K) A, float(K,N) B) -> (C) {\n"
              "  C(m, n) +=! A(m, k) * B(k, n)\n"
              "}\n");
  }
  void TearDown() override { runCommand("rm -rf " + dir_); }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(Cli, VersionAndHelp) {
  auto v = runTessel("--version");
  EXPECT_EQ(v.exitCode, 0);
  EXPECT_NE(v.out.find("tessel "), std::string::npos);
  auto h = runTessel("--help");
  EXPECT_EQ(h.exitCode, 0);
  EXPECT_NE(h.out.find("run"), std::string::npos);
  EXPECT_NE(h.out.find("compile"), std::string::npos);
  auto rh = runTessel("run --help");
  EXPECT_EQ(rh.exitCode, 0);
  EXPECT_NE(rh.out.find("--check"), std::string::npos);
  auto ch = runTessel("compile --help");
  EXPECT_EQ(ch.exitCode, 0);
  EXPECT_NE(ch.out.find("--emit"), std::string::npos);
}

TEST_F(Cli, RunJsonReportsCheckAndTime) {
  auto r = runTessel("run " + file("mm.tc") + " --check --time --json --size M=17");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["check"], "pass");
  EXPECT_LT(j["max_abs_err"].get<double>(), 1e-4);
  EXPECT_GT(j["median_ms"].get<double>(), 0.0);
  EXPECT_GE(j["runs"].get<int>(), 5);
  EXPECT_EQ(j["sizes"]["M"], 17);
  EXPECT_EQ(j["sizes"]["N"], 7);
}

TEST_F(Cli, RunWithoutCheckIsSkipped) {
  auto r = runTessel("run " + file("mm.tc") + " --json --threads 1");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["check"], "skipped");
}

TEST_F(Cli, EmitStages) {
  auto s = runTessel("compile " + file("mm.tc") + " --emit schedule");
  ASSERT_EQ(s.exitCode, 0) << s.err;
  EXPECT_NE(s.out.find("domain:"), std::string::npos);
  auto a = runTessel("compile " + file("mm.tc") + " --emit ast");
  ASSERT_EQ(a.exitCode, 0) << a.err;
  EXPECT_NE(a.out.find("for (int c0"), std::string::npos);
  // (Large enough to share among threads: schedule/MarkParallel.h.)
  auto c = runTessel("compile " + file("mm.tc") + " --emit c --size M=128 --size N=128 --size K=128");
  ASSERT_EQ(c.exitCode, 0) << c.err;
  EXPECT_NE(c.out.find("int matmul(const float* restrict A, const float* restrict B, float* restrict C)"),
            std::string::npos);
  EXPECT_NE(c.out.find("#pragma omp parallel for"), std::string::npos);
}

TEST_F(Cli, TimePassesListsEveryStage) {
  auto r = runTessel("compile " + file("mm.tc") + " --time-passes");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* stage : {"extract", "schedule", "tile", "ast", "lir", "vectorize", "emit-c", "total"})
    EXPECT_NE(r.err.find(std::string("  ") + stage + " "), std::string::npos) << stage << "\n" << r.err;
  EXPECT_EQ(runTessel("compile " + file("mm.tc")).err.find("total"), std::string::npos);
}

TEST_F(Cli, FuzzPrintsItsProgramsAsTc) {
  auto r = runTessel("fuzz --seed 3 --first 5 --count 2 --print");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("# program 5 of seed 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# program 6 of seed 3"), std::string::npos) << r.out;
  // The printed program compiles as it is (its sizes come from '# sizes:').
  std::string second = r.out.substr(r.out.find("# program 6"));
  writeText(file("fuzz6.tc"), second);
  auto run = runTessel("run " + file("fuzz6.tc") + " --check");
  EXPECT_EQ(run.exitCode, 0) << run.err;
}

TEST_F(Cli, SchemesFromTheCommandLineAndFromFiles) {
  // M = 13 = 6 + 7 (a lambda composition); N = 7 and K = 5 stay scalar.
  auto ok = runTessel("run " + file("mm.tc") +
                      " --check --scheme 'lambda_m a.[(1,6),(1,7)], R_n, R_k, U_{a,m}' --explain");
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_NE(ok.err.find("graft-microkernel: S1 (C, 3 dimensions: m, n, k) runs the scheme"),
            std::string::npos)
      << ok.err;
  writeText(file("mm.scheme"), "C: R_m, R_n, T_{5,k}\n");
  auto fromFile = runTessel("run " + file("mm.tc") + " --check --scheme @" + file("mm.scheme"));
  EXPECT_EQ(fromFile.exitCode, 0) << fromFile.err;

  auto badSyntax = runTessel("run " + file("mm.tc") + " --scheme 'R_m, R_n, T_{5;k}'");
  EXPECT_EQ(badSyntax.exitCode, 2);
  EXPECT_NE(badSyntax.err.find("--scheme:1:15: error: bad scheme: expected ','"), std::string::npos)
      << badSyntax.err;
  writeText(file("bad.scheme"), "C: R_m, R_n, T_{4,k}\n");
  auto badCover = runTessel("run " + file("mm.tc") + " --scheme @" + file("bad.scheme"));
  EXPECT_EQ(badCover.exitCode, 2);
  EXPECT_NE(
      badCover.err.find(file("bad.scheme") + ":1:14: error: bad scheme: the scheme covers 4 along k, whose "
                                             "extent is 5"),
      std::string::npos)
      << badCover.err;
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --scheme @" + file("missing.scheme")).exitCode, 2);
}

TEST_F(Cli, ConstantInputsAreLaidOutOnceWhenTimed) {
  const std::string run = "run " + file("mm.tc") + " --check --time --scheme 'L_B(n, k), R_m, R_n, R_k'";
  auto constant = runTessel(run + " --constant-inputs B");
  EXPECT_EQ(constant.exitCode, 0) << constant.err;
  EXPECT_NE(constant.out.find("check C (prepared entry): pass"), std::string::npos) << constant.out;
  EXPECT_NE(constant.out.find("with B already in the kernel's layout; that layout transform takes"),
            std::string::npos)
      << constant.out;
  // Not declared constant: each timed call lays B out.
  auto perCall = runTessel(run);
  EXPECT_EQ(perCall.exitCode, 0) << perCall.err;
  EXPECT_EQ(perCall.out.find("layout transform"), std::string::npos) << perCall.out;
  auto json = runTessel(run + " --constant-inputs all --json");
  EXPECT_NE(json.out.find("\"prepared_inputs\":[\"B\"]"), std::string::npos) << json.out;
  auto notAnInput = runTessel(run + " --constant-inputs B,X");
  EXPECT_EQ(notAnInput.exitCode, 2);
  EXPECT_NE(notAnInput.err.find("--constant-inputs: 'X' is not an input of matmul (A, B)"), std::string::npos)
      << notAnInput.err;
  auto malformed = runTessel(run + " --constant-inputs 'B,'");
  EXPECT_EQ(malformed.exitCode, 2);
  EXPECT_NE(malformed.err.find("--constant-inputs: error: bad constant-inputs 'B,'"), std::string::npos)
      << malformed.err;
}

TEST_F(Cli, MicroBenchWritesTheMachinesClassesAndSchemeSearchUsesThem) {
  auto bench = runTessel(
      "microbench --families A --max-alpha 1 --max-beta 2 --reduction 8 --min-time 0.001 "
      "--output " +
      file("mk.json"));
  EXPECT_EQ(bench.exitCode, 0) << bench.err;
  EXPECT_NE(bench.out.find("A  alpha  1  beta  2"), std::string::npos) << bench.out;
  EXPECT_NE(readText(file("mk.json")).find("\"classes\""), std::string::npos);
  auto badFamily = runTessel("microbench --families Z --output " + file("mk2.json"));
  EXPECT_EQ(badFamily.exitCode, 2);
  EXPECT_NE(badFamily.err.find("no micro-kernel family 'Z' (A, B, C or D)"), std::string::npos)
      << badFamily.err;
  writeText(file("conv.tc"),
            "# sizes: HI=6 WI=5 C=3 K=32\n"
            "def conv(float(HI, WI, C) I, float(3, 3, C, K) W) -> (O) {\n"
            "  O(h, w, k) +=! I(h + r, w + s, c) * W(r, s, c, k) where h in 0:HI - 2, w in 0:WI - 2\n}\n");
  auto search = runTessel("run " + file("conv.tc") +
                          " --check --scheme search --scheme-budget 1 --scheme-classes model --explain");
  EXPECT_EQ(search.exitCode, 0) << search.err;
  EXPECT_NE(search.err.find("scheme search: "), std::string::npos) << search.err;
  auto badClasses = runTessel("run " + file("conv.tc") + " --scheme search --scheme-classes guessed");
  EXPECT_NE(badClasses.exitCode, 0);
  EXPECT_NE(badClasses.err.find("--scheme-classes"), std::string::npos) << badClasses.err;
}

// --explain=json: every remark's fields, named by the pipeline's stages; its
// messages in order are exactly what --explain prints.
TEST_F(Cli, ExplainAsStructuredRemarks) {
  auto json = runTessel("compile " + file("mm.tc") + " --fusion basteln --explain=json");
  ASSERT_EQ(json.exitCode, 0) << json.err;
  nlohmann::json remarks = nlohmann::json::parse(json.out);
  ASSERT_TRUE(remarks.is_array()) << json.out;
  ASSERT_FALSE(remarks.empty());
  std::vector<std::string> stages = driver::cpuPipeline().names();
  stages.push_back("scheme-auto");
  std::string messages;
  for (const auto& r : remarks) {
    for (const char* field : {"pass", "kind", "subject", "message", "values"})
      EXPECT_TRUE(r.contains(field)) << field << " missing in " << r.dump();
    EXPECT_NE(std::find(stages.begin(), stages.end(), r["pass"].get<std::string>()), stages.end())
        << r.dump();
    std::string kind = r["kind"].get<std::string>();
    EXPECT_TRUE(kind == "applied" || kind == "missed" || kind == "analysis") << r.dump();
    if (kind == "missed") {
      EXPECT_TRUE(r["values"].contains("reason")) << r.dump();
    }
    messages += r["message"].get<std::string>() + "\n";
  }
  auto text = runTessel("compile " + file("mm.tc") + " --fusion basteln --explain");
  ASSERT_EQ(text.exitCode, 0) << text.err;
  EXPECT_EQ(messages, text.out);
  // The scheduler's decision, as data.
  auto scheduled = std::find_if(remarks.begin(), remarks.end(), [](const nlohmann::json& r) {
    return r["pass"] == "schedule" && r["kind"] == "applied";
  });
  ASSERT_NE(scheduled, remarks.end()) << json.out;
  EXPECT_EQ((*scheduled)["values"]["scheduler"], "isl's scheduler") << scheduled->dump();

  auto bad = runTessel("compile " + file("mm.tc") + " --explain=xml");
  EXPECT_EQ(bad.exitCode, 2) << bad.err;
  EXPECT_NE(bad.err.find("--explain"), std::string::npos) << bad.err;
}

// --scheduler tessel and its constraint files: the Fig. 3(b) tree holds, and
// every mistake in a file is located and explained.
TEST_F(Cli, SchedulerAndConstraintFiles) {
  auto plain = runTessel("run " + file("mm.tc") + " --check --scheduler tessel --explain");
  EXPECT_EQ(plain.exitCode, 0) << plain.err;
  EXPECT_NE(plain.err.find("schedule: tessel's scheduler"), std::string::npos) << plain.err;
  // The final schedule, in short: the update's band with its parallel rows.
  EXPECT_NE(
      plain.err.find("schedule: the scheduler's tree (--dump-after schedule prints it whole):\n  sequence\n"),
      std::string::npos)
      << plain.err;
  EXPECT_NE(plain.err.find("    filter S1\n      band (permutable):\n        parallel S1[m, n, k] -> m\n"
                           "        parallel S1[m, n, k] -> n\n        S1[m, n, k] -> k\n"),
            std::string::npos)
      << plain.err;
  // Past its time limit Tessel's scheduler hands over to isl's, and --explain says whose tree it is.
  auto fallback = runTessel("compile " + std::string(TESSEL_SOURCE_DIR) +
                            "/tests/schedule/programs/slow_max_fusion.tc --fusion max --scheduler tessel "
                            "--schedule-time-limit 0.001 --emit ast --explain");
  EXPECT_EQ(fallback.exitCode, 0) << fallback.err;
  EXPECT_NE(fallback.err.find("\nschedule: isl's scheduler\n"), std::string::npos) << fallback.err;
  EXPECT_NE(
      fallback.err.find("tessel: warning: scheduling: Tessel's scheduler stopped at the scheduling time "
                        "limit; used isl's scheduler"),
      std::string::npos)
      << fallback.err;
  // Paper 004's scenarios, their costs and the branch that held, in --explain.
  auto scenarios =
      runTessel("compile " + testing::sourcePath("tests/schedule/programs/fused_mul_sub_mul.tc") +
                " --scheduler tessel --schedule-constraints auto --emit ast --explain");
  EXPECT_EQ(scenarios.exitCode, 0) << scenarios.err;
  for (const char* line :
       {"schedule: vectorization scenarios (paper 004 Alg. 2):\n  scenario 1 (cost ",
        "alternatives for row 0 (fused variants, then plain, then relaxed)\n",
        "constraint tree: branch 1.1.1 holds for S0 S2\n", "holds for S1 (which no constraint names)\n"})
    EXPECT_NE(scenarios.err.find(line), std::string::npos) << line << "\n" << scenarios.err;
  std::string paper = testing::sourcePath("tests/schedule/programs/fused_mul_sub_mul.tc");
  std::string tree = testing::sourcePath("tests/schedule/programs/fig3b.constraints");
  auto steered =
      runTessel("run " + paper + " --check --fusion smart --scheduler tessel --schedule-constraints " + tree +
                " --explain");
  EXPECT_EQ(steered.exitCode, 0) << steered.err;
  EXPECT_NE(steered.err.find("constraint tree: branch 1.1.1 holds for S0 S2"), std::string::npos)
      << steered.err;
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --scheduler pluto").exitCode, 2);
  auto needsTessel = runTessel("run " + paper + " --schedule-constraints " + tree);
  EXPECT_EQ(needsTessel.exitCode, 2);
  EXPECT_NE(needsTessel.err.find("add --scheduler tessel"), std::string::npos) << needsTessel.err;
  auto bad = [&](const std::string& text, const std::string& expected) {
    writeText(file("bad.constraints"), text);
    auto r = runTessel("run " + file("mm.tc") + " --scheduler tessel --schedule-constraints " +
                       file("bad.constraints"));
    EXPECT_EQ(r.exitCode, 2) << text;
    EXPECT_NE(r.err.find(file("bad.constraints") + ":" + expected), std::string::npos) << text << "\n"
                                                                                       << r.err;
  };
  bad("row { Q.m = 1 }\n", "1:7: error: no statement Q in the program (its statements: C.init (S0), C (S1))");
  bad("row {\n  C.q = 1\n}\n",
      "2:5: error: statement S1 has no iterator 'q' (its iterators: m, n, k; '1' is its constant)");
  bad("row { C.m = 1\n", "1:1: error: this 'row {' is never closed with '}'");
  bad("row { C.m 1 }\n", "1:11: error: expected '=', '>=' or '<=' in the constraint");
  bad("row { C.m@1 = 1 }\n", "1:11: error: row 1 is below this node's row 0");
  bad("row { 2 = 1 }\n", "1:7: error: the constraint names no schedule coefficient");
  bad("rows { }\n", "1:1: error: expected 'row {'");
  bad("# nothing\n", "1:1: error: no constraints in the file");
  bad("row { C.m = 1 C.n = 0 }\n",
      "1:15: error: expected ';', a line's end, '}' or 'row' after the constraint");
  EXPECT_EQ(
      runTessel("run " + file("mm.tc") + " --scheduler tessel --schedule-constraints " + file("missing.c"))
          .exitCode,
      2);
}

TEST_F(Cli, TilingAndVectorizationOptions) {
  auto ok = runTessel("run " + file("mm.tc") + " --check --tiles 'S_1: 4@L2/2@L1, 3@L1' --explain");
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_NE(ok.err.find("tiles from the policy"), std::string::npos) << ok.err;
  writeText(file("policy.tiles"), "# matmul\nS_1: 4@L1\n");
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --check --tiles @" + file("policy.tiles")).exitCode, 0);
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --check --tiling off --vectorize off").exitCode, 0);

  auto badSyntax = runTessel("run " + file("mm.tc") + " --tiles 'S_1: 4@'");
  EXPECT_EQ(badSyntax.exitCode, 2);
  EXPECT_NE(badSyntax.err.find("--tiles:1:8: error: expected a buffer name"), std::string::npos)
      << badSyntax.err;
  auto badLevel = runTessel("run " + file("mm.tc") + " --tiles 'S_1: 4@L7'");
  EXPECT_EQ(badLevel.exitCode, 2);
  EXPECT_NE(badLevel.err.find("unknown buffer 'L7'"), std::string::npos) << badLevel.err;
  writeText(file("bad.tiles"), "S_1: 4@L1\nS_9: 2@L1\n");
  auto badFile = runTessel("run " + file("mm.tc") + " --tiles @" + file("bad.tiles"));
  EXPECT_EQ(badFile.exitCode, 2);
  EXPECT_NE(badFile.err.find(file("bad.tiles") + ":2:1: error: the program has no statement S9"),
            std::string::npos)
      << badFile.err;
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --tiles @" + file("missing.tiles")).exitCode, 2);
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --tiling sideways").exitCode, 2);
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --vectorize maybe").exitCode, 2);
  auto badPromote = runTessel("run " + file("mm.tc") + " --promote maybe");
  EXPECT_EQ(badPromote.exitCode, 2);
  EXPECT_NE(badPromote.err.find("--promote"), std::string::npos) << badPromote.err;
  auto badInline = runTessel("run " + file("mm.tc") + " --inline always");
  EXPECT_EQ(badInline.exitCode, 2);
  EXPECT_NE(badInline.err.find("--inline"), std::string::npos) << badInline.err;
  writeText(file("tree.yaml"), "domain: \"{ S0[i] : 0 <= i < 4 }\"\n");
  auto inlineWithTree = runTessel("run " + file("mm.tc") + " --inline on --schedule " + file("tree.yaml"));
  EXPECT_EQ(inlineWithTree.exitCode, 2);
  EXPECT_NE(inlineWithTree.err.find("--schedule and --inline on do not go together"), std::string::npos)
      << inlineWithTree.err;
  auto badStream = runTessel("run " + file("mm.tc") + " --stream-stores sometimes");
  EXPECT_EQ(badStream.exitCode, 2);
  EXPECT_NE(badStream.err.find("--stream-stores"), std::string::npos) << badStream.err;
  writeText(file("machine.json"), "{ \"name\": 3 }\n");
  auto badMachine = runTessel("run " + file("mm.tc") + " --hardware " + file("machine.json"));
  EXPECT_EQ(badMachine.exitCode, 2);
  EXPECT_NE(badMachine.err.find(file("machine.json") + ":1:"), std::string::npos) << badMachine.err;
}

TEST_F(Cli, DumpAfterEveryPass) {
  for (const std::string& pass : driver::cpuPipeline().names()) {
    auto r = runTessel("compile " + file("mm.tc") + " --dump-after=" + pass);
    EXPECT_EQ(r.exitCode, 0) << pass << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << pass;
  }
  auto mp = runTessel("compile " + file("mm.tc") +
                      " --dump-after=mark-parallel --size M=128 --size N=128 --size K=128");
  EXPECT_NE(mp.out.find("mark: \"parallel\""), std::string::npos) << mp.out;
}

// `tessel passes` prints the pipeline that --dump-after and --time-passes name.
TEST_F(Cli, PassesPrintsThePipelineInOrder) {
  auto r = runTessel("passes");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  size_t at = 0;
  for (const std::string& pass : driver::cpuPipeline().names()) {
    size_t found = r.out.find(". " + pass + " ", at);
    ASSERT_NE(found, std::string::npos) << pass << "\n" << r.out;
    at = found;
  }
  EXPECT_NE(r.out.find("schedule tree -> isl AST"), std::string::npos) << r.out;
  EXPECT_EQ(runTessel("passes --target cpu").out, r.out);
  auto unknown = runTessel("passes --target gpu");
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("unknown target 'gpu' (targets: cpu)"), std::string::npos) << unknown.err;
}

TEST_F(Cli, UnknownPassIsAnError) {
  auto r = runTessel("compile " + file("mm.tc") + " --dump-after=untile");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("unknown pass 'untile'"), std::string::npos) << r.err;
}

TEST_F(Cli, MissingFile) {
  auto r = runTessel("run " + file("nope.tc"));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("cannot open"), std::string::npos) << r.err;
  auto dir = runTessel("run " + dir_);
  EXPECT_EQ(dir.exitCode, 2);
  EXPECT_NE(dir.err.find("is a directory"), std::string::npos) << dir.err;
}

TEST_F(Cli, BrokenCompilerSettingIsAUserError) {
  auto r = runCommand("TESSEL_CACHE_DIR=" + file("cache") + " TESSEL_CFLAGS=-fno-such-flag " +
                      std::string(TESSEL_BINARY) + " run " + file("mm.tc"));
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("TESSEL_CC / TESSEL_CFLAGS"), std::string::npos) << r.err;
  auto missing = runCommand("TESSEL_CACHE_DIR=" + file("cache") + " TESSEL_CC=/nonexistent/cc " +
                            std::string(TESSEL_BINARY) + " run " + file("mm.tc"));
  EXPECT_EQ(missing.exitCode, 2) << missing.err;
  EXPECT_NE(missing.err.find("not found"), std::string::npos) << missing.err;
}

TEST_F(Cli, BadSizeArguments) {
  auto unknown = runTessel("run " + file("mm.tc") + " --size Q=3");
  EXPECT_EQ(unknown.exitCode, 2);
  EXPECT_NE(unknown.err.find("unknown size 'Q'"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("M, K, N"), std::string::npos) << unknown.err;
  auto negative = runTessel("run " + file("mm.tc") + " --size M=-4");
  EXPECT_EQ(negative.exitCode, 2);
  EXPECT_NE(negative.err.find("sizes must be positive"), std::string::npos) << negative.err;
  auto zero = runTessel("run " + file("mm.tc") + " --size M=0");
  EXPECT_EQ(zero.exitCode, 2);
  auto malformed = runTessel("run " + file("mm.tc") + " --size M");
  EXPECT_EQ(malformed.exitCode, 2);
  EXPECT_NE(malformed.err.find("expected NAME=VALUE"), std::string::npos) << malformed.err;
  auto notInt = runTessel("run " + file("mm.tc") + " --size M=4x");
  EXPECT_EQ(notInt.exitCode, 2);
  EXPECT_NE(notInt.err.find("not an integer"), std::string::npos) << notInt.err;
}

TEST_F(Cli, BadOptionValues) {
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --fusion sideways").exitCode, 2);
  auto redundancy = runTessel("compile " + file("mm.tc") + " --fusion basteln --basteln-redundancy lots");
  EXPECT_EQ(redundancy.exitCode, 2);
  EXPECT_NE(redundancy.err.find(
                "--basteln-redundancy: error: bad basteln-redundancy 'lots' (expected a percentage"),
            std::string::npos)
      << redundancy.err;
  EXPECT_EQ(runTessel("run " + file("mm.tc") + " --threads -2").exitCode, 2);
  EXPECT_EQ(runTessel("compile " + file("mm.tc") + " --emit binary").exitCode, 2);
  EXPECT_EQ(runTessel("frobnicate").exitCode, 2);
  EXPECT_EQ(runTessel("").exitCode, 2);
  auto negative = runTessel("compile " + file("mm.tc") + " --schedule-time-limit -1");
  EXPECT_EQ(negative.exitCode, 2);
  EXPECT_NE(negative.err.find("--schedule-time-limit"), std::string::npos) << negative.err;
  EXPECT_EQ(runTessel("compile " + file("mm.tc") + " --schedule-time-limit soon").exitCode, 2);
  auto checkLimit = runTessel("compile " + file("mm.tc") + " --fusion-check-time-limit -3");
  EXPECT_EQ(checkLimit.exitCode, 2);
  EXPECT_NE(checkLimit.err.find("--fusion-check-time-limit"), std::string::npos) << checkLimit.err;
  EXPECT_EQ(runTessel("compile " + file("mm.tc") + " --fusion-check-time-limit later").exitCode, 2);
}

// A scheduling attempt past its time limit falls back to less fusion: the
// program still compiles and runs correctly, and the user is told.
TEST_F(Cli, SchedulingTimeLimitFallsBackWithAWarning) {
  auto r =
      runTessel("run " + std::string(TESSEL_SOURCE_DIR) +
                "/tests/schedule/programs/slow_max_fusion.tc --fusion max --schedule-time-limit 1 --check");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(
      r.err.find(
          "tessel: warning: scheduling: max fusion stopped at the scheduling time limit; used smart fusion"),
      std::string::npos)
      << r.err;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  auto quiet = runTessel("compile " + file("mm.tc") + " --fusion max --schedule-time-limit 0 --emit ast");
  ASSERT_EQ(quiet.exitCode, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("warning"), std::string::npos) << quiet.err;
}

TEST_F(Cli, SyntaxErrorIsLocated) {
  writeText(file("bad.tc"), "def f(float(N) A) -> (B) {\n  B(i) = A(i) +\n}\n");
  auto r = runTessel("run " + file("bad.tc"));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("bad.tc:3:1: error:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("^"), std::string::npos) << r.err;
}

TEST_F(Cli, EntrySelection) {
  writeText(file("two.tc"),
            "# sizes: N=5\n"
            "def neg(float(N) A) -> (B) { B(i) = -A(i) }\n"
            "def twice(float(N) A) -> (B) { B(i) = 2 * A(i) }\n");
  auto ok = runTessel("run " + file("two.tc") + " --entry twice --check --json");
  ASSERT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["kernel"], "twice");
  auto ambiguous = runTessel("run " + file("two.tc"));
  EXPECT_EQ(ambiguous.exitCode, 2);
  // One --size list may serve several defs: sizes of other defs are accepted.
  writeText(file("mixed.tc"),
            "# sizes: N=5 K=3\n"
            "def neg(float(N) A) -> (B) { B(i) = -A(i) }\n"
            "def sum(float(N, K) A) -> (B) { B(i) +=! A(i, k) }\n");
  auto shared = runTessel("run " + file("mixed.tc") + " --entry neg --size N=7 --size K=2 --check");
  EXPECT_EQ(shared.exitCode, 0) << shared.err;
  auto typo = runTessel("run " + file("mixed.tc") + " --entry neg --size Q=2");
  EXPECT_EQ(typo.exitCode, 2);
  auto missing = runTessel("run " + file("two.tc") + " --entry thrice");
  EXPECT_EQ(missing.exitCode, 2);
  EXPECT_NE(missing.err.find("thrice"), std::string::npos) << missing.err;
}

TEST_F(Cli, ScheduleFromFileIsCheckedAndUsed) {
  auto dump = runTessel("compile " + file("mm.tc") + " --dump-after=extract");
  ASSERT_EQ(dump.exitCode, 0) << dump.err;
  writeText(file("tree.yaml"), dump.out);
  auto ok = runTessel("run " + file("mm.tc") + " --schedule " + file("tree.yaml") + " --check --json");
  ASSERT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["check"], "pass");

  // Swap init and update: every update would run before its initialization.
  std::string tree = dump.out;
  auto init = tree.find("        - filter: \"{ S0[m, n]");
  auto update = tree.find("        - filter: \"{ S1[m, n, k]");
  ASSERT_NE(init, std::string::npos);
  ASSERT_NE(update, std::string::npos);
  std::string swapped = tree.substr(0, init) + tree.substr(update) + tree.substr(init, update - init);
  writeText(file("bad.yaml"), swapped);
  auto bad = runTessel("run " + file("mm.tc") + " --schedule " + file("bad.yaml"));
  EXPECT_EQ(bad.exitCode, 2);
  EXPECT_NE(bad.err.find("runs a dependence sink no later than its source"), std::string::npos) << bad.err;

  auto otherSizes = runTessel("run " + file("mm.tc") + " --schedule " + file("tree.yaml") + " --size M=3");
  EXPECT_EQ(otherSizes.exitCode, 2);
  EXPECT_NE(otherSizes.err.find("does not cover the program's statement instances"), std::string::npos);

  writeText(file("garbage.yaml"), "domain: [\n");
  auto garbage = runTessel("compile " + file("mm.tc") + " --schedule " + file("garbage.yaml"));
  EXPECT_EQ(garbage.exitCode, 2);
  EXPECT_NE(garbage.err.find("cannot read a schedule tree"), std::string::npos) << garbage.err;

  auto missing = runTessel("compile " + file("mm.tc") + " --schedule " + file("none.yaml"));
  EXPECT_EQ(missing.exitCode, 2);

  writeText(file("empty.yaml"), "");
  auto empty = runTessel("run " + file("mm.tc") + " --schedule " + file("empty.yaml"));
  EXPECT_EQ(empty.exitCode, 2);
  EXPECT_NE(empty.err.find("cannot read a schedule tree"), std::string::npos) << empty.err;

  // Dropping the update's filter leaves its instances unexecuted.
  auto updateEnd = tree.find('\n', tree.find("schedule: \"[{ S1[m, n, k] -> [(k)] }]\"", update));
  writeText(file("dropped.yaml"), tree.substr(0, update) + tree.substr(updateEnd + 1));
  auto dropped = runTessel("run " + file("mm.tc") + " --schedule " + file("dropped.yaml"));
  EXPECT_EQ(dropped.exitCode, 2);
  EXPECT_NE(dropped.err.find("never executes these statement instances"), std::string::npos) << dropped.err;

  // Repeating the init filter runs it twice.
  std::string initLine = tree.substr(init, tree.find('\n', init) - init + 1);
  writeText(file("twice.yaml"), tree.substr(0, init) + initLine + tree.substr(init));
  auto twice = runTessel("run " + file("mm.tc") + " --schedule " + file("twice.yaml"));
  EXPECT_EQ(twice.exitCode, 2);
  EXPECT_NE(twice.err.find("more than once"), std::string::npos) << twice.err;

  // Guards restrict code generation in ways the check cannot see: refused.
  std::string guarded =
      "{ domain: \"{ S0[m, n] : 0 <= m < 13 and 0 <= n < 7; S1[m, n, k] : 0 <= m < 13 and 0 <= n < 7 and "
      "0 <= k < 5 }\", child: { guard: \"{ [] }\", child: { sequence: [ { filter: \"{ S0[m, n] }\" }, "
      "{ filter: \"{ S1[m, n, k] }\" } ] } } }";
  writeText(file("guard.yaml"), guarded);
  auto guard = runTessel("run " + file("mm.tc") + " --schedule " + file("guard.yaml"));
  EXPECT_EQ(guard.exitCode, 2);
  EXPECT_NE(guard.err.find("has a guard node"), std::string::npos) << guard.err;

  // A tree dumped after basteln holds its fusions' extension nodes: refused, with the trees to give instead.
  writeText(file("blur.tc"),
            "# sizes: H=18 W=21\ndef blur(float(H, W) I) -> (O) {\n"
            "  B(h, w) = (I(h, w) + I(h, w + 1) + I(h, w + 2)) / 3 where h in 0:H, w in 0:W - 2\n"
            "  O(h, w) = (B(h, w) + B(h + 1, w) + B(h + 2, w)) / 3 where h in 0:H - 2, w in 0:W - 2\n}\n");
  auto fused = runTessel("compile " + file("blur.tc") + " --tiles \"*: 4@L2\" --dump-after=basteln");
  ASSERT_EQ(fused.exitCode, 0) << fused.err;
  ASSERT_NE(fused.out.find("extension:"), std::string::npos) << fused.out;
  writeText(file("fused.yaml"), fused.out);
  auto extension = runTessel("run " + file("blur.tc") + " --schedule " + file("fused.yaml"));
  EXPECT_EQ(extension.exitCode, 2);
  EXPECT_NE(extension.err.find("has an extension node"), std::string::npos) << extension.err;
  EXPECT_NE(extension.err.find("--dump-after schedule or basteln-group"), std::string::npos) << extension.err;
}

// A "parallel" mark written by hand on the reduction loop is not trusted.
TEST_F(Cli, HandWrittenParallelMarksAreRecomputed) {
  writeText(file("rowsum.tc"),
            "# sizes: N=5 M=7\ndef rowsum(float(N, M) A) -> (S) {\n  S(i) +=! A(i, j)\n}\n");
  auto dump = runTessel("compile " + file("rowsum.tc") + " --dump-after=extract");
  ASSERT_EQ(dump.exitCode, 0) << dump.err;
  std::string tree = dump.out;
  const std::string band = "          child:\n            schedule: \"[{ S1[i, j] -> [(j)] }]\"";
  auto at = tree.find(band);
  ASSERT_NE(at, std::string::npos) << tree;
  tree.replace(at, band.size(),
               "          child:\n            mark: \"parallel\"\n            child:\n"
               "              schedule: \"[{ S1[i, j] -> [(j)] }]\"");
  writeText(file("marked.yaml"), tree);
  auto c = runTessel("compile " + file("rowsum.tc") + " --schedule " + file("marked.yaml") + " --emit c");
  ASSERT_EQ(c.exitCode, 0) << c.err << tree;
  EXPECT_EQ(c.out.find("#pragma omp parallel for schedule(static)\n    for (long c1"), std::string::npos)
      << c.out;
  auto r = runTessel("run " + file("rowsum.tc") + " --schedule " + file("marked.yaml") + " --check");
  EXPECT_EQ(r.exitCode, 0) << r.err;
}

// The ahead-of-time library links from plain C and computes the right result.
TEST_F(Cli, AheadOfTimeLibraryLinksFromC) {
  auto r = runTessel("compile " + file("mm.tc") + " -o " + file("lib"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  writeText(file("main.c"),
            "#include <math.h>\n#include <stdio.h>\n#include \"matmul.h\"\n"
            "int main(void) {\n"
            "  float A[13*5], B[5*7], C[13*7];\n"
            "  for (int i = 0; i < 13*5; ++i) A[i] = (float)(i % 11) - 5.0f;\n"
            "  for (int i = 0; i < 5*7; ++i) B[i] = (float)(i % 7) * 0.5f;\n"
            "  if (matmul(A, B, C) != 0) return 3;\n"
            "  for (int m = 0; m < 13; ++m) for (int n = 0; n < 7; ++n) {\n"
            "    float want = 0; for (int k = 0; k < 5; ++k) want += A[m*5+k] * B[k*7+n];\n"
            "    if (fabsf(C[m*7+n] - want) > 1e-4f) { printf(\"mismatch %d %d\\n\", m, n); return 1; }\n"
            "  }\n"
            "  printf(\"ok\\n\");\n  return 0;\n}\n");
  // Kernel flags the library was built with (sanitizers under `make test-asan`) apply to the program too.
  const char* kernelFlags = std::getenv("TESSEL_CFLAGS");
  auto build = runCommand("cc -std=c99 " + std::string(kernelFlags ? kernelFlags : "") + " -o " +
                          file("main") + " " + file("main.c") + " -I" + file("lib") + " -L" + file("lib") +
                          " -lmatmul -Wl,-rpath," + file("lib") + " -lm");
  ASSERT_EQ(build.exitCode, 0) << build.out << build.err;
  auto run = runCommand(file("main"));
  EXPECT_EQ(run.exitCode, 0) << run.out << run.err;
  EXPECT_EQ(run.out, "ok\n");
  // The header is also valid C++.
  auto cxx = runCommand("echo '#include \"matmul.h\"' | c++ -fsyntax-only -x c++ -I" + file("lib") + " -");
  EXPECT_EQ(cxx.exitCode, 0) << cxx.err;
}

}  // namespace
}  // namespace tessel::testing
