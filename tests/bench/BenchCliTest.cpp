// `tessel bench` end to end on a tiny suite (no assertion on any time), and
// its user errors: located, exit code 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "../support/RunTool.h"

namespace tessel::testing {
namespace {

class BenchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = makeTempDir("tessel-bench-");
    writeText(dir_ + "/mm.tc",
              "# sizes: M=13 N=7 K=5\n"
              "def matmul(float(M,K) A, float(K,N) B) -> (C) {\n"
              "  C(m, n) +=! A(m, k) * B(k, n)\n"
              "}\n");
    writeText(dir_ + "/relu.tc",
              "# sizes: M=7 N=13\n"
              "def relu(float(M,N) I) -> (O) { O(m, n) = fmax(I(m, n), 0) }\n");
    writeText(dir_ + "/tiny.suite",
              "# a tiny suite\n"
              "mm_tiny  mm.tc  M=17 sweep=mm:17  peers=onednn.matmul,openblas.sgemm,xnnpack.fully_connected\n"
              "relu_tiny  relu.tc        peers=onednn.relu,onednn.tanh  # tanh is a wrong mapping\n");
  }
  void TearDown() override { runCommand("rm -rf " + dir_); }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

TEST_F(BenchCli, RunsATinySuiteAndWritesJsonAndCsv) {
  auto r =
      runTessel("bench " + file("tiny.suite") + " --min-time 0 --min-runs 1 --threads 1 --quiet --json " +
                file("out.json") + " --csv " + file("out.csv"));
  ASSERT_EQ(r.exitCode, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("mm_tiny"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("geomean"), std::string::npos) << r.out;
  auto j = nlohmann::json::parse(readText(file("out.json")));
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& mm = j["results"][0];
  EXPECT_EQ(mm["case"], "mm_tiny");
  EXPECT_EQ(mm["check"], "pass");
  EXPECT_EQ(mm["threads"], 1);
  EXPECT_EQ(mm["flops"], 2 * 17 * 7 * 5);
  EXPECT_EQ(mm["sizes"]["M"], 17);
  ASSERT_EQ(mm["peers"].size(), 3u);
  for (const auto& p : mm["peers"]) {
    std::string status = p["status"];
    EXPECT_TRUE(status == "ok" || status == "unavailable") << p.dump();
    if (status == "ok") {
      EXPECT_GE(p["runs"].get<int>(), 1);
    }
  }
  const auto& relu = j["results"][1];
  EXPECT_EQ(relu["peers"][1]["peer"], "onednn.tanh");
  std::string tanh = relu["peers"][1]["status"];
  EXPECT_TRUE(tanh == "WRONG" || tanh == "unavailable") << tanh;
  std::string csv = readText(file("out.csv"));
  EXPECT_EQ(csv.rfind("case,threads,contestant,status,median_ms", 0), 0u) << csv;
  EXPECT_NE(csv.find("mm_tiny,1,tessel,ok,"), std::string::npos) << csv;
  // The sweep: last in the CSV, beside the case in the JSON, and summarized.
  EXPECT_NE(csv.find(",message,sweep,sweep_x\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",mm,17\n"), std::string::npos) << csv;
  EXPECT_EQ(mm["sweep"], "mm");
  EXPECT_EQ(mm["sweep_x"], 17);
  EXPECT_FALSE(relu.contains("sweep"));
  ASSERT_EQ(j["sweeps"].size(), 1u);
  EXPECT_EQ(j["sweeps"][0]["family"], "mm");
  EXPECT_NE(r.out.find("sweeps (Tessel GFLOP/s per family)"), std::string::npos) << r.out;
}

TEST_F(BenchCli, FilterAndThreadList) {
  auto r =
      runTessel("bench " + file("tiny.suite") +
                " --min-time 0 --min-runs 1 --threads 1,2 --quiet --filter '^relu' --json " + file("f.json"));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto j = nlohmann::json::parse(readText(file("f.json")));
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][0]["case"], "relu_tiny");
  EXPECT_EQ(j["results"][1]["threads"], 2);
}

TEST_F(BenchCli, BadSuitesAreLocatedUserErrors) {
  writeText(file("bad.suite"), "ok mm.tc\nmm mm.tc peers=onednn.matmull\n");
  auto r = runTessel("bench " + file("bad.suite") + " --min-time 0");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find(file("bad.suite") + ":2:23: error: unknown peer operator 'onednn.matmull'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("mm mm.tc peers=onednn.matmull"), std::string::npos)
      << r.err;  // the line, with a caret

  writeText(file("size.suite"), "mm mm.tc Z=3\n");
  r = runTessel("bench " + file("size.suite"));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("size.suite:1:10: error: unknown size 'Z' for 'matmul'"), std::string::npos) << r.err;

  EXPECT_EQ(runTessel("bench " + file("missing.suite")).exitCode, 2);
  EXPECT_EQ(runTessel("bench").exitCode, 2);
}

TEST_F(BenchCli, BadOptionsAreUserErrors) {
  for (const char* opts :
       {"--threads 0", "--threads 1,x", "--options fusion=most", "--options unroll=4", "--filter '('"}) {
    auto r = runTessel("bench " + file("tiny.suite") + " --min-time 0 --quiet " + opts);
    EXPECT_EQ(r.exitCode, 2) << opts << ": " << r.err;
    EXPECT_NE(r.err.find("error"), std::string::npos) << opts << ": " << r.err;
  }
}

TEST_F(BenchCli, BadOptionsAreLocatedInTheirText) {
  struct {
    const char* options;
    const char* error;
  } cases[] = {
      {"fusion=min unroll=4", "--options:1:12: error: unknown option 'unroll'"},
      {"tiling=sometimes", "--options:1:8: error: bad tiling 'sometimes'"},
      {"fusion=min,tiles=S_1: 4@L1, 4x@L1", "--options:1:30: error: expected '@'"},
      // Found by the compiler, for the machine the run reports against.
      {"tiling=off tiles=S_1: 4@L1, 4@L1, 2@L9", "--options:1:35: error: unknown buffer 'L9'"},
  };
  for (const auto& c : cases) {
    auto r = runTessel("bench " + file("tiny.suite") + " --filter '^mm' --min-time 0 --quiet --options '" +
                       c.options + "'");
    EXPECT_EQ(r.exitCode, 2) << c.options << ": " << r.err;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << c.options << ": " << r.err;
    EXPECT_NE(r.err.find(std::string("  ") + c.options + "\n"), std::string::npos)
        << c.options << ": " << r.err;  // the text, with a caret under the mistake
  }
}

TEST_F(BenchCli, CompileOptionsReachTessel) {
  auto r = runTessel("bench " + file("tiny.suite") +
                     " --filter '^mm' --min-time 0 --min-runs 1 --threads 1 --quiet --json " +
                     file("o.json") + " --options 'fusion=max tiling=off tiles=S_1: 4@L1, 2@L1, 2@L1'");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto j = nlohmann::json::parse(readText(file("o.json")));
  ASSERT_EQ(j["results"].size(), 1u);
  EXPECT_EQ(j["results"][0]["check"], "pass");
}

TEST_F(BenchCli, HelpComesFromTesselBench) {
  auto r = runTessel("bench --help");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("tessel bench"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("basteln-redundancy, scheduler"), std::string::npos)
      << r.out;  // the option table's keys
  auto listed = runTessel("--help");
  ASSERT_EQ(listed.exitCode, 0) << listed.err;
  EXPECT_NE(listed.out.find("bench"), std::string::npos) << listed.out;
}

// Only tessel-bench links the peer libraries: every other command (and the
// children `tessel fuzz` forks) starts without loading them.
TEST(BenchExecutable, TesselLinksNoPeerLibrary) {
  if (runCommand("command -v ldd").exitCode != 0) GTEST_SKIP() << "no ldd on this machine";
  auto r = runCommand(std::string("ldd ") + TESSEL_BINARY);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const char* library : {"libdnnl", "libopenblas", "libXNNPACK", "libpthreadpool"})
    EXPECT_EQ(r.out.find(library), std::string::npos) << library << " in\n" << r.out;
}

TEST(BenchExecutable, MissingTesselBenchIsAUserError) {
  std::string dir = makeTempDir("tessel-alone-");
  runCommand(std::string("cp ") + TESSEL_BINARY + " " + dir + "/tessel");
  auto r = runCommand(dir + "/tessel bench --list-peers");
  runCommand("rm -rf " + dir);
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("error: tessel bench runs '" + dir + "/tessel-bench', which is missing"),
            std::string::npos)
      << r.err;
}

TEST_F(BenchCli, ListsPeers) {
  auto r = runTessel("bench --list-peers");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("onednn.matmul"), std::string::npos);
  EXPECT_NE(r.out.find("openblas.sgemm"), std::string::npos);
  EXPECT_NE(r.out.find("xnnpack.fully_connected"), std::string::npos);
}

}  // namespace
}  // namespace tessel::testing
