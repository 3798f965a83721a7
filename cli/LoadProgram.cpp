#include "LoadProgram.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "front/Frontend.h"

namespace tessel::cli {

std::string readTextFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) userError("'" + path + "' is a directory, not a file");
  std::ifstream f(path, std::ios::binary);
  if (!f) userError("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) userError("cannot read '" + path + "'");
  return ss.str();
}

namespace {

std::pair<std::string, int64_t> parseSizeArg(const std::string& arg) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    userError("bad --size '" + arg + "': expected NAME=VALUE, e.g. --size M=64");
  std::string name = arg.substr(0, eq), value = arg.substr(eq + 1);
  size_t pos = 0;
  long long v = 0;
  try {
    v = std::stoll(value, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (pos != value.size()) userError("bad --size '" + arg + "': '" + value + "' is not an integer");
  if (v <= 0) userError("bad --size '" + arg + "': sizes must be positive");
  return {name, v};
}

}  // namespace

LoadedProgram loadProgram(const ProgramSpec& spec) {
  front::Source src{spec.file, readTextFile(spec.file)};
  auto module = front::parse(src);
  std::map<std::string, int64_t> sizes = front::defaultSizes(src);
  auto names = front::sizeNames(*module, spec.entry);
  // A size of another def in the same file is accepted (and unused), so one
  // --size list can serve every def of a file; anything else is a typo.
  std::set<std::string> fileSizes;
  for (const auto& def : front::defNames(*module))
    for (const auto& n : front::sizeNames(*module, def)) fileSizes.insert(n);
  for (const auto& arg : spec.sizeArgs) {
    auto [name, value] = parseSizeArg(arg);
    if (!fileSizes.count(name)) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      userError("unknown size '" + name + "' in --size (" +
                (list.empty() ? "the def has no sizes" : "sizes: " + list) + ")");
    }
    sizes[name] = value;
  }
  // Defaults from the comment may name sizes of other defs in the same file.
  std::map<std::string, int64_t> bound;
  for (const auto& n : names) {
    auto it = sizes.find(n);
    if (it != sizes.end()) bound[n] = it->second;
  }
  LoadedProgram out;
  out.program = front::lower(*module, spec.entry, bound);
  out.sizes = bound;
  return out;
}

}  // namespace tessel::cli
