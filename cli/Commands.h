// The tessel subcommands. Each registers its options on a CLI11 app and
// returns the process exit code when run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace tessel::cli {

using CommandRunner = std::function<int()>;

CommandRunner addRunCommand(CLI::App& app);
CommandRunner addCompileCommand(CLI::App& app);
CommandRunner addFuzzCommand(CLI::App& app);
CommandRunner addBenchCommand(CLI::App& app);
CommandRunner addTargetCommand(CLI::App& app);

}  // namespace tessel::cli
