#include "driver/OptionList.h"

#include <cctype>
#include <set>

#include "driver/OptionTable.h"
#include "tile/TilePolicy.h"

namespace tessel::driver {

namespace {

constexpr const char* kOrigin = "--options";

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

  CompileOptions parse() {
    CompileOptions options;
    std::set<std::string> given;
    for (size_t pos = skipSeparators(0); pos < text_.size(); pos = skipSeparators(pos)) {
      size_t keyEnd = pos;
      while (keyEnd < text_.size() && text_[keyEnd] != '=' && !isSeparator(text_[keyEnd])) ++keyEnd;
      std::string key = text_.substr(pos, keyEnd - pos);
      if (keyEnd == text_.size() || text_[keyEnd] != '=')
        fail(pos, "expected KEY=VALUE, not '" + key + "' (keys: " + compileOptionKeys() + ")");
      const OptionRow* row = compileOptionRow(key);
      if (!row) fail(pos, "unknown option '" + key + "' (keys: " + compileOptionKeys() + ")");
      if (!given.insert(row->key).second) fail(pos, row->key + " is given twice");
      size_t valueStart = keyEnd + 1;
      size_t valueEnd = row->spansWords ? policyEnd(valueStart) : wordEnd(valueStart);
      std::string value = text_.substr(valueStart, valueEnd - valueStart);
      try {
        row->parse(options, value, origin_);
      } catch (const UserError& e) {
        // Unlocated: at the value; located in the value: there in the text; in a file: as it is.
        if (!e.loc().known()) fail(valueStart, e.reason());
        if (e.loc().file != origin_) throw;
        failAt(inText(e.loc(), valueStart), e.reason());
      }
      // The compiler's later errors about an inline policy point into the text too.
      if (row->key == "tiles" && value.rfind('@', 0) != 0)
        for (tile::StatementTiling& statement : options.tiles.statements) {
          statement.loc = inText(statement.loc, valueStart);
          for (tile::DimTiling& dim : statement.dims)
            for (tile::LevelTile& level : dim.levels) level.loc = inText(level.loc, valueStart);
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

  // A position in a policy that starts at `valueStart`, as a position in the option text.
  SourceLoc inText(const SourceLoc& inPolicy, size_t valueStart) const {
    SourceLoc value = locationOf(valueStart);
    if (!inPolicy.known()) return value;
    return {origin_, value.line + inPolicy.line - 1,
            inPolicy.line == 1 ? value.col + inPolicy.col - 1 : inPolicy.col};
  }

  const std::string& text_;
  std::string origin_;
};

}  // namespace

CompileOptions parseOptionList(const std::string& text, const std::string& origin) {
  return OptionListParser(text, origin).parse();
}

UserError withOptionListLine(const UserError& e, const std::string& text) {
  if (e.hasSourceLine() || e.loc().file != kOrigin || !e.loc().known()) return e;
  return e.withSourceLine(lineOf(text, e.loc().line));
}

}  // namespace tessel::driver
