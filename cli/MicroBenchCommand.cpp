// tessel microbench: measures every micro-kernel of the TTILE families on
// this machine and stores the classes the scheme search composes from.
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "Commands.h"
#include "target/DetectHost.h"
#include "target/MeasureHost.h"
#include "tune/MicroBench.h"

namespace tessel::cli {

namespace {

struct MicroBenchArgs {
  tune::MicroBenchOptions options;
  std::string families = "A,B,C,D";
  std::string output;  // "" = the machine's default path
  bool json = false;
};

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string percent(double share) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * share);
  return buf;
}

}  // namespace

CommandRunner addMicroBenchCommand(CLI::App& app) {
  auto args = std::make_shared<MicroBenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "microbench",
      "Measure the register-tile micro-kernels (TTILE families A: plain, B: s unrolled 3x, C: r unrolled, D: "
      "both) on this machine and store the classes within 85% of each family's best, which --scheme search "
      "composes from");
  cmd->add_option("--families", args->families, "families to measure, e.g. A,C (default A,B,C,D)");
  cmd->add_option("--max-alpha", args->options.maxAlpha,
                  "most vectors along the vector dimension (default: all "
                  "that fit the registers)")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--max-beta", args->options.maxBeta, "most rows unrolled (default 15)")
      ->check(CLI::Range(1, 32));
  cmd->add_option("--reduction", args->options.reduction,
                  "length of the reduction loop around the tile (default "
                  "512)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--min-time", args->options.minSeconds, "seconds of timed runs per kernel (default 0.05)")
      ->check(CLI::Range(0.0, 60.0));
  cmd->add_option("--output", args->output,
                  "where to write the table (default: Tessel's cache, per machine)");
  cmd->add_flag("--json", args->json, "print the table as JSON");
  return [args] {
    args->options.families = splitCommas(args->families);
    for (const auto& name : args->options.families)
      if (!microkernel::microKernelFamily(name))
        userError("tessel microbench: no micro-kernel family '" + name + "' (A, B, C or D)");
    target::Hardware host = target::detectHost();
    // Shares of the measured FMA peak: the computed one (units x nominal
    // clock) misses turbo and reads above 100% here.
    target::measureHost(host);
    if (!args->json)
      std::cout << "peak: " << host.peakF32FlopsPerCore / 1e9 << " GFLOP/s per core (measured)\n";
    if (!args->json)
      args->options.progress = [](const microkernel::MeasuredMicroKernel& m) {
        char line[128];
        std::snprintf(line, sizeof line, "  %s  alpha %2d  beta %2d  %7.1f GFLOP/s  %s of peak\n",
                      m.family.c_str(), m.alpha, m.beta, m.gflops, percent(m.peakShare).c_str());
        std::cout << line << std::flush;
      };
    microkernel::MicroKernelTable table = tune::measureMicroKernels(host, args->options);
    std::string path = args->output.empty() ? tune::defaultTablePath(host) : args->output;
    // The machine's own table keeps the families measured before and not now.
    if (args->output.empty())
      if (std::optional<microkernel::MicroKernelTable> stored = tune::storedTable(host))
        table = microkernel::mergedTable(*stored, table);
    tune::storeTable(table, path);
    if (args->json) {
      std::cout << microkernel::toJson(table);
      return 0;
    }
    std::cout << "classes (within 85% of their family's best):\n";
    for (const auto& c : table.classes)
      std::cout << "  " << c.family << "  alpha " << c.alpha << "  beta " << c.betaMin << ".." << c.betaMax
                << "  best " << percent(c.bestShare) << " of the family's best\n";
    std::cout << "written to " << path << "\n";
    return 0;
  };
}

}  // namespace tessel::cli
