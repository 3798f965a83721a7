#include <iostream>
#include <memory>

#include "Commands.h"
#include "ProgramOptions.h"
#include "support/TextFile.h"
#include "tune/SchemeSearch.h"

namespace tessel::cli {

namespace {

struct OptArgs {
  ProgramArgs program;
  std::string pass;
  std::string treeFile;
};

int optCommand(const OptArgs& a) {
  front::LoadedProgram lp = front::loadProgram(a.program.spec);
  driver::CompileOptions options = compileOptionsFrom(a.program);
  driver::Machine machine = machineFrom(a.program);
  Remarks decided;  // a search measures whole kernels; the pass then runs on its choice
  options = tune::withSearchedScheme(lp.program, options, machine, decided);
  driver::PassAlone alone{a.pass, std::nullopt};
  if (!a.treeFile.empty())
    alone.tree = driver::CompileOptions::ScheduleFile{a.treeFile, readTextFile(a.treeFile)};
  driver::PassAloneResult result = driver::runPassAlone(lp.program, options, machine, alone);
  std::cout << result.output;
  // The pass's remarks after its output: golden tests check both.
  if (a.program.explain == "json")
    std::cout << result.remarks.json();
  else if (!a.program.explain.empty())
    std::cout << result.remarks.text();
  return 0;
}

}  // namespace

CommandRunner addOptCommand(CLI::App& app) {
  auto args = std::make_shared<OptArgs>();
  CLI::App* cmd = app.add_subcommand(
      "opt", "Run one pass of the pipeline alone and print its output (for testing a pass on a given tree)");
  addProgramOptions(cmd, args->program);
  cmd->add_option("--pass", args->pass, "the pass, by its name in `tessel passes`")->required();
  cmd->add_option(
      "--tree", args->treeFile,
      "the schedule tree the pass reads (isl YAML, as --dump-after prints it; checked against the "
      "dependences, marks kept); default: the tree the passes before it make");
  return [args] { return optCommand(*args); };
}

}  // namespace tessel::cli
