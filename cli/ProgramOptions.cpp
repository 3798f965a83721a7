#include "ProgramOptions.h"

#include <iomanip>
#include <iostream>

#include "driver/OptionTable.h"
#include "support/TextFile.h"
#include "target/DetectHost.h"
#include "target/HardwareJson.h"
#include "tune/MicroKernelStore.h"

namespace tessel::cli {

void addProgramOptions(CLI::App* cmd, ProgramArgs& args) {
  cmd->add_option("file", args.spec.file, "Tensor Comprehensions source file")->required();
  cmd->add_option("--entry", args.spec.entry, "def to compile (default: the only def in the file)");
  cmd->add_option("--size", args.spec.sizeArgs,
                  "bind a size: NAME=VALUE (repeatable; defaults from '# sizes:')");
  for (const auto& row : driver::compileOptionRows()) {
    CLI::Option* option = cmd->add_option("--" + row.key, args.options[row.key], row.help);
    if (!row.choices.empty()) option->check(CLI::IsMember(row.choices));
    option->type_name(row.valueSyntax);
  }
  cmd->add_option("--hardware", args.hardwareFile,
                  "compile for the machine described in this JSON file (see 'tessel target --json')");
  cmd->add_flag(
         "--explain{text}", args.explain,
         "print the passes' decisions (tile sizes and the model's numbers); --explain=json prints them "
         "as structured remarks (pass, applied/missed/analysis, subject, message, named values)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_flag("--time-passes", args.timePasses, "print each compilation stage's wall time to stderr");
}

driver::CompileOptions compileOptionsFrom(const ProgramArgs& args) {
  driver::CompileOptions o;
  for (const auto& row : driver::compileOptionRows()) {
    auto given = args.options.find(row.key);
    if (given == args.options.end() || given->second.empty()) continue;
    std::string flag = "--" + row.key;
    try {
      row.parse(o, given->second, flag);
    } catch (const UserError& e) {
      if (e.loc().known() || !e.loc().file.empty()) throw;
      throw UserError(SourceLoc{flag}, e.reason());  // "--fusion: error: bad fusion ..."
    }
  }
  return o;
}

driver::Machine machineFrom(const ProgramArgs& args) {
  return tune::machineFor(args.hardwareFile.empty()
                              ? target::detectHost()
                              : target::hardwareFromJson(readTextFile(args.hardwareFile), args.hardwareFile));
}

void printExplanation(const ProgramArgs& args, const driver::CompiledProgram& compiled, std::ostream& out) {
  if (args.explain == "json")
    out << compiled.remarks.json();
  else if (!args.explain.empty())
    out << compiled.remarks.text();
}

void printDiagnostics(const ProgramArgs& args, const driver::CompiledProgram& compiled) {
  for (const auto& w : compiled.warnings) std::cerr << "tessel: warning: " << w << "\n";
  if (!args.timePasses) return;
  double total = 0;
  for (const auto& [name, seconds] : compiled.passSeconds) total += seconds;
  std::cerr << "tessel: compile stages (wall ms):\n";
  for (const auto& [name, seconds] : compiled.passSeconds)
    std::cerr << "  " << std::left << std::setw(22) << name << std::right << std::fixed
              << std::setprecision(1) << std::setw(9) << seconds * 1e3 << "\n";
  std::cerr << "  " << std::left << std::setw(22) << "total" << std::right << std::setw(9) << total * 1e3
            << "\n"
            << std::defaultfloat;
}

}  // namespace tessel::cli
