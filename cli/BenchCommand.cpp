// tessel-bench, the executable `tessel bench SUITE` runs (cli/Main.cpp):
// Tessel and its peers side by side (tools/bench/). Only this executable links
// the peer libraries.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "Commands.h"
#include "bench/Harness.h"
#include "bench/PeerRegistry.h"
#include "bench/Report.h"
#include "bench/Suite.h"
#include "driver/OptionList.h"
#include "driver/OptionTable.h"
#include "target/DetectHost.h"
#include "target/MeasureHost.h"
#include "tessel/error.h"

namespace tessel::cli {

namespace {

struct BenchArgs {
  std::string suite;
  std::string filter;
  std::string threads;  // "1,2"
  double minTime = 0.5;
  int minRuns = 5;
  bool measure = false;
  std::string compileOptions;  // "fusion=min tiling=off"
  std::string versusOptions;   // Tessel again under these options, as a contestant
  std::string csv;
  std::string json;
  int64_t checkLimit = bench::BenchOptions{}.checkLimit;
  uint64_t seed = 1;
  bool listPeers = false;
  bool listCases = false;
  bool quiet = false;
};

std::vector<int> parseThreads(const std::string& list) {
  std::vector<int> threads;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t pos = 0;
    int n = 0;
    try {
      n = std::stoi(item, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (item.empty() || pos != item.size() || n < 1)
      userError("bad --threads '" + list + "': expected positive counts separated by commas, e.g. 1,2");
    threads.push_back(n);
  }
  if (threads.empty()) userError("bad --threads '': expected e.g. 1,2");
  return threads;
}

void listPeers(const std::vector<std::unique_ptr<bench::PeerFamily>>& families) {
  for (const auto& f : families) {
    std::cout << f->name() << " (" << (f->available() ? f->version() : "unavailable") << ")\n";
    for (const auto& op : f->operators())
      std::cout << "  " << f->name() << "." << op.name << "  " << op.computation << "\n";
  }
}

void printCases(const std::vector<bench::CaseSummary>& cases) {
  for (const auto& c : cases) {
    std::cout << c.name << "  " << c.program << " ";
    for (const auto& [name, value] : c.sizes) std::cout << " " << name << "=" << value;
    std::cout << std::fixed << std::setprecision(1) << "  " << c.flops / 1e6 << " MFLOP, " << c.bytes / 1e6
              << " MB";
    for (size_t i = 0; i < c.peers.size(); ++i) std::cout << (i ? "," : "  peers=") << c.peers[i];
    std::cout << "\n";
  }
}

int benchCommand(const BenchArgs& a) {
  auto families = bench::makePeerFamilies();
  if (a.listPeers) {
    listPeers(families);
    return 0;
  }
  if (a.suite.empty()) userError("tessel bench needs a SUITE file (e.g. bench/suites/ops.suite)");
  bench::Suite suite = bench::loadSuite(a.suite, bench::catalogOf(families));
  if (a.listCases) {
    printCases(bench::listCases(suite, a.filter));
    return 0;
  }
  bench::BenchOptions options;
  options.filter = a.filter;
  if (!a.threads.empty()) options.threads = parseThreads(a.threads);
  options.timing.minSeconds = a.minTime;
  options.timing.minRuns = a.minRuns;
  options.compile = driver::parseOptionList(a.compileOptions);
  if (!a.versusOptions.empty())
    options.versus =
        bench::BenchOptions::Versus{a.versusOptions, driver::parseOptionList(a.versusOptions, "--versus")};
  options.checkLimit = a.checkLimit;
  options.seed = a.seed;

  target::Hardware hw = target::detectHost();
  if (a.measure) target::measureHost(hw, &std::cerr);

  bench::TablePrinter table(std::cout);
  table.header(suite.file, bench::summarize(hw, families));
  bench::BenchReport report;
  try {
    report = bench::runBench(
        suite, options, hw, families, [&table](const bench::CaseResult& r) { table.row(r); },
        a.quiet ? nullptr : &std::cerr);
  } catch (const UserError& e) {
    throw driver::withOptionListLine(e, a.compileOptions);  // e.g. a tile level the machine lacks
  }
  table.summary(report);
  if (!a.csv.empty()) bench::writeCsv(a.csv, report);
  if (!a.json.empty()) bench::writeJson(a.json, report);
  // As `tessel run --check`: 1 when one of Tessel's results is wrong.
  for (const auto& r : report.results)
    if (r.check.rfind("FAIL", 0) == 0) return 1;
  return 0;
}

CommandRunner addBenchOptions(CLI::App* cmd) {
  auto args = std::make_shared<BenchArgs>();
  cmd->add_option("suite", args->suite, "suite file: one case a line, e.g. bench/suites/ops.suite");
  cmd->add_option("--filter", args->filter, "run only the cases whose name matches this regular expression");
  cmd->add_option("--threads", args->threads, "thread counts, e.g. 1,2 (default: 1 and all cores)");
  cmd->add_option("--min-time", args->minTime,
                  "seconds of timed runs each contestant gets at least (default 0.5)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-runs", args->minRuns, "timed runs each contestant gets at least (default 5)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--measure", args->measure,
                "measure the machine's fp32 peak and DRAM bandwidth first (a few seconds), for % of peak");
  cmd->add_option(
      "--options", args->compileOptions,
      "Tessel compile options as KEY=VALUE items, with the keys and values of tessel run's flags (" +
          driver::compileOptionKeys() +
          "; docs/cli.md); a policy or a scheme runs to the next KEY=, e.g. \"fusion=min tiles=S_1: 64@L2, "
          "32@L1\"");
  cmd->add_option(
      "--versus", args->versusOptions,
      "Tessel again under these compile options (as --options gives them), timed side by side as the "
      "contestant 'tessel[OPTIONS]', e.g. --options scheduler=tessel --versus scheduler=isl");
  cmd->add_option("--csv", args->csv, "also write the results as CSV to this file");
  cmd->add_option("--json", args->json, "also write the results as JSON to this file");
  cmd->add_option("--check-limit", args->checkLimit,
                  "interpret (check) only cases with at most this many statement instances; larger ones are "
                  "compared between Tessel and the peers")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", args->seed, "seed of the random inputs");
  cmd->add_flag("--list-peers", args->listPeers, "list every peer operator a suite may name, and exit");
  cmd->add_flag("--list", args->listCases, "list the cases (loaded and checked, with their costs) and exit");
  cmd->add_flag("--quiet", args->quiet, "no progress lines on stderr");
  return [args] { return benchCommand(*args); };
}

}  // namespace

}  // namespace tessel::cli

int main(int argc, char** argv) {
  CLI::App app{
      "Time Tessel against peer libraries (oneDNN, OpenBLAS, XNNPACK, Halide) on the cases of a suite file",
      "tessel bench"};
  auto bench = tessel::cli::addBenchOptions(&app);
  return tessel::cli::parseAndRun(app, argc, argv, bench);
}
