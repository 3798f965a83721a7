#include "ProgramOptions.h"

namespace tessel::cli {

void addProgramOptions(CLI::App* cmd, ProgramArgs& args) {
  cmd->add_option("file", args.spec.file, "Tensor Comprehensions source file")->required();
  cmd->add_option("--entry", args.spec.entry, "def to compile (default: the only def in the file)");
  cmd->add_option("--size", args.spec.sizeArgs,
                  "bind a size: NAME=VALUE (repeatable; defaults from '# sizes:')");
  cmd->add_option("--fusion", args.fusion, "fusion strategy: min, smart or max")
      ->check(CLI::IsMember({"min", "smart", "max"}));
  cmd->add_option(
      "--schedule", args.scheduleFile,
      "use this schedule tree (isl YAML, e.g. edited --dump-after output) instead of the scheduler's; "
      "it is checked against the dependences");
}

driver::CompileOptions compileOptionsFrom(const ProgramArgs& args) {
  driver::CompileOptions o;
  o.fusion = schedule::parseFusionStrategy(args.fusion);
  if (!args.scheduleFile.empty())
    o.schedule = driver::CompileOptions::ScheduleFile{args.scheduleFile, readTextFile(args.scheduleFile)};
  return o;
}

}  // namespace tessel::cli
