// How `tessel bench` shows its results: a table printed as cases finish,
// geometric means of the peer/Tessel ratios, and CSV and JSON files.
#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>

#include "bench/Harness.h"

namespace tessel::bench {

// Prints the machine, the header, then one block of rows per result.
class TablePrinter {
 public:
  explicit TablePrinter(std::ostream& os) : os_(os) {}
  void header(const std::string& suite, const MachineSummary& m);
  void row(const CaseResult& r);
  // Geometric mean of peer time / Tessel time per peer family and thread count.
  void summary(const BenchReport& report);

 private:
  std::ostream& os_;
  std::set<std::string> notedCases_;  // notes are said once per case, not per thread count
};

// family -> threads -> (geomean of peer/Tessel ratios, number of cases).
std::map<std::string, std::map<int, std::pair<double, int>>> geomeanRatios(const BenchReport& report);

// UserError when the file cannot be written.
void writeCsv(const std::string& path, const BenchReport& report);
void writeJson(const std::string& path, const BenchReport& report);

}  // namespace tessel::bench
