#include <iostream>
#include <memory>

#include "Commands.h"
#include "driver/Strategy.h"

namespace tessel::cli {

CommandRunner addPassesCommand(CLI::App& app) {
  auto target = std::make_shared<std::string>("cpu");
  CLI::App* cmd = app.add_subcommand(
      "passes", "Print a target's pipeline: every stage in order, the IR it reads and writes, when it runs");
  std::string targets;
  for (const auto* s : driver::targetStrategies())
    targets += (targets.empty() ? "" : ", ") + std::string(s->name());
  cmd->add_option("--target", *target, "the target whose pipeline to print: " + targets + " (default cpu)");
  return [target] {
    std::cout << driver::targetStrategy(*target).pipeline().describe();
    return 0;
  };
}

}  // namespace tessel::cli
