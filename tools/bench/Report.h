// How `tessel bench` shows its results: a table printed as cases finish,
// geometric means of the peer/Tessel ratios, a summary of each size sweep,
// and CSV and JSON files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "bench/Harness.h"

namespace tessel::bench {

// Prints the machine, the header, then one block of rows per result.
class TablePrinter {
 public:
  explicit TablePrinter(std::ostream& os) : os_(os) {}
  void header(const std::string& suite, const MachineSummary& m);
  void row(const CaseResult& r);
  // Geometric mean of peer time / Tessel time per peer family and thread
  // count, then each sweep family's summary (sweepSummaries) when a case has one.
  void summary(const BenchReport& report);

 private:
  std::ostream& os_;
  std::set<std::string> notedCases_;  // notes are said once per case, not per thread count
};

// family -> threads -> (geomean of peer/Tessel ratios, number of cases).
std::map<std::string, std::map<int, std::pair<double, int>>> geomeanRatios(const BenchReport& report);

// Below this X a sweep's sizes are about one register tile or one cache block:
// fixed costs (remainders, packing, thread start) rule there and the rate
// climbs with the size, so those cases are judged against the peers at the
// same size, and only the cases from it up against the family's fastest rate.
constexpr int64_t kSmallSweepX = 64;

// A case of a sweep family: its X and a figure of it.
struct SweepPoint {
  int64_t x = 0;
  double value = 0;
};

// One sweep family at one thread count. Only the cases where Tessel's result
// counts are summarized: checked or unchecked but not FAIL, timed, with FLOPs.
struct SweepSummary {
  std::string family;
  int threads = 1;
  int cases = 0;                            // the cases that count
  std::optional<SweepPoint> fastest;        // Tessel's highest GFLOP/s
  std::optional<SweepPoint> slowestFrom64;  // Tessel's lowest GFLOP/s at X >= kSmallSweepX
  // At X < kSmallSweepX, the lowest of Tessel's GFLOP/s over the best peer's
  // at the same case (peers that were timed; not --versus's Tessel).
  std::optional<SweepPoint> lowestPeerRatioBelow64;
  // slowestFrom64's GFLOP/s as a fraction of the fastest's.
  std::optional<double> slowestFrom64Fraction() const;
};

// By family, then thread count; empty when no case has a sweep family.
std::vector<SweepSummary> sweepSummaries(const BenchReport& report);

// UserError when the file cannot be written.
void writeCsv(const std::string& path, const BenchReport& report);
void writeJson(const std::string& path, const BenchReport& report);

}  // namespace tessel::bench
