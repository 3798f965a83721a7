// The report's CSV and JSON columns and its sweep summaries, on a hand-made
// BenchReport: nothing is timed, every figure is given.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../support/RunTool.h"
#include "bench/Report.h"

namespace tessel::bench {
namespace {

using tessel::testing::makeTempDir;
using tessel::testing::readText;
using tessel::testing::runCommand;

constexpr int64_t kFlops = 2'000'000'000;

// A compute-bound case of `family` at `x` that ran at `gflops`.
CaseResult sweepCase(const std::string& family, int64_t x, int threads, double gflops,
                     const std::string& check = "pass") {
  CaseResult r;
  r.name = family + "_" + std::to_string(x);
  r.program = "examples/matmul.tc";
  r.sweep = family;
  r.sweepX = x;
  r.threads = threads;
  r.flops = kFlops;
  r.bytes = 1'000'000;
  r.roofline.bound = Bound::Compute;
  r.check = check;
  r.gflops = gflops;
  r.tesselMs = static_cast<double>(kFlops) / gflops / 1e6;
  r.runs = 5;
  return r;
}

// A peer timed at `ratio` x Tessel's time (< 1: the peer is faster).
PeerResult timedPeer(const CaseResult& r, const std::string& name, double ratio) {
  PeerResult p;
  p.peer = name;
  p.ratio = ratio;
  p.medianMs = ratio * r.tesselMs;
  p.runs = 5;
  return p;
}

PeerResult untimedPeer(const std::string& name, PeerStatus status) {
  PeerResult p;
  p.peer = name;
  p.status = status;
  p.message = "not built in";
  return p;
}

// Family mm at 1 thread: fastest X=512 (125), slowest from 64 up X=1009 (80,
// unchecked still counts), below 64 the worst against the best peer at X=8
// (0.5); X=32 fails its check and counts for nothing. mm at 2 threads, small
// (no case from 64 up) and broken (no case that counts) besides, and a case
// in no sweep.
BenchReport sweepReport() {
  BenchReport report;
  report.suite = "sizes.suite";
  CaseResult x2 = sweepCase("mm", 2, 1, 5);
  x2.peers.push_back(untimedPeer("onednn.matmul", PeerStatus::Unavailable));
  CaseResult x8 = sweepCase("mm", 8, 1, 20);
  x8.peers = {timedPeer(x8, "onednn.matmul", 0.5), timedPeer(x8, "openblas.sgemm", 0.8)};
  CaseResult x16 = sweepCase("mm", 16, 1, 40);
  // --versus's Tessel is no peer: its 0.1 does not count.
  x16.peers = {timedPeer(x16, "onednn.matmul", 0.9), timedPeer(x16, "openblas.sgemm", 1.2),
               timedPeer(x16, "tessel[fusion=min]", 0.1)};
  CaseResult x32 = sweepCase("mm", 32, 1, 500, "FAIL: C: 3 elements differ");
  x32.peers = {timedPeer(x32, "onednn.matmul", 0.01)};
  CaseResult small = sweepCase("small", 4, 1, 3);
  small.peers = {timedPeer(small, "onednn.matmul", 2.0)};
  CaseResult other = sweepCase("", 0, 1, 50);
  other.name = "other";
  report.results = {x2,
                    x8,
                    x16,
                    x32,
                    sweepCase("mm", 64, 1, 100),
                    sweepCase("mm", 512, 1, 125),
                    sweepCase("mm", 1009, 1, 80, "unchecked (4e9 points > --check-limit)"),
                    sweepCase("mm", 128, 2, 200),
                    small,
                    sweepCase("broken", 100, 1, 90, "FAIL: C: 1 element differs"),
                    other};
  return report;
}

const SweepSummary& summaryOf(const std::vector<SweepSummary>& sweeps, const std::string& family,
                              int threads) {
  for (const SweepSummary& s : sweeps)
    if (s.family == family && s.threads == threads) return s;
  ADD_FAILURE() << "no summary of " << family << " at " << threads << " thread(s)";
  static const SweepSummary none{};
  return none;
}

TEST(BenchReport, SweepSummariesPerFamilyAndThreadCount) {
  std::vector<SweepSummary> sweeps = sweepSummaries(sweepReport());
  ASSERT_EQ(sweeps.size(), 4u);  // by family, then thread count; "other" is in none
  EXPECT_EQ(sweeps[0].family, "broken");
  EXPECT_EQ(sweeps[1].family, "mm");
  EXPECT_EQ(sweeps[1].threads, 1);
  EXPECT_EQ(sweeps[2].threads, 2);

  const SweepSummary& mm = summaryOf(sweeps, "mm", 1);
  EXPECT_EQ(mm.cases, 6);  // not X=32, which failed its check
  ASSERT_TRUE(mm.fastest);
  EXPECT_EQ(mm.fastest->x, 512);
  EXPECT_DOUBLE_EQ(mm.fastest->value, 125);
  ASSERT_TRUE(mm.slowestFrom64);
  EXPECT_EQ(mm.slowestFrom64->x, 1009);
  EXPECT_DOUBLE_EQ(mm.slowestFrom64->value, 80);
  ASSERT_TRUE(mm.slowestFrom64Fraction());
  EXPECT_DOUBLE_EQ(*mm.slowestFrom64Fraction(), 80.0 / 125.0);
  ASSERT_TRUE(mm.lowestPeerRatioBelow64);
  EXPECT_EQ(mm.lowestPeerRatioBelow64->x, 8);
  EXPECT_DOUBLE_EQ(mm.lowestPeerRatioBelow64->value, 0.5);

  const SweepSummary& mm2 = summaryOf(sweeps, "mm", 2);
  EXPECT_EQ(mm2.cases, 1);
  ASSERT_TRUE(mm2.slowestFrom64Fraction());
  EXPECT_DOUBLE_EQ(*mm2.slowestFrom64Fraction(), 1.0);
  EXPECT_FALSE(mm2.lowestPeerRatioBelow64);  // no case below 64

  const SweepSummary& small = summaryOf(sweeps, "small", 1);
  EXPECT_EQ(small.cases, 1);
  EXPECT_FALSE(small.slowestFrom64);
  ASSERT_TRUE(small.lowestPeerRatioBelow64);
  EXPECT_DOUBLE_EQ(small.lowestPeerRatioBelow64->value, 2.0);

  const SweepSummary& broken = summaryOf(sweeps, "broken", 1);
  EXPECT_EQ(broken.cases, 0);
  EXPECT_FALSE(broken.fastest);
  EXPECT_FALSE(broken.slowestFrom64Fraction());
}

TEST(BenchReport, TextSummaryEndsWithTheSweeps) {
  std::ostringstream out;
  TablePrinter(out).summary(sweepReport());
  std::string text = out.str();
  size_t sweeps = text.find("\nsweeps (Tessel GFLOP/s per family)\n");
  ASSERT_NE(sweeps, std::string::npos) << text;
  EXPECT_LT(text.find("geomean of peer ms / Tessel ms"), sweeps) << text;
  EXPECT_NE(text.find("1 thr: 6 case(s); fastest X=512 125.0 GFLOP/s; slowest from 64 up: X=1009 80.0 "
                      "GFLOP/s, 0.64 of the fastest; below 64: lowest vs the best peer 0.50 at X=8\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("2 thr: 1 case(s); fastest X=128 200.0 GFLOP/s; slowest from 64 up: X=128 200.0 "
                      "GFLOP/s, 1.00 of the fastest\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1 thr: 1 case(s); fastest X=4 3.0 GFLOP/s; below 64: lowest vs the best peer 2.00 at "
                      "X=4\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("broken"), std::string::npos) << text;

  BenchReport plain = sweepReport();
  for (CaseResult& r : plain.results) r.sweep.clear();
  std::ostringstream noSweeps;
  TablePrinter(noSweeps).summary(plain);
  EXPECT_EQ(noSweeps.str().find("sweeps"), std::string::npos) << noSweeps.str();
}

class ReportFiles : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = makeTempDir("tessel-report-"); }
  void TearDown() override { runCommand("rm -rf " + dir_); }
  std::string dir_;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

size_t fields(const std::string& csvLine) {
  return static_cast<size_t>(std::count(csvLine.begin(), csvLine.end(), ',')) + 1;
}

TEST_F(ReportFiles, CsvEndsWithTheSweepColumns) {
  writeCsv(dir_ + "/out.csv", sweepReport());
  std::vector<std::string> rows = lines(readText(dir_ + "/out.csv"));
  ASSERT_FALSE(rows.empty());
  const std::string& header = rows[0];
  EXPECT_EQ(header,
            "case,threads,contestant,status,median_ms,runs,ratio,gflops,gbps,bound,percent_of_peak,check,"
            "flops,bytes,intensity,message,sweep,sweep_x");
  // No field in this report holds a comma or a quote: counting commas counts fields.
  bool sawTessel = false, sawPeer = false, sawOther = false;
  for (size_t i = 1; i < rows.size(); ++i) {
    const std::string& row = rows[i];
    EXPECT_EQ(fields(row), fields(header)) << row;
    if (row.rfind("mm_8,1,tessel,ok,", 0) == 0) {
      sawTessel = true;
      EXPECT_TRUE(row.ends_with(",,mm,8")) << row;  // an empty message, then the sweep
    }
    if (row.rfind("mm_2,1,onednn.matmul,unavailable,", 0) == 0) {
      sawPeer = true;
      EXPECT_TRUE(row.ends_with(",not built in,mm,2")) << row;
    }
    if (row.rfind("other,", 0) == 0) {
      sawOther = true;
      EXPECT_TRUE(row.ends_with(",,,")) << row;  // message, sweep and sweep_x empty
    }
  }
  EXPECT_TRUE(sawTessel && sawPeer && sawOther);
}

TEST_F(ReportFiles, JsonHoldsTheSweepOfEachCaseAndTheSummaries) {
  writeJson(dir_ + "/out.json", sweepReport());
  auto j = nlohmann::json::parse(readText(dir_ + "/out.json"));
  ASSERT_EQ(j["results"].size(), 11u);
  EXPECT_EQ(j["results"][1]["case"], "mm_8");
  EXPECT_EQ(j["results"][1]["sweep"], "mm");
  EXPECT_EQ(j["results"][1]["sweep_x"], 8);
  EXPECT_EQ(j["results"][10]["case"], "other");
  EXPECT_FALSE(j["results"][10].contains("sweep"));
  EXPECT_FALSE(j["results"][10].contains("sweep_x"));

  const auto& sweeps = j["sweeps"];
  ASSERT_EQ(sweeps.size(), 4u);
  const auto& mm = sweeps[1];
  EXPECT_EQ(mm["family"], "mm");
  EXPECT_EQ(mm["threads"], 1);
  EXPECT_EQ(mm["cases"], 6);
  EXPECT_EQ(mm["fastest_x"], 512);
  EXPECT_DOUBLE_EQ(mm["fastest_gflops"].get<double>(), 125);
  EXPECT_EQ(mm["slowest_from_64_x"], 1009);
  EXPECT_DOUBLE_EQ(mm["slowest_from_64_gflops"].get<double>(), 80);
  EXPECT_DOUBLE_EQ(mm["slowest_from_64_fraction"].get<double>(), 0.64);
  EXPECT_DOUBLE_EQ(mm["lowest_peer_ratio_below_64"].get<double>(), 0.5);
  EXPECT_EQ(mm["lowest_peer_ratio_below_64_x"], 8);

  const auto& broken = sweeps[0];  // no case counts: only what it has
  EXPECT_EQ(broken["family"], "broken");
  EXPECT_EQ(broken["cases"], 0);
  for (const char* absent : {"fastest_x", "fastest_gflops", "slowest_from_64_x", "slowest_from_64_fraction",
                             "lowest_peer_ratio_below_64", "lowest_peer_ratio_below_64_x"})
    EXPECT_FALSE(broken.contains(absent)) << absent;
  const auto& small = sweeps[3];
  EXPECT_EQ(small["family"], "small");
  EXPECT_FALSE(small.contains("slowest_from_64_x"));
  EXPECT_EQ(small["lowest_peer_ratio_below_64_x"], 4);

  BenchReport plain = sweepReport();
  for (CaseResult& r : plain.results) r.sweep.clear();
  writeJson(dir_ + "/plain.json", plain);
  EXPECT_TRUE(nlohmann::json::parse(readText(dir_ + "/plain.json"))["sweeps"].empty());
}

}  // namespace
}  // namespace tessel::bench
