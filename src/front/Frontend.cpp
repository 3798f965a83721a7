// The public entry points of the TC front end (see Frontend.h).
#include "front/Frontend.h"

#include <cctype>

#include "front/Ast.h"
#include "front/Lexer.h"
#include "front/Lower.h"
#include "front/Parser.h"

namespace tessel::front {

namespace {

const ast::Def& pickDef(const Module& m, const std::string& entry) {
  std::string names;
  for (const auto& d : m.defs) names += (names.empty() ? "" : ", ") + d.name;
  SourceLoc fileOnly{m.source.file};
  if (entry.empty()) {
    if (m.defs.size() == 1) return m.defs.front();
    throw UserError(fileOnly, "the file defines several defs (" + names +
                                  "); name the one to compile (--entry NAME on the command line)");
  }
  if (const ast::Def* d = m.find(entry)) return *d;
  throw UserError(fileOnly, "no def named '" + entry + "' (the file defines " + names + ")");
}

bool identStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool identChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Parses the entries after "sizes:" on line `line` starting at byte `pos`.
void parseSizesLine(const Source& src, const std::string& text, int line, size_t pos,
                    std::map<std::string, int64_t>& out) {
  auto fail = [&](size_t at, const std::string& msg) {
    throw UserError({src.file, line, static_cast<int>(at) + 1}, msg, text);
  };
  while (pos < text.size()) {
    char c = text[pos];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
      ++pos;
      continue;
    }
    size_t start = pos;
    if (!identStart(c)) fail(pos, "expected NAME=VALUE in the sizes comment");
    while (pos < text.size() && identChar(text[pos])) ++pos;
    std::string name = text.substr(start, pos - start);
    if (pos >= text.size() || text[pos] != '=') fail(pos, "expected '=' after size name '" + name + "'");
    size_t vstart = ++pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
    if (vstart == pos) fail(vstart, "expected a positive integer value for size '" + name + "'");
    if (pos < text.size() && !std::isspace(static_cast<unsigned char>(text[pos])) && text[pos] != ',')
      fail(pos, "expected a positive integer value for size '" + name + "'");
    if (pos - vstart > 10) fail(vstart, "size '" + name + "' is too large");
    if (out.count(name)) fail(start, "size '" + name + "' is given twice");
    out[name] = std::stoll(text.substr(vstart, pos - vstart));
  }
}

}  // namespace

std::shared_ptr<const Module> parse(const Source& src) { return parseModule(src); }

std::vector<std::string> defNames(const Module& m) {
  std::vector<std::string> out;
  for (const auto& d : m.defs) out.push_back(d.name);
  return out;
}

std::vector<std::string> sizeNames(const Module& m, const std::string& entry) {
  std::vector<std::string> out;
  for (const auto& [n, loc] : signatureSizes(pickDef(m, entry))) out.push_back(n);
  return out;
}

std::map<std::string, int64_t> defaultSizes(const Source& src) {
  std::map<std::string, int64_t> out;
  int lines = 1;
  for (char c : src.text) lines += c == '\n';
  for (int line = 1; line <= lines; ++line) {
    std::string text = sourceLine(src.text, line);
    size_t p = text.find_first_not_of(" \t");
    if (p == std::string::npos) continue;  // blank lines do not end the leading block
    if (text[p] != '#') break;             // the first code line does
    size_t q = text.find_first_not_of(" \t", p + 1);
    if (q != std::string::npos && text.compare(q, 6, "sizes:") == 0)
      parseSizesLine(src, text, line, q + 6, out);
  }
  return out;
}

te::Program lower(const Module& m, const std::string& entry, const std::map<std::string, int64_t>& sizes) {
  const ast::Def& def = pickDef(m, entry);
  try {
    return lowerDef(m, def, sizes);
  } catch (const UserError& e) {
    // Semantic errors carry a location only; attach the line they point at.
    if (!e.loc().known()) throw;
    throw UserError(e.loc(), e.reason(), sourceLine(m.source.text, e.loc().line));
  }
}

}  // namespace tessel::front
