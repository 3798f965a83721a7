#include "tessel/error.h"

#include <algorithm>

namespace tessel {

namespace {
std::string prefix(const SourceLoc& loc) {
  std::string s;
  if (!loc.file.empty()) s += loc.file + ":";
  if (loc.known()) s += std::to_string(loc.line) + ":" + std::to_string(loc.col) + ":";
  if (!s.empty()) s += " ";
  return s;
}
}  // namespace

SourceLoc locationInText(const std::string& file, const std::string& text, size_t offset) {
  offset = std::min(offset, text.size());
  SourceLoc loc{file, 1, 1};
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++loc.line;
      loc.col = 1;
    } else {
      ++loc.col;
    }
  }
  return loc;
}

UserError::UserError(SourceLoc loc, const std::string& reason, std::string sourceLine)
    : std::runtime_error(prefix(loc) + "error: " + reason),
      loc_(std::move(loc)),
      reason_(reason),
      sourceLine_(std::move(sourceLine)) {}

std::string UserError::render() const {
  std::string s = what();
  if (sourceLine_.empty()) return s;
  // Long lines are cut to a window around the column, marked with "...".
  constexpr int kHalfWindow = 60;
  std::string shown = sourceLine_;
  int caretCol = loc_.col;
  if (static_cast<int>(shown.size()) > 2 * kHalfWindow + 20) {
    int start = std::max(0, loc_.col - 1 - kHalfWindow);
    bool cutLeft = start > 0, cutRight = start + 2 * kHalfWindow < static_cast<int>(shown.size());
    shown = (cutLeft ? "..." : "") + shown.substr(static_cast<size_t>(start), 2 * kHalfWindow) +
            (cutRight ? "..." : "");
    caretCol = loc_.col - start + (cutLeft ? 3 : 0);
  }
  // Control bytes and binary garbage would corrupt the terminal; one byte
  // stays one column so the caret still lines up.
  for (char& c : shown)
    if (c != '\t' && (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)) c = '?';
  s += "\n  " + shown + "\n  ";
  // Keep tabs so the caret lines up with the source line as printed.
  for (int i = 1; i < caretCol && i <= static_cast<int>(shown.size()); ++i)
    s += shown[i - 1] == '\t' ? '\t' : ' ';
  s += "^";
  return s;
}

InternalError::InternalError(const std::string& pass, const std::string& what)
    : std::logic_error("internal error in " + pass + ": " + what) {}

void userError(const std::string& reason) { throw UserError({}, reason); }
void userError(const SourceLoc& loc, const std::string& reason) { throw UserError(loc, reason); }

}  // namespace tessel
