// The options every command that compiles a program shares: the file, its
// entry and sizes, and the compilation options (--fusion, --schedule, tiling,
// the machine) and --explain.
#pragma once

#include <CLI/CLI.hpp>

#include "LoadProgram.h"
#include "driver/Options.h"

namespace tessel::cli {

struct ProgramArgs {
  ProgramSpec spec;
  std::string fusion = "smart";
  std::string scheduleFile;
  std::string tiling = "auto";
  std::string vectorize = "on";
  std::string tiles;         // policy text, or @FILE
  std::string hardwareFile;  // JSON machine description
  bool explain = false;
};

void addProgramOptions(CLI::App* cmd, ProgramArgs& args);
// Reads the --schedule, --tiles and --hardware files; UserError for bad values.
driver::CompileOptions compileOptionsFrom(const ProgramArgs& args);

}  // namespace tessel::cli
