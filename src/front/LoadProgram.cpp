#include "front/LoadProgram.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "front/Frontend.h"
#include "support/TextFile.h"

namespace tessel::front {

std::optional<int64_t> parseSizeValue(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return value;
}

namespace {

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

bool contains(const std::vector<std::string>& items, const std::string& item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

SizeArg parseSizeArg(const std::string& arg) {
  auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    userError("bad --size '" + arg + "': expected NAME=VALUE, e.g. --size M=64");
  std::string name = arg.substr(0, eq), value = arg.substr(eq + 1);
  std::optional<int64_t> v = parseSizeValue(value);
  if (!v) userError("bad --size '" + arg + "': '" + value + "' is not an integer");
  if (*v <= 0) userError("bad --size '" + arg + "': sizes must be positive");
  return {name, *v, {}};
}

// Reports a mistake of the request at `loc`, with the request's line when it has one.
[[noreturn]] void requestError(const ProgramRequest& request, const SourceLoc& loc,
                               const std::string& reason) {
  throw UserError(loc, reason, loc.known() ? request.lineText : std::string());
}

std::string pickEntry(const Module& module, const ProgramRequest& request) {
  auto defs = defNames(module);
  if (!request.entry.empty()) {
    if (!contains(defs, request.entry))
      requestError(request, request.entryLoc,
                   "no def '" + request.entry + "' (the program's defs: " + joined(defs) + ")");
    return request.entry;
  }
  // An empty file is the front end's error, at the file.
  if (defs.size() > 1)
    requestError(
        request, request.fileLoc,
        "the program holds several defs (" + joined(defs) + "): pick one with " + request.entrySyntax);
  return defs.empty() ? "" : defs.front();
}

}  // namespace

LoadedProgram loadProgram(const ProgramRequest& request) {
  std::string text;
  try {
    text = readTextFile(request.file);
  } catch (const UserError& e) {
    if (!request.fileLoc.known()) throw;  // the message names the file already
    requestError(request, request.fileLoc, e.reason());
  }
  Source src{request.file, text};
  auto module = parse(src);
  std::string entry = pickEntry(*module, request);
  std::vector<std::string> names = sizeNames(*module, entry);
  std::set<std::string> fileSizes;
  for (const auto& def : defNames(*module))
    for (const auto& n : sizeNames(*module, def)) fileSizes.insert(n);

  // The defaults may name sizes of other defs of the file: only the entry's are bound.
  LoadedProgram out;
  std::map<std::string, int64_t> defaults = defaultSizes(src);
  for (const auto& n : names)
    if (auto it = defaults.find(n); it != defaults.end()) out.sizes[n] = it->second;
  // A size of another def of the file is accepted and unused, so one size
  // list can serve every def; a size no def has is a typo.
  for (const SizeArg& s : request.sizes) {
    if (!fileSizes.count(s.name))
      requestError(request, s.loc,
                   "unknown size '" + s.name + "' for '" + entry + "' (" +
                       (names.empty() ? "it has no sizes" : "its sizes: " + joined(names)) + ")");
    if (contains(names, s.name)) out.sizes[s.name] = s.value;
  }
  for (const auto& n : names)
    if (!out.sizes.count(n))
      requestError(request, request.fileLoc,
                   "size " + n + " of '" + entry + "' has no value: add " + request.sizePrefix + n +
                       "=VALUE (or a '# sizes:' line to the file)");
  out.program = lower(*module, entry, out.sizes);
  return out;
}

LoadedProgram loadProgram(const ProgramSpec& spec) {
  ProgramRequest request;
  request.file = spec.file;
  request.entry = spec.entry;
  request.fileLoc = request.entryLoc = SourceLoc{spec.file};
  for (const auto& arg : spec.sizeArgs) request.sizes.push_back(parseSizeArg(arg));
  return loadProgram(request);
}

}  // namespace tessel::front
