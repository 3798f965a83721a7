#include "bench/CaseProgram.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "front/Frontend.h"

namespace tessel::bench {

namespace {

std::string readProgram(const SuiteCase& c) {
  std::ifstream f(c.program, std::ios::binary);
  if (!f) throw UserError(c.programLoc, "cannot open program '" + c.program + "'", c.lineText);
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

CaseProgram loadCaseProgram(const SuiteCase& c) {
  front::Source src{c.program, readProgram(c)};
  auto module = front::parse(src);
  auto defs = front::defNames(*module);
  if (!c.entry.empty() && std::find(defs.begin(), defs.end(), c.entry) == defs.end())
    throw UserError(c.entryLoc, "no def '" + c.entry + "' in " + c.program + " (defs: " + joined(defs) + ")",
                    c.lineText);
  if (c.entry.empty() && defs.size() > 1)
    throw UserError(c.programLoc,
                    c.program + " holds several defs (" + joined(defs) + "): pick one with entry=NAME",
                    c.lineText);
  std::string entry = c.entry.empty() ? defs.front() : c.entry;
  auto names = front::sizeNames(*module, entry);
  std::map<std::string, int64_t> defaults = front::defaultSizes(src);
  CaseProgram out;
  for (const auto& n : names)
    if (auto it = defaults.find(n); it != defaults.end()) out.sizes[n] = it->second;
  for (const auto& s : c.sizes) {
    if (std::find(names.begin(), names.end(), s.name) == names.end())
      throw UserError(s.loc,
                      "'" + entry + "' has no size " + s.name +
                          (names.empty() ? " (it has no sizes)" : " (sizes: " + joined(names) + ")"),
                      c.lineText);
    out.sizes[s.name] = s.value;
  }
  for (const auto& n : names)
    if (!out.sizes.count(n))
      throw UserError(c.programLoc, "size " + n + " of '" + entry + "' has no value: add " + n + "=VALUE",
                      c.lineText);
  out.program = front::lower(*module, entry, out.sizes);
  return out;
}

}  // namespace tessel::bench
