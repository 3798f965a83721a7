#include <iostream>

#include "Commands.h"
#include "fuzz/Fuzzer.h"
#include "fuzz/ProgramModel.h"

namespace tessel::cli {

CommandRunner addFuzzCommand(CLI::App& app) {
  auto options = std::make_shared<fuzz::FuzzOptions>();
  CLI::App* cmd = app.add_subcommand(
      "fuzz",
      "Differential fuzzing: random TC programs, every option combination, checked against the interpreter");
  cmd->add_option("--seed", options->seed, "seed of the run (programs are reproducible from it)");
  cmd->add_option("--count", options->count, "number of programs")->check(CLI::PositiveNumber);
  cmd->add_option(
         "--first", options->first,
         "index of the first program: --first 2500 --count 2500 runs the second half of --count 5000")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--time-budget", options->timeBudget, "stop starting new programs after this many seconds")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--timeout", options->timeoutSeconds,
                  "seconds one option combination may run (compile and check) before it counts as a hang")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--jobs,-j", options->jobs, "programs checked at once (results do not depend on it)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("!--no-minimize", options->minimize, "report failures as generated, without delta reduction");
  auto print = std::make_shared<bool>(false);
  cmd->add_flag("--print", *print, "print the programs (as TC) instead of checking them");
  return [options, print] {
    if (*print) {
      for (int i = options->first; i < options->first + options->count; ++i) {
        uint64_t seed = fuzz::programSeed(options->seed, i);
        std::cout << "# program " << i << " of seed " << options->seed << " (program seed " << seed << ")\n"
                  << fuzz::render(fuzz::generateProgram(seed)) << "\n";
      }
      return 0;
    }
    fuzz::FuzzReport report = fuzz::runFuzz(*options, std::cerr);
    std::cout << fuzz::summarize(report, *options);
    return report.failures.empty() ? 0 : 1;
  };
}

}  // namespace tessel::cli
