// Tensor Comprehensions front end: parses .tc source, binds sizes and lowers
// one `def` to a te::Program (range inference included). Every user mistake
// is a UserError with the line, column and source line of the culprit.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessel/te.h"

namespace tessel::front {

struct Source {
  std::string file;  // may be empty: locations then carry no file part
  std::string text;
};

class Module;  // a parsed file: one or more defs, plus the source text

// Throws UserError on lexical and syntax errors (and on TC constructs Tessel
// rejects at the syntax level: def calls, '<=>').
std::shared_ptr<const Module> parse(const Source& src);

std::vector<std::string> defNames(const Module& m);  // in file order
// Size variables of `entry`'s signature, in order of first appearance.
// Empty entry = the only def (UserError when there are several).
std::vector<std::string> sizeNames(const Module& m, const std::string& entry);
// Sizes from `# sizes: M=64 N=32` lines in the leading comment block.
std::map<std::string, int64_t> defaultSizes(const Source& src);

// Binds sizes and builds the te::Program of `entry` (empty = the only def),
// running te::inferRangesAndCheck. Throws UserError on unknown, missing or
// non-positive sizes and on every semantic error of the def.
te::Program lower(const Module& m, const std::string& entry, const std::map<std::string, int64_t>& sizes);

}  // namespace tessel::front
