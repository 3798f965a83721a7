// Every compile option as one row: its key (the command line's --KEY and
// `tessel bench --options KEY=VALUE`), the values it takes, what it does, how
// its text is read and how it prints. The CLI flags, the bench's --options
// keys, CompileOptions::toString and docs/cli.md all come from this table.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "driver/Options.h"

namespace tessel::driver {

struct OptionRow {
  std::string key;                   // "fusion": --fusion, fusion=
  std::vector<std::string> aliases;  // other keys --options accepts (older names)
  std::string valueSyntax;           // "none|min|smart|max|basteln", "PERCENT", "POLICY|@FILE"
  std::vector<std::string> choices;  // the accepted values when they are a fixed list
  std::string help;
  // Where the value may hold spaces and commas (a policy, a scheme): in an
  // --options list it runs to the next KEY=.
  bool spansWords = false;
  // Sets the option from `value`; a UserError naming `origin` ("--fusion",
  // "--options") when the value is bad, located within `value` where it can
  // be. Files (@FILE, or a path where the option names one) are read here.
  std::function<void(CompileOptions&, const std::string& value, const std::string& origin)> parse;
  // The value as text, parsed back to the same option; none at the default.
  std::function<std::optional<std::string>(const CompileOptions&)> print;
  // A value other than the default, for the table's round-trip test.
  std::string example;
};

const std::vector<OptionRow>& compileOptionRows();
// The row whose key or alias is `key`; null when none.
const OptionRow* compileOptionRow(const std::string& key);
// "fusion, basteln-redundancy, ..." for messages.
std::string compileOptionKeys();

}  // namespace tessel::driver
