// The tessel subcommands. Each registers its options on a CLI11 app and
// returns the process exit code when run. `tessel bench` is the separate
// executable tessel-bench (cli/BenchCommand.cpp), which tessel runs.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace tessel::cli {

using CommandRunner = std::function<int()>;

CommandRunner addRunCommand(CLI::App& app);
CommandRunner addCompileCommand(CLI::App& app);
CommandRunner addFuzzCommand(CLI::App& app);
CommandRunner addTargetCommand(CLI::App& app);
CommandRunner addMicroBenchCommand(CLI::App& app);
CommandRunner addPassesCommand(CLI::App& app);
CommandRunner addOptCommand(CLI::App& app);
// Registered last: it prints every command registered before it.
CommandRunner addReferenceCommand(CLI::App& app);

// Runs `command` and maps every exception to the exit codes: 2 for a
// UserError (printed with its source line) or running out of memory, 3 for
// an internal error. Shared by tessel and tessel-bench.
int runReportingErrors(const CommandRunner& command);
// Parses the command line into `app` (--help, --version: exit 0; a bad
// command line: exit 2), then runs `dispatch` through runReportingErrors.
int parseAndRun(CLI::App& app, int argc, char** argv, const CommandRunner& dispatch);

}  // namespace tessel::cli
