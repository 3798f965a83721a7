// Shared by the commands: read a .tc file, pick the entry, bind sizes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessel/te.h"

namespace tessel::cli {

struct ProgramSpec {
  std::string file;
  std::string entry;                  // "" = the only def
  std::vector<std::string> sizeArgs;  // "NAME=VALUE" from --size
};

struct LoadedProgram {
  te::Program program;
  std::map<std::string, int64_t> sizes;  // as bound (defaults from `# sizes:` + --size)
};

// The whole file; UserError if it cannot be read.
std::string readTextFile(const std::string& path);

// Throws UserError for a missing file, malformed --size, unknown size name,
// non-positive size, and every front-end error.
LoadedProgram loadProgram(const ProgramSpec& spec);

}  // namespace tessel::cli
