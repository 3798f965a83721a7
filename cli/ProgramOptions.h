// The options every command that compiles a program shares: the file, its
// entry and sizes, and the compilation options (--fusion, --schedule).
#pragma once

#include <CLI/CLI.hpp>

#include "LoadProgram.h"
#include "driver/Options.h"

namespace tessel::cli {

struct ProgramArgs {
  ProgramSpec spec;
  std::string fusion = "smart";
  std::string scheduleFile;
};

void addProgramOptions(CLI::App* cmd, ProgramArgs& args);
// Reads the --schedule file; UserError for bad values.
driver::CompileOptions compileOptionsFrom(const ProgramArgs& args);

}  // namespace tessel::cli
