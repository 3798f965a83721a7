#include "bench/Suite.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "front/LoadProgram.h"

namespace tessel::bench {

namespace fs = std::filesystem;

namespace {

struct Token {
  std::string text;
  int col = 0;  // 1-based
};

// Whitespace-separated words up to a '#'.
std::vector<Token> tokenize(const std::string& line) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == '#') break;
    if (std::isspace(static_cast<unsigned char>(line[i]))) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < line.size() && line[i] != '#' && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    tokens.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return tokens;
}

bool isIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

bool isCaseName(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.' && c != '+')
      return false;
  return true;
}

// A sweep family names a plot panel and a CSV field: no ':' (it ends the
// family), no ',' or quote (CSV), nothing a shell or a file name would mangle.
bool isSweepFamily(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.') return false;
  return true;
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

class SuiteParser {
 public:
  SuiteParser(const std::string& file, const PeerCatalog& catalog) : file_(file), catalog_(catalog) {}

  Suite parse(const std::string& text) {
    Suite suite;
    suite.file = file_;
    std::istringstream in(text);
    std::string line;
    std::map<std::string, int> firstLine;  // case name -> line, for duplicates
    for (int lineNo = 1; std::getline(in, line); ++lineNo) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      line_ = line;
      lineNo_ = lineNo;
      auto tokens = tokenize(line);
      if (tokens.empty()) continue;
      SuiteCase c = parseCase(tokens);
      auto [it, fresh] = firstLine.emplace(c.name, lineNo);
      if (!fresh)
        fail(tokens[0].col, "case '" + c.name + "' is already defined on line " + std::to_string(it->second));
      suite.cases.push_back(std::move(c));
    }
    return suite;
  }

 private:
  SourceLoc at(int col) const { return SourceLoc{file_, lineNo_, col}; }
  [[noreturn]] void fail(int col, const std::string& reason) const {
    throw UserError(at(col), reason, line_);
  }

  SuiteCase parseCase(const std::vector<Token>& tokens) {
    SuiteCase c;
    c.name = tokens[0].text;
    c.loc = at(tokens[0].col);
    c.lineText = line_;
    if (!isCaseName(c.name))
      fail(tokens[0].col, "bad case name '" + c.name + "' (letters, digits and _ - . + only)");
    if (tokens.size() < 2 || tokens[1].text.find('=') != std::string::npos)
      fail(tokens.size() < 2 ? static_cast<int>(line_.size()) + 1 : tokens[1].col,
           "expected the program's path after the case name, e.g. 'matmul_1024 examples/matmul.tc M=1024'");
    c.programLoc = at(tokens[1].col);
    c.program = resolveProgram(tokens[1]);
    std::set<std::string> seenSizes;
    for (size_t i = 2; i < tokens.size(); ++i) {
      const Token& t = tokens[i];
      auto eq = t.text.find('=');
      if (eq == std::string::npos || eq == 0)
        fail(t.col, "expected SIZE=VALUE, entry=DEF, peers=FAMILY.OP,... or sweep=FAMILY:X but found '" +
                        t.text + "'");
      std::string key = t.text.substr(0, eq), value = t.text.substr(eq + 1);
      int valueCol = t.col + static_cast<int>(eq) + 1;
      if (key == "entry") {
        if (!isIdentifier(value)) fail(valueCol, "expected a def name after 'entry='");
        if (!c.entry.empty()) fail(t.col, "entry is given twice");
        c.entry = value;
        c.entryLoc = at(valueCol);
      } else if (key == "peers") {
        parsePeers(value, valueCol, c.peers);
      } else if (key == "sweep") {
        if (!c.sweep.empty()) fail(t.col, "sweep is given twice");
        parseSweep(value, valueCol, c);
      } else {
        if (!isIdentifier(key)) fail(t.col, "bad size name '" + key + "'");
        if (!seenSizes.insert(key).second) fail(t.col, "size " + key + " is given twice");
        c.sizes.push_back({key, parseSize(key, value, valueCol), at(t.col)});
      }
    }
    return c;
  }

  int64_t parseSize(const std::string& name, const std::string& value, int col) const {
    std::optional<int64_t> v = front::parseSizeValue(value);
    if (!v) fail(col, "bad size " + name + "='" + value + "': expected a positive integer");
    if (*v <= 0) fail(col, "bad size " + name + "='" + value + "': sizes must be positive");
    return *v;
  }

  // FAMILY:X, each part checked at its own column.
  void parseSweep(const std::string& value, int col, SuiteCase& c) const {
    auto colon = value.find(':');
    std::string family = value.substr(0, colon);
    if (family.empty())
      fail(col, "expected FAMILY:X after 'sweep=', e.g. sweep=mm_k256:1009 (the family, then the point's X)");
    if (!isSweepFamily(family))
      fail(col, "bad sweep family '" + family + "' (letters, digits and _ - . only)");
    int xCol = col + static_cast<int>(family.size()) + 1;
    if (colon == std::string::npos)
      fail(xCol - 1, "expected ':X' after the sweep family '" + family + "', e.g. sweep=" + family + ":1009");
    std::string x = value.substr(colon + 1);
    if (x.empty()) fail(xCol, "expected the sweep's X after 'sweep=" + family + ":', a positive integer");
    std::optional<int64_t> v = front::parseSizeValue(x);
    if (!v || *v <= 0) fail(xCol, "bad sweep X '" + x + "': expected a positive integer");
    c.sweep = family;
    c.sweepX = *v;
    c.sweepLoc = at(col);
  }

  void parsePeers(const std::string& list, int col, std::vector<SuitePeer>& peers) const {
    if (list.empty()) fail(col, "expected FAMILY.OP[,FAMILY.OP...] after 'peers='");
    size_t start = 0;
    while (start <= list.size()) {
      size_t comma = list.find(',', start);
      if (comma == std::string::npos) comma = list.size();
      std::string item = list.substr(start, comma - start);
      int itemCol = col + static_cast<int>(start);
      peers.push_back(checkPeer(item, itemCol));
      for (size_t i = 0; i + 1 < peers.size(); ++i)
        if (peers[i].qualified() == peers.back().qualified())
          fail(itemCol, "peer " + item + " is listed twice");
      start = comma + 1;
    }
  }

  SuitePeer checkPeer(const std::string& item, int col) const {
    std::vector<std::string> families;
    for (const auto& [f, ops] : catalog_) families.push_back(f);
    auto dot = item.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == item.size())
      fail(col, "bad peer '" + item +
                    "': expected FAMILY.OP, e.g. onednn.matmul (families: " + joined(families) + ")");
    std::string family = item.substr(0, dot), op = item.substr(dot + 1);
    auto it = catalog_.find(family);
    if (it == catalog_.end())
      fail(col, "unknown peer family '" + family + "' (families: " + joined(families) + ")");
    bool known = false;
    for (const auto& o : it->second) known = known || o == op;
    if (!known)
      fail(col + static_cast<int>(dot) + 1,
           "unknown peer operator '" + item + "' (" + family + " has: " + joined(it->second) + ")");
    return {family, op, at(col)};
  }

  // Next to the suite file first, then in each folder above it, then in the working folder.
  std::string resolveProgram(const Token& t) const {
    fs::path given(t.text);
    std::error_code ec;
    if (given.is_absolute()) {
      if (fs::is_regular_file(given, ec)) return given.string();
      fail(t.col, "program '" + t.text + "' not found");
    }
    fs::path dir = fs::absolute(fs::path(file_), ec).parent_path();
    for (fs::path d = dir;; d = d.parent_path()) {
      fs::path candidate = d / given;
      if (fs::is_regular_file(candidate, ec)) return candidate.lexically_normal().string();
      if (d == d.parent_path()) break;
    }
    // Last, the working folder: a suite kept elsewhere may name repository paths.
    if (fs::is_regular_file(given, ec)) return fs::absolute(given, ec).lexically_normal().string();
    fail(t.col, "program '" + t.text +
                    "' not found next to the suite file, in a folder above it or in the working folder");
  }

  std::string file_;
  const PeerCatalog& catalog_;
  std::string line_;
  int lineNo_ = 0;
};

}  // namespace

Suite parseSuite(const std::string& file, const std::string& text, const PeerCatalog& catalog) {
  return SuiteParser(file, catalog).parse(text);
}

Suite loadSuite(const std::string& file, const PeerCatalog& catalog) {
  std::error_code ec;
  if (fs::is_directory(file, ec)) userError("'" + file + "' is a directory, not a suite file");
  std::ifstream f(file, std::ios::binary);
  if (!f) userError("cannot open suite '" + file + "'");
  std::ostringstream text;
  text << f.rdbuf();
  if (f.bad()) userError("cannot read suite '" + file + "'");
  return parseSuite(file, text.str(), catalog);
}

}  // namespace tessel::bench
