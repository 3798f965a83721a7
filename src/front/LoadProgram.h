// What the commands and `tessel bench`'s suites share: read a .tc file,
// pick the entry, bind sizes (the file's `# sizes:` defaults, then the
// user's), lower. Mistakes in the entry or the sizes are reported where the
// user wrote them: a suite line (located, shown under the message) or the
// command line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessel/error.h"
#include "tessel/te.h"

namespace tessel::front {

// One size the user binds: NAME=VALUE from --size or a suite line.
struct SizeArg {
  std::string name;
  int64_t value = 0;
  SourceLoc loc;  // where NAME is written; unknown on the command line
};

// A program as the user asks for it, and how to report mistakes in the asking.
struct ProgramRequest {
  std::string file;
  std::string entry;  // "" = the only def
  std::vector<SizeArg> sizes;
  // Where the file and the entry are named, and the text of that line; on
  // the command line the file alone (errors then name it, unlocated).
  SourceLoc fileLoc;
  SourceLoc entryLoc;
  std::string lineText;
  // How the user writes an entry and a size there, for hints.
  std::string entrySyntax = "--entry NAME";
  std::string sizePrefix = "--size ";  // what precedes NAME=VALUE
};

struct LoadedProgram {
  te::Program program;
  std::map<std::string, int64_t> sizes;  // every size of the entry, as bound
};

// The command-line form: --size arguments still as text.
struct ProgramSpec {
  std::string file;
  std::string entry;                  // "" = the only def
  std::vector<std::string> sizeArgs;  // "NAME=VALUE" from --size
};

// A size's value as written ("64"): nullopt unless the whole text is a
// decimal integer that fits (no sign but '-', no spaces). Callers say why
// they reject it, and check it is positive.
std::optional<int64_t> parseSizeValue(const std::string& text);

// Throws UserError for an unreadable file, an unknown or ambiguous entry, a
// size no def of the file has (a size of another def of the same file is
// accepted and unused, so one size list can serve every def), a size without
// a value, and every front-end error (at the .tc file).
LoadedProgram loadProgram(const ProgramRequest& request);
// As above, after parsing the --size arguments (malformed, non-integer or
// non-positive values are UserErrors).
LoadedProgram loadProgram(const ProgramSpec& spec);

}  // namespace tessel::front
