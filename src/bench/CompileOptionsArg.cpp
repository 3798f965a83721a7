#include "bench/CompileOptionsArg.h"

#include <cctype>
#include <set>

#include "cli/LoadProgram.h"
#include "microkernel/Scheme.h"
#include "tile/TilePolicy.h"
#include "tune/SchemeSearch.h"

namespace tessel::bench {

namespace {

constexpr const char* kOrigin = "--options";
constexpr const char* kExpected =
    "fusion=none|min|smart|max|basteln, scheduler=isl|tessel, constraints=auto|@FILE, redundancy=PERCENT, "
    "tiling=auto|off, "
    "vectorize=on|off, transposes=registers|off, "
    "promote=auto|all|off, inline=on|cheap|off, "
    "stream-stores=auto|always|off, scheme=search|SCHEME, scheme-budget=N, scheme-classes=measure|model, "
    "constant-inputs=all|NAME+NAME or "
    "tiles=POLICY";

bool isSeparator(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ','; }
bool isKeyStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isKeyChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

// Line `line` (1-based) of `text`; "" past its end.
std::string lineOf(const std::string& text, int line) {
  size_t begin = 0;
  for (int l = 1; l < line && begin != std::string::npos; ++l) {
    begin = text.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  if (begin == std::string::npos) return "";
  size_t end = text.find('\n', begin);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

class OptionListParser {
 public:
  OptionListParser(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}

  driver::CompileOptions parse() {
    driver::CompileOptions options;
    std::set<std::string> given;
    for (size_t pos = skipSeparators(0); pos < text_.size(); pos = skipSeparators(pos)) {
      size_t keyEnd = pos;
      while (keyEnd < text_.size() && text_[keyEnd] != '=' && !isSeparator(text_[keyEnd])) ++keyEnd;
      std::string key = text_.substr(pos, keyEnd - pos);
      if (keyEnd == text_.size() || text_[keyEnd] != '=')
        fail(pos, "expected KEY=VALUE, not '" + key + "' (" + kExpected + ")");
      if (key != "fusion" && key != "scheduler" && key != "constraints" && key != "redundancy" &&
          key != "tiling" && key != "vectorize" && key != "transposes" && key != "promote" &&
          key != "stream-stores" && key != "inline" && key != "tiles" && key != "scheme" &&
          key != "scheme-budget" && key != "scheme-classes" && key != "constant-inputs")
        fail(pos, "unknown option '" + key + "' (expected " + kExpected + ")");
      if (!given.insert(key).second) fail(pos, key + " is given twice");
      size_t valueStart = keyEnd + 1;
      size_t valueEnd = key == "tiles" || key == "scheme" ? policyEnd(valueStart) : wordEnd(valueStart);
      std::string value = text_.substr(valueStart, valueEnd - valueStart);
      if (key == "fusion") {
        options.fusion = located(valueStart, [&] { return driver::parseFusion(value); });
      } else if (key == "scheduler") {
        options.scheduler = located(valueStart, [&] { return driver::parseScheduler(value); });
      } else if (key == "constraints") {
        // Constraint trees span lines: a file, or the tree paper 004's scenarios build.
        if (value == "auto")
          options.scheduleConstraints = driver::CompileOptions::ConstraintsFile{"auto", "", true};
        else if (!value.empty() && value[0] == '@')
          options.scheduleConstraints = driver::CompileOptions::ConstraintsFile{
              value.substr(1), located(valueStart, [&] { return cli::readTextFile(value.substr(1)); })};
        else
          fail(valueStart,
               "bad constraints '" + value + "' (expected constraints=auto or constraints=@FILE)");
      } else if (key == "redundancy") {
        options.bastelnRedundancy =
            located(valueStart, [&] { return driver::parsePercent(value, "redundancy"); });
      } else if (key == "tiling") {
        if (value != "auto" && value != "off")
          fail(valueStart, "bad tiling '" + value + "' (expected tiling=auto or tiling=off)");
        options.autoTiling = value == "auto";
      } else if (key == "vectorize") {
        if (value != "on" && value != "off")
          fail(valueStart, "bad vectorize '" + value + "' (expected vectorize=on or vectorize=off)");
        options.vectorize = value == "on";
      } else if (key == "transposes") {
        if (value != "registers" && value != "off")
          fail(valueStart,
               "bad transposes '" + value + "' (expected transposes=registers or transposes=off)");
        options.registerTransposes = value == "registers";
      } else if (key == "inline") {
        if (value != "on" && value != "cheap" && value != "off")
          fail(valueStart, "bad inline '" + value + "' (expected inline=on, inline=cheap or inline=off)");
        options.inlineElementwise = value == "on";
        options.recomputeCheap = value != "off";
      } else if (key == "promote") {
        options.promotion = located(valueStart, [&] { return driver::parsePromotion(value); });
      } else if (key == "stream-stores") {
        options.streamingStores = located(valueStart, [&] { return driver::parseStreamingStores(value); });
      } else if (key == "scheme") {
        // A scheme fits one program: suites mostly ask for the search, which finds one per case
        // (or auto, the model's choice, or none).
        // A scheme (for a one-program suite) runs to the next KEY=, like a policy; its syntax is checked
        // here.
        if (!tune::asksForSearch(value) && !tune::asksForModelChoice(value) && !tune::asksForNoScheme(value))
          microkernel::parseScheme(text_.substr(0, valueEnd), origin_,
                                   valueStart + microkernel::splitSelection(value).second);
        options.scheme.origin = origin_;
        options.scheme.text = value;
      } else if (key == "constant-inputs") {
        options.constantInputs =
            located(valueStart, [&] { return driver::parseConstantInputs(value, "constant-inputs"); });
      } else if (key == "scheme-budget") {
        auto budget = cli::parseSizeValue(value);
        if (!budget || *budget < 1 || *budget > 100000)
          fail(valueStart, "bad scheme-budget '" + value + "' (expected a count from 1 to 100000)");
        options.schemeBudget = static_cast<int>(*budget);
      } else if (key == "scheme-classes") {
        if (value != "measure" && value != "model")
          fail(valueStart, "bad scheme-classes '" + value + "' (expected measure or model)");
        options.schemeClasses = value == "model" ? driver::CompileOptions::SchemeClasses::Model
                                                 : driver::CompileOptions::SchemeClasses::Measure;
      } else {
        options.tiles = tilePolicy(value, valueStart);
      }
      pos = valueEnd;
    }
    return options;
  }

 private:
  size_t skipSeparators(size_t pos) const {
    while (pos < text_.size() && isSeparator(text_[pos])) ++pos;
    return pos;
  }

  size_t wordEnd(size_t pos) const {
    while (pos < text_.size() && !isSeparator(text_[pos])) ++pos;
    return pos;
  }

  // A policy runs to the next word that starts KEY= (the policy language has
  // no '='), without the separators before it.
  size_t policyEnd(size_t start) const {
    size_t end = text_.size();
    for (size_t pos = start + 1; pos < text_.size(); ++pos) {
      if (!isSeparator(text_[pos - 1]) || !isKeyStart(text_[pos])) continue;
      size_t keyEnd = pos;
      while (keyEnd < text_.size() && isKeyChar(text_[keyEnd])) ++keyEnd;
      if (keyEnd < text_.size() && text_[keyEnd] == '=') {
        end = pos;
        break;
      }
    }
    while (end > start && isSeparator(text_[end - 1])) --end;
    return end;
  }

  SourceLoc locationOf(size_t offset) const { return locationInText(origin_, text_, offset); }

  [[noreturn]] void failAt(const SourceLoc& loc, const std::string& reason) const {
    throw UserError(loc, reason, lineOf(text_, loc.line));
  }
  [[noreturn]] void fail(size_t offset, const std::string& reason) const {
    failAt(locationOf(offset), reason);
  }

  // Runs `parse`, moving an unlocated UserError it throws to `offset`.
  template <typename Parse>
  auto located(size_t offset, const Parse& parse) const -> decltype(parse()) {
    try {
      return parse();
    } catch (const UserError& e) {
      if (e.loc().known()) throw;
      fail(offset, e.reason());
    }
  }

  // A position in a policy that starts at `valueStart`, as a position in the option text.
  SourceLoc inText(const SourceLoc& inPolicy, size_t valueStart) const {
    SourceLoc value = locationOf(valueStart);
    if (!inPolicy.known()) return value;
    return {origin_, value.line + inPolicy.line - 1,
            inPolicy.line == 1 ? value.col + inPolicy.col - 1 : inPolicy.col};
  }

  tile::TilePolicy tilePolicy(const std::string& value, size_t valueStart) const {
    if (!value.empty() && value[0] == '@') {
      std::string file = value.substr(1);
      std::string policyText = located(valueStart, [&] { return cli::readTextFile(file); });
      return tile::parseTilePolicy(policyText, file);  // its errors point into the file
    }
    tile::TilePolicy policy;
    try {
      policy = tile::parseTilePolicy(value, origin_);
    } catch (const UserError& e) {
      failAt(inText(e.loc(), valueStart), e.reason());
    }
    for (tile::StatementTiling& statement : policy.statements) {
      statement.loc = inText(statement.loc, valueStart);
      for (tile::DimTiling& dim : statement.dims)
        for (tile::LevelTile& level : dim.levels) level.loc = inText(level.loc, valueStart);
    }
    return policy;
  }

  const std::string& text_;
  std::string origin_;
};

}  // namespace

driver::CompileOptions parseCompileOptionsArg(const std::string& text, const std::string& origin) {
  return OptionListParser(text, origin).parse();
}

UserError withCompileOptionsLine(const UserError& e, const std::string& text) {
  if (e.hasSourceLine() || e.loc().file != kOrigin || !e.loc().known()) return e;
  return e.withSourceLine(lineOf(text, e.loc().line));
}

}  // namespace tessel::bench
