// The options every command that compiles a program shares: the file, its
// entry and sizes, and the compilation options (--fusion, --schedule, tiling,
// the machine), --explain and --time-passes.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <ostream>
#include <string>

#include "driver/Compile.h"
#include "front/LoadProgram.h"

namespace tessel::cli {

struct ProgramArgs {
  front::ProgramSpec spec;
  // The compile options as written, keyed by their row of driver/OptionTable.h ("" or absent: not given).
  std::map<std::string, std::string> options;
  std::string hardwareFile;  // JSON machine description
  std::string explain;       // "" (not asked), "text" or "json"
  bool timePasses = false;
};

void addProgramOptions(CLI::App* cmd, ProgramArgs& args);
// The options of driver/OptionTable.h the command line gives; reads the files
// they name (--schedule, --tiles @FILE, ...); UserError for bad values.
driver::CompileOptions compileOptionsFrom(const ProgramArgs& args);
// The machine described by --hardware, else this one, with its stored
// micro-kernel table (tune/MicroKernelStore.h).
driver::Machine machineFrom(const ProgramArgs& args);
// Prints the compilation's warnings (compiled, but not as asked) and, with
// --time-passes, each stage's time to stderr.
void printDiagnostics(const ProgramArgs& args, const driver::CompiledProgram& compiled);
// With --explain, the compilation's remarks: their lines, or with
// --explain=json all their fields.
void printExplanation(const ProgramArgs& args, const driver::CompiledProgram& compiled, std::ostream& out);

}  // namespace tessel::cli
