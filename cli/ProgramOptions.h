// The options every command that compiles a program shares: the file, its
// entry and sizes, and the compilation options (--fusion, --schedule, tiling,
// the machine), --explain and --time-passes.
#pragma once

#include <CLI/CLI.hpp>

#include "LoadProgram.h"
#include "driver/Compile.h"

namespace tessel::cli {

struct ProgramArgs {
  ProgramSpec spec;
  std::string fusion = "basteln";
  std::string bastelnRedundancy;  // "" = the default
  std::string scheduleFile;
  std::string scheduler = "isl";
  std::string scheduleConstraintsFile;
  std::string tiling = "auto";
  std::string vectorize = "on";
  std::string transposes = "registers";
  std::string promote = "auto";
  std::string streamStores = "auto";
  std::string inlineElementwise = "cheap";
  std::string tiles;   // policy text, or @FILE
  std::string scheme;  // TTILE scheme text, or @FILE, or "search"
  int schemeBudget = 200;
  std::string schemeClasses = "model";
  std::string constantInputs;  // "all" or names
  std::string hardwareFile;  // JSON machine description
  double scheduleTimeLimitSeconds = 10;
  double fusionCheckTimeLimitSeconds = 30;
  bool explain = false;
  bool timePasses = false;
};

void addProgramOptions(CLI::App* cmd, ProgramArgs& args);
// Reads the --schedule, --tiles and --hardware files; UserError for bad values.
driver::CompileOptions compileOptionsFrom(const ProgramArgs& args);
// Prints the compilation's warnings (compiled, but not as asked) and, with
// --time-passes, each stage's time to stderr.
void printDiagnostics(const ProgramArgs& args, const driver::CompiledProgram& compiled);

}  // namespace tessel::cli
